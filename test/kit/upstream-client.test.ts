// ctx.http against the sandbox over real HTTP: retries, error mapping and 401 → lapsed (pacing:
// test/connectors/taskboard-pacing.test.ts).
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import { Agent } from 'undici'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import type { ConnectorDefinition, Credentials, OutgoingRequest } from '../../src/kit/define.ts'
import type { PatchbayError } from '../../src/kit/errors.ts'
import { UpstreamClient } from '../../src/kit/http.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { connectDemoTaskboard, control, mintDemoToken, mintTaskboardToken } from '../helpers/taskboard.ts'

let sandbox: TaskboardSandbox
let t: TestService
let connectionId: string
let idCard: string

before(async () => {
  sandbox = await startTaskboardSandbox()
  t = await startTestService({
    taskboard: sandbox,
    env: { PATCHBAY_UPSTREAM_TIMEOUT_MS: '400' },
  })
  const cards = await (
    await fetch(`${sandbox.url}/1/lists/${sandbox.demo.listIds[0]}/cards`, {
      headers: {
        authorization: `OAuth oauth_consumer_key="${sandbox.demo.key}", oauth_token="${sandbox.demo.token}"`,
      },
    })
  ).json()
  idCard = cards[0].id
  connectionId = await connectDemoTaskboard(t, sandbox)
})
after(async () => {
  await t.close()
  await sandbox.close()
})

const getDemoCard = (conn = connectionId) =>
  t.api('POST', '/v1/steps/taskboard.get_card/run', { connectionId: conn, input: { idCard } })

test('an idempotent request is retried on 5xx and succeeds; the attempts are reported', async () => {
  await control(sandbox, 'POST', '/faults', {
    errorRate: 1,
    errorStatus: 503,
    count: 2,
    pathPrefix: '/1/cards/',
  })
  const res = await getDemoCard()
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.body.meta.attempts, 3)
})

test('a POST is not retried on 5xx (it may have been done): UPSTREAM_ERROR with the upstream status', async () => {
  await control(sandbox, 'POST', '/faults', {
    errorRate: 1,
    errorStatus: 500,
    count: 1,
    pathPrefix: '/1/cards',
  })
  const res = await t.api('POST', '/v1/steps/taskboard.create_card/run', {
    connectionId,
    input: { idList: sandbox.demo.listIds[0], name: 'once' },
  })
  assert.equal(res.status, 502)
  assert.equal(res.body.error.code, 'UPSTREAM_ERROR')
  assert.equal(res.body.error.upstream.status, 500)
  await control(sandbox, 'DELETE', '/faults')
})

test('an upstream that does not answer is UPSTREAM_TIMEOUT, and the service keeps serving', async () => {
  await control(sandbox, 'POST', '/faults', { timeout: true, count: 4, pathPrefix: '/1/cards/' })
  const res = await getDemoCard()
  assert.equal(res.status, 504)
  assert.equal(res.body.error.code, 'UPSTREAM_TIMEOUT')
  await control(sandbox, 'DELETE', '/faults')
  assert.equal((await getDemoCard()).status, 200)
})

test('a 401 marks the connection lapsed; reconnecting in place (same id) makes it active again', async () => {
  const token = await mintDemoToken(sandbox)
  const made = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: sandbox.demo.key, token },
  })
  const id = made.body.id
  const revoke = await fetch(`${sandbox.url}/1/tokens/${token}`, {
    method: 'DELETE',
    headers: { authorization: `OAuth oauth_consumer_key="${sandbox.demo.key}", oauth_token="${token}"` },
  })
  assert.ok(revoke.ok)

  const failed = await getDemoCard(id)
  assert.equal(failed.status, 409)
  assert.equal(failed.body.error.code, 'CONNECTION_LAPSED')
  assert.match(failed.body.error.hint, /reconnect/i)
  assert.ok(!JSON.stringify(failed.body).includes(token))
  const status = await t.api('GET', `/v1/connections/${id}`)
  assert.equal(status.body.status, 'lapsed')
  assert.match(status.body.statusReason, /invalid token/)

  // A lapsed connection is refused before anything is sent.
  assert.equal((await getDemoCard(id)).body.error.code, 'CONNECTION_LAPSED')

  const fresh = await mintDemoToken(sandbox)
  const fixed = await t.api('POST', `/v1/connections/${id}/reconnect`, {
    authMethod: 'api_key_token',
    credentials: { key: sandbox.demo.key, token: fresh },
  })
  assert.equal(fixed.status, 200)
  assert.equal(fixed.body.id, id)
  assert.equal(fixed.body.status, 'active')
  assert.equal((await getDemoCard(id)).status, 200)
})

test('a 401 for a permission the account lacks is UPSTREAM_FORBIDDEN and leaves the connection active', async () => {
  const other = await mintTaskboardToken(sandbox, { username: `private${Date.now()}` })
  const auth = {
    authorization: `OAuth oauth_consumer_key="${other.key}", oauth_token="${other.token}"`,
    'content-type': 'application/json',
  }
  const board = await (
    await fetch(`${sandbox.url}/1/boards`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: 'Private' }),
    })
  ).json()
  const list = await (
    await fetch(`${sandbox.url}/1/lists`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: 'L', idBoard: board.id }),
    })
  ).json()
  const card = await (
    await fetch(`${sandbox.url}/1/cards`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: 'theirs', idList: list.id }),
    })
  ).json()
  const res = await t.api('POST', '/v1/steps/taskboard.get_card/run', {
    connectionId,
    input: { idCard: card.id },
  })
  assert.equal(res.status, 403)
  assert.equal(res.body.error.code, 'UPSTREAM_FORBIDDEN')
  assert.equal((await t.api('GET', `/v1/connections/${connectionId}`)).body.status, 'active')
})

test('what the connector adds to a request (a value made from the credentials) is scrubbed from the errors of every request of the client', async () => {
  // An upstream that echoes the signature header it was sent in a 400's body.
  const echo = http.createServer((req, res) => {
    res.writeHead(400, { 'content-type': 'text/plain' }).end(`refused: ${req.headers['x-signature']}`)
  })
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r))
  const dispatcher = new Agent()
  try {
    const connector = {
      id: 'echo',
      name: 'Echo',
      authorize: (req: OutgoingRequest, c: Credentials) => {
        // Not the credential in any spelling: only what the request carried tells it is secret.
        req.headers['x-signature'] = createHash('sha256').update(c.password).digest('hex')
      },
    } as unknown as ConnectorDefinition
    const client = new UpstreamClient({
      connector,
      baseUrl: `http://127.0.0.1:${(echo.address() as AddressInfo).port}/api`,
      credentials: { user: 'someone', password: 'pa55word-long-enough' },
      dispatcher,
      timeoutMs: 2000,
      retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1 },
      storedConnection: false,
    })
    const signature = createHash('sha256').update('pa55word-long-enough').digest('hex')
    for (const path of ['/first', '/second']) {
      const err = await client.get(path).then(
        () => assert.fail('the upstream refused'),
        (e: PatchbayError) => e,
      )
      assert.equal(err.code, 'UPSTREAM_REJECTED')
      const body = err.toBody().error.upstream?.body ?? ''
      assert.match(body, /refused: \[redacted\]/, path)
      assert.ok(!body.includes(signature), path)
    }
  } finally {
    await dispatcher.close()
    echo.close()
  }
})

test('what is sent upstream is the path a URL parse of the address gives: plain paths as they are, others normalised as a parse does', async () => {
  // An upstream that answers with the request target it received.
  const echo = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ target: req.url }))
  })
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r))
  const dispatcher = new Agent()
  const origin = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`
  try {
    const client = new UpstreamClient({
      connector: { id: 'echo', name: 'Echo', authorize: () => {} } as unknown as ConnectorDefinition,
      baseUrl: `${origin}/api/`,
      credentials: {},
      dispatcher,
      timeoutMs: 2000,
      retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1 },
      storedConnection: false,
    })
    const paths = [
      '/1/cards/5f0c1b2a3d4e5f6a7b8c9d0e',
      "/a-b_c.d~e/f!$&'()*+,;=:@g/",
      '/.well-known//x',
      '/a/./b',
      '/a/../../b',
      '/a/..',
      '/a/.',
      '/a/%2e%2E/b',
      '/a b/"q"/<x>/`y`/{z}',
      '/caf\u00e9/\u2024',
      '/x\\y',
      '/a|b^c[d]',
      '/a#fragment',
      '/a?b=c',
      '/%7e%zz',
    ]
    for (const path of paths) {
      const parsed = new URL(`${origin}/api${path}`)
      const got = await client.get<{ target: string }>(path)
      assert.equal(got.target, `${parsed.pathname}${parsed.search}`, path)
    }
    const withQuery = await client.get<{ target: string }>('/1/cards/abc', {
      fields: ['id', 'name'],
      q: 'a b&c',
    })
    assert.equal(withQuery.target, '/api/1/cards/abc?fields=id%2Cname&q=a+b%26c')
  } finally {
    await dispatcher.close()
    echo.close()
  }
})
