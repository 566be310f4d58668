// The egress guard against a table of spellings. Nothing here sends traffic anywhere but loopback:
// names resolve through a stub resolver, and for every internal or metadata address the guard's
// refusal (before any socket opens) is the assertion.
import assert from 'node:assert/strict'
import http from 'node:http'
import { after, before, describe, test } from 'node:test'
import { request } from 'undici'
import { EgressGuard, EgressRefusedError, type Resolve } from '../../src/kit/egress.ts'
import { eventually } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

/** The stub resolver: names of the tests, never the system's. */
const names: Record<string, string[]> = {
  localhost: ['127.0.0.1', '::1'],
  'loop4.test': ['127.0.0.1'],
  'inside.test': ['10.0.0.5'],
  'ula.test': ['fd12:3456::1'],
  'metadata-alias.test': ['169.254.169.254'],
  'mapped-alias.test': ['::ffff:169.254.169.254'],
  'nat64-alias.test': ['64:ff9b::a9fe:a9fe'],
  'split.test': ['93.184.216.34', '169.254.169.254'],
  'public.test': ['93.184.216.34'],
  'git.corp': ['10.1.1.1'],
  'other.corp': ['10.1.1.2'],
}
let flip = '93.184.216.34'
const resolve: Resolve = async (host) => {
  if (host === 'flip.test') return [{ address: flip, family: flip.includes(':') ? 6 : 4 }]
  const found = names[host]
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })
  return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
}

/** Never reachable, whatever PATCHBAY_EGRESS_ALLOW says. */
const NEVER = [
  'http://169.254.169.254/latest/meta-data',
  'http://2852039166/',
  'http://0xa9.0xfe.0xa9.0xfe/',
  'http://0251.0376.0251.0376/',
  'http://169.254.169.254./',
  'http://[::ffff:a9fe:a9fe]/',
  'http://[::ffff:169.254.169.254]/',
  'http://[0:0:0:0:0:ffff:a9fe:a9fe]/',
  'http://[::a9fe:a9fe]/',
  'http://[64:ff9b::a9fe:a9fe]/',
  'http://[2002:a9fe:a9fe::1]/',
  'http://[fd00:ec2::254]/',
  'http://[fe80::1]/',
  'http://100.100.100.200/',
  'http://metadata.google.internal/',
  'http://metadata.google.internal./',
  'http://METADATA.google.internal/',
  'http://0.0.0.0/',
  'http://0/',
  'http://[::]/',
  'http://[::ffff:0.0.0.0]/',
  'http://[::ffff:0:0]/',
  'http://224.0.0.1/',
  'http://255.255.255.255/',
  'http://metadata-alias.test/',
  'http://mapped-alias.test/',
  'http://nat64-alias.test/',
  'http://split.test/',
]

/** Internal: refused unless the operator allows them. */
const INTERNAL = [
  'http://127.0.0.1/',
  'http://127.1/',
  'http://2130706433/',
  'http://0x7f000001/',
  'http://[::1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://[::7f00:1]/',
  'http://[64:ff9b::7f00:1]/',
  'http://10.0.0.1/',
  'http://172.16.0.1/',
  'http://192.168.1.1/',
  'http://100.64.0.1/',
  'http://[fc00::1]/',
  'http://[::ffff:10.0.0.1]/',
  'http://localhost/',
  'http://localhost./',
  'http://inside.test/',
  'http://inside.test./',
  'http://ula.test/',
]

const refusal = async (guard: EgressGuard, url: string): Promise<unknown> => {
  try {
    await guard.check(url, 'url')
    return null
  } catch (err) {
    return err
  }
}

describe('the guard, when an address is saved', () => {
  const strict = new EgressGuard({ resolve })
  const open = new EgressGuard({
    resolve,
    allow: ['0.0.0.0/0', '::/0', '169.254.0.0/16', 'metadata.google.internal'],
  })

  test('metadata, link-local, unspecified and broadcast addresses are refused in every spelling, even when allowed', async () => {
    for (const url of NEVER)
      for (const guard of [strict, open]) {
        const err = (await refusal(guard, url)) as { code?: string; status?: number } | null
        assert.equal(err?.code, 'EGRESS_REFUSED', url)
        assert.equal(err?.status, 403, url)
      }
  })

  test('loopback and private addresses are refused in every spelling unless PATCHBAY_EGRESS_ALLOW allows them', async () => {
    for (const url of INTERNAL) {
      const err = (await refusal(strict, url)) as { code?: string; message?: string } | null
      assert.equal(err?.code, 'EGRESS_REFUSED', url)
      assert.match(err?.message ?? '', /PATCHBAY_EGRESS_ALLOW/, url)
      assert.equal(await refusal(open, url), null, `${url} is allowed by the open guard`)
    }
  })

  test('allow entries: a host name lets its own addresses through, a CIDR its range, host:port only that port', async () => {
    const byName = new EgressGuard({ resolve, allow: ['git.corp'] })
    assert.equal(await refusal(byName, 'https://git.corp/api/v3'), null)
    assert.equal(((await refusal(byName, 'https://other.corp/')) as any)?.code, 'EGRESS_REFUSED')
    const byRange = new EgressGuard({ resolve, allow: ['10.1.0.0/16'] })
    assert.equal(await refusal(byRange, 'https://other.corp/'), null)
    assert.equal(((await refusal(byRange, 'http://inside.test/')) as any)?.code, 'EGRESS_REFUSED')
    const byPort = new EgressGuard({ resolve, allow: ['127.0.0.1:4010'] })
    assert.equal(await refusal(byPort, 'http://127.0.0.1:4010/'), null)
    assert.equal(
      await refusal(byPort, 'http://loop4.test:4010/'),
      null,
      'the name resolves to the allowed address',
    )
    // One refused address among a name's addresses refuses the name (::1 is not allowed here).
    assert.equal(((await refusal(byPort, 'http://localhost:4010/')) as any)?.code, 'EGRESS_REFUSED')
    assert.equal(((await refusal(byPort, 'http://127.0.0.1:4011/')) as any)?.code, 'EGRESS_REFUSED')
    assert.throws(() => new EgressGuard({ allow: ['not a host!'] }), /not a host name/)
    assert.throws(() => new EgressGuard({ allow: ['10.0.0.0/99'] }), /CIDR/)
  })

  test('public addresses pass (checked only: nothing is sent to them)', async () => {
    for (const url of ['https://93.184.216.34/', 'https://public.test/', 'https://[2606:4700::1111]/'])
      assert.equal(await refusal(strict, url), null, url)
  })
})

describe('the guard, at connect time', () => {
  let internal: http.Server
  let hits = 0
  let port = 0
  before(async () => {
    // An "internal" listener on loopback: the guard must keep every request below away from it.
    internal = http.createServer((_req, res) => {
      hits++
      res.end('internal secret')
    })
    await new Promise<void>((r) => internal.listen(0, '127.0.0.1', r))
    port = (internal.address() as { port: number }).port
  })
  after(() => new Promise<void>((r) => internal.close(() => r())))

  test('every refused spelling is refused by the dispatcher before a socket opens', async () => {
    const guard = new EgressGuard({ resolve })
    const dispatcher = guard.dispatcher()
    const urls = [
      ...NEVER,
      ...INTERNAL,
      `http://127.0.0.1:${port}/`,
      `http://localhost:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
    ]
    for (const url of urls) {
      await assert.rejects(
        request(url, { dispatcher }),
        (err: unknown) => err instanceof EgressRefusedError,
        url,
      )
    }
    await dispatcher.close()
    assert.equal(hits, 0, 'nothing reached the internal listener')
  })

  test('a name that resolved to a public address when saved and re-resolves to an internal one is refused', async () => {
    const guard = new EgressGuard({ resolve, allow: [] })
    flip = '93.184.216.34'
    assert.equal(await refusal(guard, `http://flip.test:${port}/`), null)
    flip = '127.0.0.1'
    const dispatcher = guard.dispatcher()
    await assert.rejects(request(`http://flip.test:${port}/`, { dispatcher }), EgressRefusedError)
    flip = '::ffff:169.254.169.254'
    await assert.rejects(request(`http://flip.test:${port}/`, { dispatcher }), EgressRefusedError)
    await dispatcher.close()
    assert.equal(hits, 0)
  })
})

describe('the guard in the service', () => {
  let t: TestService
  let redirector: http.Server
  let internal: http.Server
  let internalHits = 0
  let redirectorUrl = ''
  let internalUrl = ''
  before(async () => {
    internal = http.createServer((_req, res) => {
      internalHits++
      res.end('{"secret":true}')
    })
    await new Promise<void>((r) => internal.listen(0, '127.0.0.1', r))
    internalUrl = `http://127.0.0.1:${(internal.address() as { port: number }).port}`
    // Answers every request with a redirect to the internal listener.
    redirector = http.createServer((req, res) => {
      res.writeHead(302, { location: `${internalUrl}/latest/meta-data${req.url}` }).end()
    })
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r))
    redirectorUrl = `http://127.0.0.1:${(redirector.address() as { port: number }).port}`
    t = await startTestService({
      contactdata: true,
      egressResolve: resolve,
      // Only the redirector and the sandboxes are allowed (not the internal listener).
      env: { PATCHBAY_EGRESS_ALLOW: `127.0.0.1:${new URL(redirectorUrl).port}` },
    })
  })
  after(async () => {
    await t.close()
    redirector.closeAllConnections()
    internal.closeAllConnections()
    await new Promise<void>((r) => redirector.close(() => r()))
    await new Promise<void>((r) => internal.close(() => r()))
  })

  const connect = (baseUrl: string) =>
    t.api('POST', '/v1/connections', {
      connector: 'http',
      authMethod: 'custom',
      credentials: { baseUrl, authType: 'none' },
    })

  test('an http connection to any refused spelling is refused with a 4xx, and nothing is stored', async () => {
    const before = (await t.api('GET', '/v1/connections')).body.connections.length
    for (const url of [...NEVER, ...INTERNAL, internalUrl]) {
      const res = await connect(url)
      assert.ok(res.status === 400 || res.status === 403, `${url} → ${res.status}`)
      assert.ok(['VALIDATION_FAILED', 'EGRESS_REFUSED'].includes(res.body.error.code), url)
      assert.ok(res.body.error.hint, url)
    }
    assert.equal((await t.api('GET', '/v1/connections')).body.connections.length, before)
  })

  test("an agent's delivery URL is refused in every refused spelling, on create and on change", async () => {
    const ok = await t.api('POST', '/v1/agents', { name: 'egress', delivery: { type: 'stream' } })
    assert.equal(ok.status, 201)
    for (const url of [...NEVER, ...INTERNAL, `${internalUrl}/hook`]) {
      const made = await t.api('POST', '/v1/agents', { name: 'x', delivery: { type: 'webhook', url } })
      assert.ok(made.status === 400 || made.status === 403, `${url} → ${made.status}`)
      const changed = await t.api('PATCH', `/v1/agents/${ok.body.id}`, { delivery: { type: 'webhook', url } })
      assert.ok(changed.status === 400 || changed.status === 403, `${url} → ${changed.status}`)
    }
    assert.equal((await t.api('GET', `/v1/agents/${ok.body.id}`)).body.delivery.type, 'stream')
  })

  test('a sign-in return address may not point at a metadata address', async () => {
    for (const returnTo of [
      'http://169.254.169.254/',
      'http://[::ffff:a9fe:a9fe]/',
      'http://metadata.google.internal./',
    ]) {
      const res = await t.api('POST', '/v1/connections/oauth/start', {
        connector: 'taskboard',
        mode: 'redirect',
        returnTo,
      })
      assert.equal(res.status, 400, returnTo)
    }
  })

  test('a base address whose name later resolves to an internal address is refused at connect time', async () => {
    flip = '127.0.0.1'
    const port = new URL(redirectorUrl).port
    const saved = await connect(`http://flip.test:${port}/api`)
    assert.equal(saved.status, 201, JSON.stringify(saved.body))
    flip = '169.254.169.254'
    const res = await t.api('POST', '/v1/steps/http.api_call/run', {
      connectionId: saved.body.id,
      input: { method: 'GET', endpoint: '/x' },
    })
    assert.equal(res.status, 403, JSON.stringify(res.body))
    assert.equal(res.body.error.code, 'EGRESS_REFUSED')
    assert.match(res.body.error.message, /link-local/)
  })

  test('redirects are never followed: an API Call shows the 302, the internal listener sees nothing', async () => {
    flip = '127.0.0.1'
    const saved = await connect(redirectorUrl)
    assert.equal(saved.status, 201, JSON.stringify(saved.body))
    const res = await t.api('POST', '/v1/steps/http.api_call/run', {
      connectionId: saved.body.id,
      input: { method: 'GET', endpoint: '/anything' },
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.output.status, 302)
    assert.equal(internalHits, 0)
  })
})

describe("the guard on an agent's deliveries", () => {
  let t: TestService
  let receiver: http.Server
  let hits = 0
  let agentHost = '127.0.0.1'
  before(async () => {
    receiver = http.createServer((req, res) => {
      hits++
      req.resume()
      res.end()
    })
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
    t = await startTestService({
      egressResolve: async (host) => {
        if (host !== 'agent.test') throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' })
        return [{ address: agentHost, family: 4 }]
      },
    })
  })
  after(async () => {
    await t.close()
    receiver.closeAllConnections()
    await new Promise<void>((r) => receiver.close(() => r()))
  })

  test('a delivery URL whose name re-resolves to a metadata address is refused at connect time; the receiver sees nothing', async () => {
    const demo = t.taskboard.demo
    const conn = await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: demo.key, token: demo.token, secret: demo.secret },
    })
    assert.equal(conn.status, 201, JSON.stringify(conn.body))
    const url = `http://agent.test:${(receiver.address() as { port: number }).port}/hook`
    const agent = await t.api('POST', '/v1/agents', {
      name: 'flipping receiver',
      scope: { boards: [demo.boardId] },
      connectionIds: [conn.body.id],
      delivery: { type: 'webhook', url },
    })
    assert.equal(agent.status, 201, JSON.stringify(agent.body))
    const trigger = await t.api('POST', `/v1/agents/${agent.body.id}/triggers`, {
      trigger: 'taskboard.new_card',
      connectionId: conn.body.id,
      config: { idBoard: demo.boardId },
    })
    assert.equal(trigger.status, 201, JSON.stringify(trigger.body))
    agentHost = '169.254.169.254'
    const card = await t.api('POST', '/v1/steps/taskboard.create_card/run', {
      connectionId: conn.body.id,
      input: { idList: demo.listIds[0], name: 'delivered nowhere' },
    })
    assert.equal(card.status, 200, JSON.stringify(card.body))
    const failed = await eventually(
      async () => (await t.api('GET', `/v1/deliveries?agentId=${agent.body.id}`)).body.deliveries,
      // An attempt made and its outcome written (a push is claimed, attempt 1, as it is stored).
      (ds: any[]) => ds.some((d) => d.attempts > 0 && (d.status !== 'pending' || d.lastError !== null)),
    )
    const attempted = failed.find(
      (d: any) => d.attempts > 0 && (d.status !== 'pending' || d.lastError !== null),
    )
    assert.notEqual(attempted.status, 'delivered')
    assert.match(attempted.lastError, /does not send to agent\.test \(169\.254\.169\.254\).*link-local/)
    assert.equal(hits, 0)
  })
})

test('a configured upstream the guard refuses is 403 EGRESS_REFUSED naming the host and the allow entry, not bad credentials', async () => {
  // The task-board sandbox listens on loopback, which this operator did not allow.
  const t = await startTestService({ env: { PATCHBAY_EGRESS_ALLOW: '10.9.9.9' } })
  try {
    const entry = `127.0.0.1:${new URL(t.taskboard.url).port}`
    const res = await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: {
        key: t.taskboard.demo.key,
        token: t.taskboard.demo.token,
        secret: t.taskboard.demo.secret,
      },
    })
    assert.equal(res.status, 403, JSON.stringify(res.body))
    assert.equal(res.body.error.code, 'EGRESS_REFUSED')
    assert.match(res.body.error.message, /127\.0\.0\.1/)
    assert.doesNotMatch(res.body.error.message, /\.\./)
    assert.ok(res.body.error.hint.includes(`add ${entry}`), res.body.error.hint)
    assert.match(res.body.error.hint, /PATCHBAY_EGRESS_ALLOW/)
    // A delivery URL on a private address says the same, with its own entry.
    const agent = await t.api('POST', '/v1/agents', {
      name: 'egress-hint',
      delivery: { type: 'webhook', url: 'http://192.168.7.7:9000/hook' },
    })
    assert.equal(agent.status, 403, JSON.stringify(agent.body))
    assert.equal(agent.body.error.code, 'EGRESS_REFUSED')
    assert.match(agent.body.error.message, /^delivery\.url: /)
    assert.ok(agent.body.error.hint.includes('add 192.168.7.7:9000'), agent.body.error.hint)
  } finally {
    await t.close()
  }
})
