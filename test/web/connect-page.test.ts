// The hosted connect page in a real browser (system Chromium through playwright-core) against a
// real Patchbay and the sandbox task-board: an operator's backend makes a connect session with its
// workspace key, the end user connects a task-board account on the hosted page without any
// workspace key and lands back in the app, an agent bound to that end user runs a step with the
// connection, and the operator's notification URL receives connection.created and, after the
// token is revoked upstream, connection.lapsed.
import assert from 'node:assert/strict'
import http from 'node:http'
import { after, before, describe, it } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { Receiver } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { mintTaskboardToken } from '../helpers/taskboard.ts'
import {
  browserUnavailableReason,
  collectPageErrors,
  ensureDashboardBuilt,
  launchBrowser,
  signIn,
} from './browser.ts'

const skip = browserUnavailableReason()

describe('hosted connect page (browser)', { skip: skip ?? false }, () => {
  let sandbox: TaskboardSandbox
  let t: TestService
  let browser: Browser
  let page: Page
  let errors: string[]
  let notices: Receiver
  let app: http.Server
  let appOrigin = ''
  /** Whatever the browser sent to Patchbay with an Authorization header (there must be nothing). */
  const authorized: string[] = []

  /** The operator's backend: what docs/end-users.md shows, with the workspace key. */
  async function backendMakesConnectSession(endUserId: string) {
    const res = await fetch(`${t.url}/v1/connect-sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        endUserId,
        connectors: ['taskboard'],
        returnTo: `${appOrigin}/connected`,
        ttlSeconds: 600,
      }),
    })
    assert.equal(res.status, 201)
    return (await res.json()) as { id: string; url: string; token: string }
  }

  before(async () => {
    await ensureDashboardBuilt()
    sandbox = await startTaskboardSandbox()
    t = await startTestService({ taskboard: sandbox })
    notices = await new Receiver().start()
    // The operator's app, where the browser comes back.
    app = http.createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Back in the app</h1>'),
    )
    await new Promise<void>((r) => app.listen(0, '127.0.0.1', r))
    appOrigin = `http://127.0.0.1:${(app.address() as { port: number }).port}`
    const settings = await t.api('PATCH', '/v1/workspace/settings', {
      allowedOrigins: [appOrigin],
      notificationUrl: notices.url,
    })
    assert.equal(settings.status, 200, JSON.stringify(settings.body))
    notices.secret = settings.body.notificationSecret
    browser = await launchBrowser()
    page = await browser.newPage({ viewport: { width: 1000, height: 900 } })
    page.setDefaultTimeout(20_000)
    errors = collectPageErrors(page)
    page.on('request', (r) => {
      if (r.url().startsWith(t.url) && r.headers().authorization) authorized.push(r.url())
    })
  })
  after(async () => {
    await browser?.close()
    await t?.close()
    await sandbox?.close()
    await notices?.close()
    app?.close()
  })

  it('an end user connects with key and token, a bound agent runs a step, the operator hears created and lapsed', async () => {
    const account = await mintTaskboardToken(sandbox, { username: `erin${Date.now()}` })
    const session = await backendMakesConnectSession('erin')
    await page.goto(session.url)
    await page.getByRole('heading', { level: 1, name: 'Connect an account to Default' }).waitFor()
    assert.ok(!page.url().includes(session.token), 'the token leaves the address bar')
    const form = page.locator('form[data-method="api_key_token"]')
    await form.getByLabel('key').fill(account.key)
    await form.getByLabel('token').fill(account.token)
    await form.getByRole('button', { name: /^Connect/ }).click()
    await page.waitForURL(`${appOrigin}/connected?**`)
    const back = new URL(page.url())
    const connectionId = back.searchParams.get('connectionId')!
    assert.match(connectionId, /^con_/)
    assert.equal(back.searchParams.get('connector'), 'taskboard')
    assert.deepEqual(authorized, [], 'the hosted page never sends a workspace key')

    const connection = (await t.api('GET', `/v1/connections/${connectionId}`)).body
    assert.equal(connection.endUserId, 'erin')
    assert.equal(connection.accountName, account.username)

    // An agent bound to erin runs a step with erin's connection.
    const agent = await t.api('POST', '/v1/agents', {
      name: 'erin assistant',
      endUserId: 'erin',
      connectionIds: [connectionId],
      delivery: { type: 'stream' },
    })
    assert.equal(agent.status, 201, JSON.stringify(agent.body))
    const agentKey = (await t.api('POST', `/v1/agents/${agent.body.id}/keys`, {})).body.key
    const run = await t.api(
      'POST',
      '/v1/steps/taskboard.get_boards/run',
      { connectionId, input: {} },
      agentKey,
    )
    assert.equal(run.status, 200, JSON.stringify(run.body))

    const created = await notices.until((r) => r.some((n) => n.body.type === 'connection.created'))
    const note = created.find((n) => n.body.type === 'connection.created')!
    assert.ok(note.verified, 'signed with the workspace notification secret')
    assert.equal(note.body.data.endUserId, 'erin')
    assert.equal(note.body.data.connectionId, connectionId)
    assert.equal(note.body.data.accountName, account.username)

    // Revoked upstream: the agent's next step is refused, the connection lapses, the operator hears it.
    const revoke = await fetch(
      `${sandbox.url}/1/tokens/${account.token}?key=${account.key}&token=${account.token}`,
      {
        method: 'DELETE',
      },
    )
    assert.equal(revoke.status, 200)
    const refused = await t.api(
      'POST',
      '/v1/steps/taskboard.get_boards/run',
      { connectionId, input: {} },
      agentKey,
    )
    assert.notEqual(refused.status, 200)
    const lapsed = await notices.until((r) => r.some((n) => n.body.type === 'connection.lapsed'))
    const l = lapsed.find((n) => n.body.type === 'connection.lapsed')!
    assert.ok(l.verified)
    assert.equal(l.body.data.connectionId, connectionId)
    assert.equal(l.body.data.endUserId, 'erin')
    assert.match(l.body.data.reason, /refused/)
    assert.deepEqual(errors, [])
  })

  it('the dashboard shows the end user, their lapsed connection, their agent and the notices, and makes a connect link', async () => {
    const dash = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    dash.setDefaultTimeout(20_000)
    const dashErrors = collectPageErrors(dash)
    await signIn(dash, t.url, t.adminKey)
    await dash.getByRole('link', { name: 'End users' }).click()
    await dash.getByRole('heading', { level: 1, name: 'End users' }).waitFor()
    assert.equal(await dash.getByLabel(/Allowed origins/).inputValue(), appOrigin)
    await dash.getByRole('link', { name: 'erin' }).click()
    const connections = dash.getByRole('list', { name: 'Connections of erin' })
    await connections.getByRole('listitem').getByText('lapsed').waitFor()
    await dash.getByRole('link', { name: 'erin assistant' }).waitFor()
    const notices = dash.getByRole('table', { name: 'Notices' })
    await notices.getByRole('rowheader', { name: 'connection.lapsed' }).waitFor()
    await notices.getByRole('rowheader', { name: 'connection.created' }).waitFor()
    await dash.getByRole('button', { name: 'Make a connect link' }).click()
    await dash.getByText(`${t.url}/connect#pbcs_`).waitFor()
    await dash.close()
    assert.deepEqual(dashErrors, [])
  })

  it('the link is single use: opened again it ends back in the app with the error code; a forged one says so in words', async () => {
    const session = await backendMakesConnectSession('frank')
    const account = await mintTaskboardToken(sandbox, { username: `frank${Date.now()}` })
    await page.goto(session.url)
    const form = page.locator('form[data-method="api_key_token"]')
    // A wrong token: the error in words, and the link still works.
    await form.getByLabel('key').fill(account.key)
    await form.getByLabel('token').fill('wrong')
    await form.getByRole('button', { name: /^Connect/ }).click()
    await page.getByRole('alert').filter({ hasText: 'refused the credentials' }).waitFor()
    await form.getByLabel('token').fill(account.token)
    await form.getByRole('button', { name: /^Connect/ }).click()
    await page.waitForURL(`${appOrigin}/connected?**`)
    assert.match(new URL(page.url()).searchParams.get('connectionId') ?? '', /^con_/)
    // Opened again: spent, and the app it came from is told so.
    await page.goto(session.url)
    await page.waitForURL(`${appOrigin}/connected?**error=**`)
    const back = new URL(page.url())
    assert.equal(back.searchParams.get('error'), 'CONNECT_SESSION_USED')
    assert.match(back.searchParams.get('error_description') ?? '', /already been used/)
    assert.equal(back.searchParams.get('connectionId'), null)
    // A forged link names no app to go back to: the page says what happened.
    await page.goto(`${t.url}/connect#pbcs_forged`)
    await page.getByRole('alert').filter({ hasText: 'not valid' }).waitFor()
    assert.ok(page.url().startsWith(t.url))
  })

  it('an expired link ends back in the app with the error code, unless its returnTo is missing or no longer allowed', async () => {
    const expire = (id: string) =>
      t.service.engine.store.db
        .updateTable('connect_sessions')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('id', '=', id)
        .execute()
    const session = await backendMakesConnectSession('heidi')
    await expire(session.id)
    await page.goto(session.url)
    await page.waitForURL(`${appOrigin}/connected?**error=**`)
    assert.equal(new URL(page.url()).searchParams.get('error'), 'CONNECT_SESSION_EXPIRED')

    // Made without a returnTo: nowhere to go back to, said in words.
    const plain = await t.api('POST', '/v1/connect-sessions', { endUserId: 'heidi' })
    assert.equal(plain.status, 201, JSON.stringify(plain.body))
    await expire(plain.body.id)
    await page.goto(plain.body.url)
    await page.getByRole('alert').filter({ hasText: 'expired' }).waitFor()
    assert.ok(page.url().startsWith(t.url))

    // Its returnTo's origin taken off the allowed origins since: not followed, said in words.
    const later = await backendMakesConnectSession('heidi')
    await expire(later.id)
    const narrowed = await t.api('PATCH', '/v1/workspace/settings', {
      allowedOrigins: ['https://other.example.test'],
    })
    assert.equal(narrowed.status, 200, JSON.stringify(narrowed.body))
    try {
      await page.goto(later.url)
      await page.getByRole('alert').filter({ hasText: 'expired' }).waitFor()
      assert.ok(page.url().startsWith(t.url))
    } finally {
      await t.api('PATCH', '/v1/workspace/settings', { allowedOrigins: [appOrigin] })
    }
    assert.deepEqual(errors, [])
  })

  it('an end user connects through the task-board OAuth redirect and lands back in the app', async () => {
    const session = await backendMakesConnectSession('grace')
    await page.goto(session.url)
    await page
      .locator('form[data-method="oauth1"]')
      .getByRole('button', { name: /^Sign in with/ })
      .click()
    // The task-board's own login-and-approve page.
    await page.getByLabel('Username').fill('demo')
    await page.getByLabel('Password').fill(sandbox.demo.password)
    await page.getByRole('button', { name: 'Allow' }).click()
    await page.waitForURL(`${appOrigin}/connected?**`)
    const connectionId = new URL(page.url()).searchParams.get('connectionId')!
    const connection = (await t.api('GET', `/v1/connections/${connectionId}`)).body
    assert.equal(connection.endUserId, 'grace')
    assert.equal(connection.authMethod, 'oauth1')
    // The link is spent by the sign-in.
    const again = await fetch(`${t.url}/v1/connect/session`, {
      headers: { 'patchbay-connect-token': session.token },
    })
    assert.equal(again.status, 409)
  })
})
