// Paths normalized once, then compared (credit budgets against path spellings), redaction of every
// form through an echoing upstream on loopback, and upstream redirects as UPSTREAM_REDIRECT.
import assert from 'node:assert/strict'
import http from 'node:http'
import { after, before, describe, test } from 'node:test'
import type { ContactdataSandbox } from '../../sandbox/contactdata/index.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { control } from '../helpers/taskboard.ts'

/** A loopback server: `handle` answers, every request is counted. */
async function server(handle: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const s = http.createServer(handle)
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(s.address() as { port: number }).port}`,
    close: () => {
      s.closeAllConnections()
      return new Promise<void>((r) => s.close(() => r()))
    },
  }
}

describe('credit budgets against path spellings', () => {
  let t: TestService
  before(async () => {
    t = await startTestService({ contactdata: true })
  })
  after(() => t.close())

  test('with a budget of 1, no spelling of /person gets a lookup out; ambiguous spellings are refused', async () => {
    const sb = t.contactdata!
    const acct = await control(sb, 'POST', '/accounts', {
      name: 'Budgeted',
      plan: 'enterprise',
      credits: 100,
    })
    const conn = await t.api('POST', '/v1/connections', {
      connector: 'contactdata',
      authMethod: 'api_key',
      credentials: { apiKey: acct.apiKey },
    })
    assert.equal(conn.status, 201, JSON.stringify(conn.body))
    const agent = await t.api('POST', '/v1/agents', {
      name: 'budgeted',
      connectionIds: [conn.body.id],
      delivery: { type: 'stream' },
    })
    const key = (await t.api('POST', `/v1/agents/${agent.body.id}/keys`, { name: 'k' })).body.key
    assert.equal((await t.api('PUT', `/v1/credits/budgets/${agent.body.id}`, { limit: 1 })).status, 200)
    const call = (endpoint: string) =>
      t.api(
        'POST',
        '/v1/steps/contactdata.api_call/run',
        { connectionId: conn.body.id, input: { method: 'POST', endpoint, body: { email: 'a@b.example' } } },
        key,
      )
    const budgeted = [
      '/person',
      '/%70erson',
      '/%70%65%72%73%6f%6e',
      '/PERSON',
      '/Person',
      '/person/',
      '/%70erson/',
      '/person?x=1',
    ]
    for (const endpoint of budgeted) {
      const res = await call(endpoint)
      assert.equal(res.status, 403, `${endpoint}: ${JSON.stringify(res.body)}`)
      assert.equal(res.body.error.code, 'CREDIT_BUDGET_EXCEEDED', endpoint)
    }
    const ambiguous = [
      '/person;x=1',
      '/%2fperson',
      '/x/..%2fperson',
      '/x/%2e%2e/person',
      '/x/..;/person',
      '/x/\uff0e\uff0e/person',
      '/x/\u3002\u3002/person',
      '/%252fperson',
    ]
    for (const endpoint of ambiguous) {
      const res = await call(endpoint)
      assert.equal(res.status, 400, `${endpoint}: ${JSON.stringify(res.body)}`)
      assert.equal(res.body.error.code, 'INVALID_ENDPOINT', endpoint)
    }
    const usage = await control(sb, 'GET', `/usage?apiKey=${encodeURIComponent(acct.apiKey)}`)
    const lookups = Object.entries(usage.endpoints as Record<string, { requests: number }>)
      .filter(([e]) => /person/i.test(e))
      .reduce((n, [, v]) => n + v.requests, 0)
    assert.equal(lookups, 0, 'no lookup reached the upstream')
  })
})

describe('redaction of every form, through an echoing upstream', () => {
  let t: TestService
  let echo: Awaited<ReturnType<typeof server>>
  const password = 'pa"ss/w\u00f6rd+ 1&x=y'
  const username = 'robot-user'
  const forms: Record<string, string> = {
    raw: password,
    url: encodeURIComponent(password),
    form: new URLSearchParams({ v: password }).toString().slice(2),
    json: JSON.stringify(password).slice(1, -1),
    jsonSlash: JSON.stringify(password).slice(1, -1).replace(/\//g, '\\/'),
    jsonAscii: JSON.stringify(password)
      .slice(1, -1)
      .replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    base64: Buffer.from(password).toString('base64'),
    base64url: Buffer.from(password).toString('base64url'),
    basic: Buffer.from(`${username}:${password}`).toString('base64'),
    basicOffset: Buffer.from(`x${username}:${password}y`).toString('base64'),
  }
  before(async () => {
    // Answers 400 with the form the path names, and its request's Authorization header.
    echo = await server((req, res) => {
      const form = req.url!.split('/').pop()!.split('?')[0]
      res.writeHead(400, { 'content-type': 'text/plain' })
      res.end(`bad request; you sent ${forms[form] ?? 'nothing'} with ${req.headers.authorization ?? ''}`)
    })
    t = await startTestService()
  })
  after(async () => {
    await t.close()
    await echo.close()
  })

  test('the password never comes back: raw, URL-encoded, JSON-escaped, base64 alone and inside Basic', async () => {
    const conn = await t.api('POST', '/v1/connections', {
      connector: 'http',
      authMethod: 'custom',
      credentials: { baseUrl: `${echo.url}/api`, authType: 'basic', username, password },
    })
    assert.equal(conn.status, 201, JSON.stringify(conn.body))
    for (const form of Object.keys(forms)) {
      const res = await t.api('POST', '/v1/steps/http.api_call/run', {
        connectionId: conn.body.id,
        input: { method: 'GET', endpoint: `/echo/${form}` },
      })
      assert.equal(res.status, 400, JSON.stringify(res.body))
      const text = JSON.stringify(res.body)
      for (const [name, value] of Object.entries(forms))
        assert.ok(
          !text.includes(JSON.stringify(value).slice(1, -1)),
          `${form}: the ${name} form leaked: ${text}`,
        )
      assert.match(res.body.error.upstream.body, /\[redacted\]/, form)
      assert.ok(!res.body.error.upstream.body.includes('Basic ' + forms.basic), form)
    }
    // The run records keep codes, never the upstream's words.
    const { items: runs } = await t.service.engine.stepRuns.list(t.service.workspaceId, { limit: 100 })
    assert.ok(runs.length >= Object.keys(forms).length)
    for (const [name, value] of Object.entries(forms)) assert.ok(!JSON.stringify(runs).includes(value), name)
  })
})

describe('upstream redirects', () => {
  let t: TestService
  let internal: Awaited<ReturnType<typeof server>>
  let upstream: Awaited<ReturnType<typeof server>>
  let internalHits = 0
  before(async () => {
    internal = await server((_req, res) => {
      internalHits++
      res.end('{}')
    })
    // A contact-data upstream that knows its account but redirects everything else.
    upstream = await server((req, res) => {
      if (req.url === '/account') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"name":"Redirecting"}')
        return
      }
      res.writeHead(302, { location: `${internal.url}/secret/path?token=abc` }).end()
    })
    t = await startTestService({ contactdata: { url: upstream.url } as ContactdataSandbox })
  })
  after(async () => {
    await t.close()
    await upstream.close()
    await internal.close()
  })

  test('a ready-made step meets a 302 as UPSTREAM_REDIRECT naming the origin only, never a 500', async () => {
    const conn = await t.api('POST', '/v1/connections', {
      connector: 'contactdata',
      authMethod: 'api_key',
      credentials: { apiKey: 'cd_redirect_test_key' },
    })
    assert.equal(conn.status, 201, JSON.stringify(conn.body))
    for (const [step, input] of [
      ['search_companies', { industry: 'Manufacturing' }],
      ['find_company', { domain: 'example.com' }],
    ] as const) {
      const res = await t.api('POST', `/v1/steps/contactdata.${step}/run`, {
        connectionId: conn.body.id,
        input,
      })
      assert.equal(res.status, 502, `${step}: ${JSON.stringify(res.body)}`)
      assert.equal(res.body.error.code, 'UPSTREAM_REDIRECT')
      assert.ok(res.body.error.message.includes(internal.url), res.body.error.message)
      assert.ok(!res.body.error.message.includes('/secret/path'), 'the path and query are left out')
      assert.ok(res.body.error.hint)
    }
    assert.equal(internalHits, 0, 'the redirect was not followed')
  })
})
