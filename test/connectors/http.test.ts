// The generic http connector, for self-hosted installations: the code-host sandbox stands in for
// a self-hosted code-host (bearer and header authentication), a local echo server shows what
// goes on the wire (basic and query authentication, the base path, redirects not followed), and
// the base address and endpoint rules keep requests where the connection says.
import assert from 'node:assert/strict'
import http from 'node:http'
import { after, before, describe, test } from 'node:test'
import type { CodehostSandbox } from '../../sandbox/codehost/index.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
let sb: CodehostSandbox

/** Records every request and answers with what it saw; /redirect answers 302, /fail a 500. */
class Echo {
  seen: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: string }> = []
  url = ''
  #server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => {
      this.seen.push({ method: req.method!, url: req.url!, headers: req.headers, body })
      if (req.url?.endsWith('/redirect')) {
        res.writeHead(302, { location: `${this.url}/landed` }).end()
        return
      }
      if (req.url?.endsWith('/fail')) {
        res
          .writeHead(500, { 'content-type': 'text/plain' })
          .end(`boom, your header was ${req.headers['private-token']}`)
        return
      }
      res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': 'session=abc' })
      res.end(JSON.stringify({ method: req.method, path: req.url, login: 'echo-user' }))
    })
  })
  async start() {
    await new Promise<void>((r) => this.#server.listen(0, '127.0.0.1', r))
    this.url = `http://127.0.0.1:${(this.#server.address() as { port: number }).port}`
    return this
  }
  close() {
    this.#server.closeAllConnections()
    return new Promise<void>((r) => this.#server.close(() => r()))
  }
}
const echo = new Echo()

before(async () => {
  await echo.start()
  t = await startTestService({ codehost: true })
  sb = t.codehost!
})
after(async () => {
  await t.close()
  await echo.close()
})

async function connect(credentials: Record<string, unknown>) {
  // Each test's connection of its own, even for an address connected before.
  return t.api('POST', '/v1/connections', {
    connector: 'http',
    authMethod: 'custom',
    credentials,
    second: true,
  })
}

async function call(connectionId: string, input: Record<string, unknown>) {
  return t.api('POST', '/v1/steps/http.api_call/run', { connectionId, input })
}

describe('a self-hosted code-host through the HTTP API Call', () => {
  test('bearer authentication; checkPath names the account; the token stays in the vault', async () => {
    const res = await connect({
      baseUrl: sb.url,
      authType: 'bearer',
      token: sb.demo.token,
      checkPath: '/user',
    })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    assert.equal(res.body.connector, 'http')
    assert.equal(res.body.accountName, `octo-demo @ ${new URL(sb.url).host}`)
    assert.ok(!JSON.stringify(res.body).includes(sb.demo.token))
    const out = await call(res.body.id, {
      method: 'GET',
      endpoint: '/repos/octo-demo/hello-world/issues?state=all',
      headers: { accept: 'application/vnd.codehost+json' },
    })
    assert.equal(out.status, 200, JSON.stringify(out.body))
    assert.equal(out.body.output.status, 200)
    assert.equal(out.body.output.body[0].number, 1)
    const created = await call(res.body.id, {
      method: 'POST',
      endpoint: '/repos/octo-demo/hello-world/issues',
      headers: { accept: 'application/vnd.codehost+json' },
      body: { title: 'From the HTTP API Call' },
    })
    assert.equal(created.body.output.status, 201)
  })

  test('a named header carries the credential; wrong credentials are refused when connecting', async () => {
    const res = await connect({
      baseUrl: sb.url,
      authType: 'header',
      headerName: 'Authorization',
      headerValue: `token ${sb.demo.token}`,
      name: 'Our code-host',
      checkPath: '/user',
    })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    assert.equal(res.body.accountName, 'Our code-host')
    const ok = await call(res.body.id, { method: 'GET', endpoint: '/user' })
    assert.equal(ok.body.output.body.login, 'octo-demo')

    const bad = await connect({ baseUrl: sb.url, authType: 'bearer', token: 'chp_wrong', checkPath: '/user' })
    assert.equal(bad.status, 400)
    assert.equal(bad.body.error.code, 'INVALID_CREDENTIALS')
  })
})

describe('authentication on the wire, and where requests go', () => {
  let basic: string
  let query: string
  let header: string

  before(async () => {
    basic = (
      await connect({ baseUrl: `${echo.url}/api/v3`, authType: 'basic', username: 'ci', password: 'pa55' })
    ).body.id
    query = (
      await connect({
        baseUrl: `${echo.url}/api/v3/`,
        authType: 'query',
        queryParam: 'api_key',
        queryValue: 'k3y',
      })
    ).body.id
    header = (
      await connect({
        baseUrl: `${echo.url}/api`,
        authType: 'header',
        headerName: 'Private-Token',
        headerValue: 's3cr3t-value',
      })
    ).body.id
  })

  test('basic and query authentication are applied below the base path; the caller cannot override them', async () => {
    echo.seen = []
    const b = await call(basic, { method: 'GET', endpoint: '/things?x=1' })
    assert.equal(b.status, 200, JSON.stringify(b.body))
    assert.equal(echo.seen[0].url, '/api/v3/things?x=1')
    assert.equal(echo.seen[0].headers.authorization, `Basic ${Buffer.from('ci:pa55').toString('base64')}`)

    const q = await call(query, {
      method: 'PUT',
      endpoint: '/things/1',
      query: { api_key: 'mine', y: 2 },
      body: { a: 1 },
    })
    assert.equal(q.body.output.status, 200)
    const sent = new URL(echo.seen[1].url, echo.url)
    assert.equal(sent.pathname, '/api/v3/things/1')
    assert.equal(sent.searchParams.get('api_key'), 'k3y', "the connection's parameter wins")
    assert.equal(sent.searchParams.get('y'), '2')
    assert.deepEqual(JSON.parse(echo.seen[1].body), { a: 1 })
    assert.equal(b.body.output.headers['set-cookie'], undefined, 'cookies are not handed back')
  })

  test('credential headers from the caller are refused', async () => {
    for (const h of [{ Authorization: 'Bearer x' }, { cookie: 'a=b' }, { 'x-api-key': 'k' }]) {
      const res = await call(header, { method: 'GET', endpoint: '/x', headers: h })
      assert.equal(res.body.error.code, 'CREDENTIALS_IN_REQUEST', JSON.stringify(res.body))
    }
  })

  test('the endpoint stays below the base address: URLs, climbing and empty segments are refused', async () => {
    echo.seen = []
    for (const endpoint of [
      'http://169.254.169.254/latest/meta-data',
      '//evil.example/x',
      '/../admin',
      '/a/%2e%2e/%2e%2e/admin',
      'relative/path',
      '/x\r\nHost: evil',
    ]) {
      const res = await call(basic, { method: 'GET', endpoint })
      assert.equal(res.status, 400, endpoint)
      assert.equal(res.body.error.code, 'INVALID_ENDPOINT', `${endpoint}: ${JSON.stringify(res.body)}`)
    }
    assert.equal(echo.seen.length, 0, 'nothing was sent')
  })

  test('redirects are not followed: the 302 comes back as it is', async () => {
    echo.seen = []
    const res = await call(basic, { method: 'GET', endpoint: '/redirect' })
    assert.equal(res.status, 200)
    assert.equal(res.body.output.status, 302)
    assert.equal(res.body.output.headers.location, `${echo.url}/landed`)
    assert.deepEqual(
      echo.seen.map((s) => s.url),
      ['/api/v3/redirect'],
    )
  })

  test('an upstream failure comes back with its status, the credential scrubbed from the excerpt', async () => {
    const res = await call(header, { method: 'GET', endpoint: '/fail' })
    assert.equal(res.status, 502)
    assert.equal(res.body.error.code, 'UPSTREAM_ERROR')
    assert.equal(res.body.error.upstream.status, 500)
    assert.ok(!JSON.stringify(res.body).includes('s3cr3t-value'))
    assert.match(res.body.error.upstream.body, /\[redacted\]/)
  })
})

test('the base address is checked: http(s) only, no credentials or query in it, no metadata addresses', async () => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ baseUrl: 'http://169.254.169.254/latest', authType: 'none' }, /link-local/],
    [{ baseUrl: 'http://[fe80::1]/', authType: 'none' }, /link-local/],
    [{ baseUrl: 'http://metadata.google.internal/', authType: 'none' }, /metadata/],
    [{ baseUrl: 'ftp://files.example/', authType: 'none' }, /http or https/],
    [{ baseUrl: 'https://user:pw@api.example/', authType: 'none' }, /credentials/],
    [{ baseUrl: 'https://api.example/?token=x', authType: 'none' }, /query/],
    [{ baseUrl: 'not a url', authType: 'none' }, /http\(s\) address/],
    [
      { baseUrl: 'https://api.example/', authType: 'bearer' },
      /credentials\.token: is required for authType bearer/,
    ],
    [
      { baseUrl: 'https://api.example/', authType: 'header', headerName: 'Host', headerValue: 'x' },
      /headerName/,
    ],
  ]
  for (const [credentials, message] of cases) {
    const res = await connect(credentials)
    assert.equal(res.status, 400, JSON.stringify(credentials))
    assert.equal(res.body.error.code, 'VALIDATION_FAILED')
    assert.match(res.body.error.message, message)
  }
})

test('the catalog lists the http connector; the step search finds it as "self-hosted"', async () => {
  const found = (await t.api('GET', '/v1/steps?q=self-hosted')).body.steps
  assert.deepEqual(
    found.map((s: any) => s.id),
    ['http.api_call'],
  )
  assert.equal(found[0].name, 'HTTP API Call')
  const { body } = await t.api('GET', '/v1/catalog')
  const c = body.connectors.find((x: any) => x.id === 'http')
  assert.deepEqual(
    c.auth.map((a: any) => a.id),
    ['custom'],
  )
  assert.deepEqual(Object.keys(c.auth[0].credentialsSchema.properties).sort(), [
    'authType',
    'baseUrl',
    'checkPath',
    'headerName',
    'headerValue',
    'name',
    'password',
    'queryParam',
    'queryValue',
    'token',
    'username',
  ])
})
