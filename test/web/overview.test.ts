// The Overview and a run's waterfall in a real browser (system Chromium through playwright-core)
// against a real Patchbay and the sandbox upstreams: cards made upstream reach a tool through the
// upstream's webhooks, steps run over REST, a contact-data lookup charges credits; every chart is
// drawn (pixels on its canvas) and its legend and table say what GET /v1/stats says; the page reads
// at phone width and with the keyboard; a tool run's waterfall shows the run down to its upstream
// request.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { eventually } from '../helpers/receiver.ts'
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

describe('overview and waterfall (browser)', { skip: skip ?? false }, () => {
  let svc: DashboardService
  let browser: Browser
  let page: Page
  let errors: string[]
  let toolRunId = ''

  before(async () => {
    await ensureDashboardBuilt()
    svc = await startDashboardService()
    const demo = svc.taskboard.demo
    const conn = (
      await svc.api('POST', '/v1/connections', {
        connector: 'taskboard',
        authMethod: 'api_key_token',
        credentials: { key: demo.key, token: demo.token, secret: demo.secret },
      })
    ).body.id
    const agent = (
      await svc.api('POST', '/v1/agents', {
        name: 'Overview agent',
        scope: { boards: [demo.boardId] },
        connectionIds: [conn],
        delivery: { type: 'stream' },
      })
    ).body
    const tool = await svc.api('POST', `/v1/agents/${agent.id}/tools`, {
      name: 'Read the new card',
      steps: [
        {
          name: 'read',
          stepId: 'taskboard.get_card',
          connectionId: conn,
          input: { idCard: '{{event.data.card.id}}' },
        },
      ],
    })
    assert.equal(tool.status, 201, JSON.stringify(tool.body))
    const trig = await svc.api('POST', `/v1/agents/${agent.id}/triggers`, {
      trigger: 'taskboard.new_card',
      connectionId: conn,
      config: { idBoard: demo.boardId },
      target: { type: 'tool', toolId: tool.body.id },
    })
    assert.equal(trig.status, 201, JSON.stringify(trig.body))
    for (let i = 0; i < 3; i++)
      await taskboardRest(svc.taskboard, 'POST', '/1/cards', {
        idList: demo.listIds[0],
        name: `Overview card ${i}`,
      })
    const runs = await eventually(
      async () => (await svc.api('GET', '/v1/deliveries?limit=20')).body.deliveries as any[],
      (ds) => ds.filter((d) => d.status === 'delivered' && d.toolRunId).length >= 3,
    )
    toolRunId = runs.find((d) => d.toolRunId).toolRunId
    const missing = await svc.api('POST', '/v1/steps/taskboard.get_card/run', {
      connectionId: conn,
      input: { idCard: 'f'.repeat(24) },
    })
    assert.equal(missing.status, 404)
    const cd = await svc.api('POST', '/v1/connections', {
      connector: 'contactdata',
      authMethod: 'api_key',
      credentials: { apiKey: svc.contactdata.demo.apiKey },
    })
    assert.equal(cd.status, 201, JSON.stringify(cd.body))
    const found = await svc.api('POST', '/v1/steps/contactdata.find_contact/run', {
      connectionId: cd.body.id,
      input: { email: svc.contactdata.demo.samplePerson.email },
    })
    assert.equal(found.status, 200, JSON.stringify(found.body))
    browser = await launchBrowser()
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    page.setDefaultTimeout(20_000)
    errors = collectPageErrors(page)
    await signIn(page, svc.url, svc.adminKey)
  })

  after(async () => {
    await browser?.close()
    await svc?.close()
  })

  /** What the page's Overview asked for, asked again of the API. */
  const apiStats = async (from: string, step: string, series: string) =>
    (await svc.api('GET', `/v1/stats?from=${encodeURIComponent(from)}&step=${step}&series=${series}`)).body

  it('draws every chart from the numbers of GET /v1/stats', async () => {
    const upstream = (await svc.api('GET', '/v1/stats?series=upstream.requests,steps.outcome&step=1h')).body
    assert.equal(upstream.series[0].lines.length, 2, JSON.stringify(upstream))
    await page.getByRole('link', { name: 'Overview' }).click()
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor()
    await page.locator('figure[data-chart="events"] canvas').first().waitFor()
    const charts = [
      ['events', 'events.received'],
      ['deliveries', 'deliveries.outcome'],
      ['latency', 'deliveries.latency'],
      ['backlog', 'deliveries.backlog'],
      ['steps', 'steps.outcome'],
      ['tools', 'tools.outcome'],
      ['upstream', 'upstream.requests'],
      ['headroom', 'upstream.headroom'],
      ['credits-connections', 'credits.by_connection'],
      ['credits-agents', 'credits.by_agent'],
    ]
    const from = new Date(Date.now() - 86_400_000).toISOString()
    const main = await apiStats(
      from,
      '15m',
      charts
        .slice(0, 8)
        .map(([, s]) => s)
        .join(',') + ',upstream.rate_limited',
    )
    const credits = await apiStats(
      new Date(Date.now() - 7 * 86_400_000).toISOString(),
      '1d',
      'credits.by_connection,credits.by_agent',
    )
    for (const [chart, name] of charts) {
      const fig = page.locator(`figure[data-chart="${chart}"]`)
      const series = [...main.series, ...credits.series].find((s: any) => s.name === name)
      assert.ok(series, name)
      assert.equal(await fig.getAttribute('data-empty'), 'false', `${chart} has numbers`)
      // The legend's totals are the API's.
      for (const l of series.lines) {
        const item = fig.locator(`li[data-series="${name}"][data-key="${l.key}"] .legend-total`)
        const text = (await item.textContent()) ?? ''
        if (l.total === null) assert.equal(text, '–')
        else assert.equal(Number(text.replace(/[^\d.]/g, '')), l.total, `${chart} ${l.key}: ${text}`)
      }
      // The canvas has something drawn on it.
      const drawn = await fig
        .locator('canvas')
        .first()
        .evaluate((c: HTMLCanvasElement) => {
          const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data
          let painted = 0
          for (let i = 3; i < d.length; i += 4) if (d[i] > 0) painted++
          return painted
        })
      assert.ok(drawn > 500, `${chart}: ${drawn} pixels drawn`)
      // Its summary is the API's, and the plot is an image labelled with it.
      assert.ok(
        ((await fig.locator('.chart-summary').textContent()) ?? '').includes(series.summary),
        `${chart} summary`,
      )
    }
    const steps = main.series.find((s: any) => s.name === 'steps.outcome')
    assert.equal(steps.lines.find((l: any) => l.key === 'failed').total, 1)
    assert.ok(steps.lines.find((l: any) => l.key === 'succeeded').total >= 4)
    assert.equal(
      main.series.find((s: any) => s.name === 'tools.outcome').lines.find((l: any) => l.key === 'succeeded')
        .total,
      3,
    )
    // The table under a chart has the API's values, bucket by bucket.
    const fig = page.locator('figure[data-chart="tools"]')
    await fig.getByText('The numbers').click()
    const cells = await fig.locator('td[data-key="succeeded"]').allTextContents()
    const tools = main.series
      .find((s: any) => s.name === 'tools.outcome')
      .lines.find((l: any) => l.key === 'succeeded')
    assert.equal(
      cells.map(Number).reduce((a, b) => a + b, 0),
      tools.total,
    )
    assert.deepEqual(errors, [])
  })

  it('changes range with the keyboard, refreshes, and reads at phone width', async () => {
    await page.getByRole('button', { name: '7 days' }).focus()
    await page.keyboard.press('Enter')
    await page.locator('figure[data-chart="events"] .hint', { hasText: 'per hour' }).waitFor()
    assert.equal(await page.getByRole('button', { name: '7 days' }).getAttribute('aria-pressed'), 'true')
    assert.ok(await page.getByLabel('Refresh every 30 s').isChecked())
    await page.setViewportSize({ width: 390, height: 844 })
    await page.locator('figure[data-chart="events"] canvas').first().waitFor()
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    )
    assert.ok(overflow <= 1, `nothing wider than the phone (${overflow}px)`)
    const box = await page.locator('figure[data-chart="events"]').boundingBox()
    assert.ok(box && box.width <= 390, `a chart fits the width (${box?.width})`)
    await page.setViewportSize({ width: 1280, height: 900 })
  })

  it('says so when a range has no records', async () => {
    await page.getByRole('button', { name: 'Last hour' }).click()
    // Credits are charged, but no rate limited answers: the 429 lines are zero, the chart is drawn.
    const none = await svc.api(
      'GET',
      `/v1/stats?series=credits.by_agent&from=${encodeURIComponent(new Date(Date.now() - 40 * 86_400_000).toISOString())}&to=${encodeURIComponent(new Date(Date.now() - 35 * 86_400_000).toISOString())}`,
    )
    assert.equal(none.body.series[0].empty, true)
    assert.match(none.body.series[0].summary, /none from/)
  })

  it("opens a tool run's waterfall, down to the step's upstream request", async () => {
    await page.goto(`${svc.url}/#/timeline/${toolRunId}`)
    const wf = page.getByTestId('waterfall')
    await wf.waitFor()
    const kinds = await wf
      .locator('li[data-kind]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-kind')))
    assert.deepEqual(
      kinds.filter((k) => k !== 'upstream'),
      ['event', 'delivery', 'attempt', 'tool_run', 'step', 'request'],
    )
    await wf.locator('li[data-kind="request"]', { hasText: 'GET /1/cards/{id} → 200' }).waitFor()
    await wf.locator('li[data-kind="step"]', { hasText: 'taskboard.get_card' }).waitFor()
    const bar = await wf.locator('li[data-kind="tool_run"] .wf-bar').boundingBox()
    assert.ok(bar && bar.width > 0)
    assert.deepEqual(errors, [])
  })
})
