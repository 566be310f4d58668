// A job's progress bar in a real browser (system Chromium through playwright-core) against a real
// Patchbay and the sandbox task-board: deliveries to an agent that answers 500 end dead; the
// Deliveries view filtered to dead ones offers to replay them all, and its bar follows the job to
// its end, saying what GET /v1/jobs/{id} says; the agent, answering again, receives each of them.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { eventually, Receiver } from '../helpers/receiver.ts'
import { taskboardRest } from '../helpers/taskboard.ts'
import {
  browserUnavailableReason,
  collectPageErrors,
  ensureDashboardBuilt,
  launchBrowser,
  signIn,
} from './browser.ts'
import { type DashboardService, startDashboardService } from './service.ts'

const skip = browserUnavailableReason()
const N = 12

describe('a replay of dead deliveries with its progress bar (browser)', { skip: skip ?? false }, () => {
  let svc: DashboardService
  let browser: Browser
  let page: Page
  let errors: string[]
  let receiver: Receiver
  let agentId = ''

  before(async () => {
    await ensureDashboardBuilt()
    receiver = await new Receiver().start()
    receiver.failNext = 1_000_000
    svc = await startDashboardService({
      PATCHBAY_DELIVERY_RETRY_SCHEDULE_MS: '10',
      PATCHBAY_DELIVERY_SCAN_MS: '25',
    })
    const demo = svc.taskboard.demo
    const conn = (
      await svc.api('POST', '/v1/connections', {
        connector: 'taskboard',
        authMethod: 'api_key_token',
        credentials: { key: demo.key, token: demo.token, secret: demo.secret },
      })
    ).body.id
    const agent = await svc.api('POST', '/v1/agents', {
      name: 'Down for a while',
      scope: { boards: [demo.boardId] },
      connectionIds: [conn],
      delivery: { type: 'webhook', url: receiver.url },
    })
    agentId = agent.body.id
    const trig = await svc.api('POST', `/v1/agents/${agentId}/triggers`, {
      trigger: 'taskboard.new_card',
      connectionId: conn,
      config: { idBoard: demo.boardId },
    })
    assert.equal(trig.status, 201, JSON.stringify(trig.body))
    for (let i = 0; i < N; i++)
      await taskboardRest(svc.taskboard, 'POST', '/1/cards', { idList: demo.listIds[0], name: `Dead ${i}` })
    await eventually(
      async () => (await svc.api('GET', `/v1/deliveries?status=dead&limit=100`)).body.deliveries.length,
      (n) => n === N,
    )
    receiver.failNext = 0
    browser = await launchBrowser()
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    page.setDefaultTimeout(20_000)
    errors = collectPageErrors(page)
    await signIn(page, svc.url, svc.adminKey)
  })

  after(async () => {
    await browser?.close()
    await svc?.close()
    await receiver?.close()
  })

  it('Replay all dead deliveries starts a job; its bar ends full and says what the job says; the agent gets each again', async () => {
    await page.goto(`${svc.url}/#/events/deliveries`)
    await page.getByRole('heading', { name: 'Deliveries', level: 1 }).waitFor()
    await page.getByLabel('Status').selectOption('dead')
    await page.getByRole('button', { name: 'Replay all dead deliveries' }).click()
    const job = page.locator('.job')
    await page.locator('.job[data-job-status="succeeded"]').waitFor()
    const id = await job.getAttribute('data-job-id')
    const api = (await svc.api('GET', `/v1/jobs/${id}`)).body
    assert.equal(api.status, 'succeeded')
    assert.equal(api.done, N)
    const bar = page.getByRole('progressbar', { name: 'Replaying dead deliveries' })
    assert.equal(await bar.getAttribute('value'), String(N))
    assert.equal(await bar.getAttribute('max'), String(N))
    assert.match(
      (await job.getByRole('status').textContent()) ?? '',
      new RegExp(`${N} of ${N} deliveries replayed \\(100 %\\), done`),
    )
    await receiver.until((r) => new Set(r.map((x) => x.id)).size >= N)
    await page.getByText('No deliveries for these filters.').waitFor()
    assert.deepEqual(errors, [])
  })
})
