// Long work as jobs with progress (engine/jobs/long-jobs.ts, POST /v1/jobs), end to end over real
// HTTP: a bulk enrichment of many people against the contact-data sandbox, watched piece by piece
// (a gate in front of the sandbox holds each bulk request until the test has read the job's
// progress, so "progress goes up" is seen on every piece, not raced), cancelled, and resumed by a
// new instance after the one working on it stopped; and a replay of many dead deliveries to an
// agent's webhook against the task-board sandbox.
import assert from 'node:assert/strict'
import http from 'node:http'
import { after, before, describe, test } from 'node:test'
import { type Dispatcher, request } from 'undici'
import { type ContactdataSandbox, startContactdataSandbox } from '../../sandbox/contactdata/index.ts'
import { serviceDatabase } from '../helpers/databases.ts'
import { eventually, Receiver } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { control, taskboardRest } from '../helpers/taskboard.ts'

/**
 * A pass-through to the contact-data sandbox that, while `holding`, keeps each bulk lookup until
 * the test releases it: the job's next piece waits there, and what the job reports meanwhile is
 * what it had done before it.
 */
class BulkGate {
  holding = true
  held: Array<() => void> = []
  bulkRequests = 0
  url = ''
  #server: http.Server
  #waiters: Array<() => void> = []

  constructor(target: string) {
    this.#server = http.createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c) => chunks.push(c))
      req.on('end', () => {
        const forward = async () => {
          const { host: _host, connection: _c, ...headers } = req.headers
          const up = await request(target + req.url, {
            method: req.method as Dispatcher.HttpMethod,
            headers: headers as Record<string, string>,
            body: chunks.length ? Buffer.concat(chunks) : undefined,
          })
          const body = Buffer.from(await up.body.arrayBuffer())
          const out: Record<string, string | string[]> = {}
          for (const [k, v] of Object.entries(up.headers))
            if (v !== undefined && !['transfer-encoding', 'connection', 'content-length'].includes(k))
              out[k] = v
          res.writeHead(up.statusCode, out).end(body)
        }
        const bulk = req.url?.startsWith('/person/bulk') ?? false
        if (bulk) this.bulkRequests++
        if (bulk && this.holding) {
          this.held.push(() => void forward())
          for (const w of this.#waiters.splice(0)) w()
        } else void forward()
      })
    })
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.#server.listen(0, '127.0.0.1', r))
    this.url = `http://127.0.0.1:${(this.#server.address() as { port: number }).port}`
    return this
  }

  /** Resolves once `n` bulk requests are held. */
  async untilHeld(n: number): Promise<void> {
    while (this.held.length < n) await new Promise<void>((r) => this.#waiters.push(r))
  }

  /** Lets the held requests through. */
  releaseAll(): void {
    for (const go of this.held.splice(0)) go()
  }

  async close(): Promise<void> {
    this.holding = false
    this.releaseAll()
    this.#server.closeAllConnections()
    await new Promise((r) => this.#server.close(r))
  }
}

const DOMAIN = 'longjobs-people.test'
const N_PEOPLE = 600
const emailOf = (n: number) => `p${n}@${DOMAIN}`
const costOf = (n: number) => (n % 4 === 0 ? 2 : 1)

describe('a bulk enrichment as a job', () => {
  let sandbox: ContactdataSandbox
  let gate: BulkGate
  let t: TestService

  before(async () => {
    sandbox = await startContactdataSandbox()
    await control(sandbox, 'POST', '/seed', {
      companies: [{ name: 'Longjobs Ltd', domain: DOMAIN, employeeCount: 900, industry: 'Software' }],
      people: Array.from({ length: N_PEOPLE }, (_, n) => ({
        firstName: 'Lane',
        lastName: `Number${n}`,
        email: emailOf(n),
        company: DOMAIN,
        jobTitle: 'Engineer',
        seniority: 'senior',
        ...(n % 4 === 0 ? { phone: `+1415556${String(1000 + n).slice(-4)}` } : {}),
      })),
    })
    gate = await new BulkGate(sandbox.url).start()
    t = await startTestService({ contactdata: { ...sandbox, url: gate.url } })
  })
  after(async () => {
    await gate.close()
    await t?.close()
    await sandbox.close()
  })

  async function connection(credits = 10_000): Promise<string> {
    const acct = await control(sandbox, 'POST', '/accounts', {
      name: `Jobs ${Math.random().toString(36).slice(2, 8)}`,
      plan: 'enterprise',
      credits,
    })
    const conn = await t.api('POST', '/v1/connections', {
      connector: 'contactdata',
      authMethod: 'api_key',
      credentials: { apiKey: acct.apiKey },
    })
    assert.equal(conn.status, 201, JSON.stringify(conn.body))
    return conn.body.id
  }

  const people = (from: number, to: number) =>
    Array.from({ length: to - from }, (_, i) => ({ email: emailOf(from + i) }))

  test('600 people: the job answers 202 at once, its progress goes up 100 at a time, and it ends with every result', async () => {
    const connectionId = await connection()
    gate.holding = true
    const started = await t.api('POST', '/v1/jobs', {
      kind: 'enrich_contacts',
      connectionId,
      contacts: people(0, N_PEOPLE),
    })
    assert.equal(started.status, 202, JSON.stringify(started.body))
    assert.equal(started.body.kind, 'enrich_contacts')
    assert.equal(started.body.total, N_PEOPLE)
    assert.equal(started.body.done, 0)
    const id = started.body.id
    const seen: number[] = []
    for (let piece = 0; piece < N_PEOPLE / 100; piece++) {
      await gate.untilHeld(1)
      const now = await t.api('GET', `/v1/jobs/${id}`)
      assert.equal(now.status, 200)
      assert.equal(now.body.status, 'running')
      assert.equal(
        now.body.result?.results.length ?? 0,
        now.body.done,
        'the result so far has one record per contact done',
      )
      seen.push(now.body.done)
      gate.releaseAll()
    }
    assert.deepEqual(seen, [0, 100, 200, 300, 400, 500], 'progress seen before each piece')
    const done = await eventually(
      async () => (await t.api('GET', `/v1/jobs/${id}`)).body,
      (j) => j.status !== 'running',
    )
    assert.equal(done.status, 'succeeded', JSON.stringify(done.error))
    assert.equal(done.done, N_PEOPLE)
    assert.equal(done.errors, 0)
    assert.equal(done.result.results.length, N_PEOPLE)
    assert.equal(done.result.matched, N_PEOPLE)
    assert.ok(
      done.result.results.every(
        (r: any, i: number) => r.matched && r.contact.emails[0].address === emailOf(i),
      ),
    )
    const expected = Array.from({ length: N_PEOPLE }, (_, n) => costOf(n)).reduce((a, b) => a + b, 0)
    assert.equal(done.result.creditsCharged, expected, 'credits: 1 a person, 2 with a phone')
    assert.ok(done.startedAt && done.finishedAt && done.finishedAt >= done.startedAt)

    const list = await t.api('GET', '/v1/jobs?limit=10')
    assert.equal(list.status, 200)
    const listed = list.body.jobs.find((j: any) => j.id === id)
    assert.equal(listed.status, 'succeeded')
    assert.equal(listed.done, N_PEOPLE)
    assert.equal(listed.result, undefined, 'the list leaves results out')
  })

  test('a cancelled job stops after the piece under way; what was done stays, and a second cancel of an ended job is refused', async () => {
    const connectionId = await connection()
    gate.holding = true
    const started = await t.api('POST', '/v1/jobs', {
      kind: 'enrich_contacts',
      connectionId,
      contacts: people(0, 300),
    })
    const id = started.body.id
    await gate.untilHeld(1)
    gate.releaseAll()
    await gate.untilHeld(1)
    const cancel = await t.api('POST', `/v1/jobs/${id}/cancel`)
    assert.equal(cancel.status, 202)
    assert.equal(cancel.body.cancelRequested, true)
    gate.releaseAll()
    const ended = await eventually(
      async () => (await t.api('GET', `/v1/jobs/${id}`)).body,
      (j) => j.status !== 'running',
    )
    assert.equal(ended.status, 'cancelled')
    assert.equal(ended.done, 200, 'the piece under way when it was cancelled was finished')
    assert.equal(ended.result.results.length, 200)
    const again = await t.api('POST', `/v1/jobs/${id}/cancel`)
    assert.equal(again.status, 202, 'cancelling a cancelled job again changes nothing')
    gate.holding = false
  })

  test('bad input is refused before anything is stored or charged: a contact named by its place, a connection of another kind, an unknown job', async () => {
    const connectionId = await connection()
    const before = gate.bulkRequests
    const bad = await t.api('POST', '/v1/jobs', {
      kind: 'enrich_contacts',
      connectionId,
      contacts: [...people(0, 150), { email: 'not an email' }],
    })
    assert.equal(bad.status, 400)
    assert.equal(bad.body.error.code, 'VALIDATION_FAILED')
    assert.match(bad.body.error.message, /contacts\.150/)
    const tb = await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: {
        key: t.taskboard.demo.key,
        token: t.taskboard.demo.token,
        secret: t.taskboard.demo.secret,
      },
    })
    const wrong = await t.api('POST', '/v1/jobs', {
      kind: 'enrich_contacts',
      connectionId: tb.body.id,
      contacts: people(0, 2),
    })
    assert.equal(wrong.status, 400)
    assert.match(wrong.body.error.message, /contactdata/)
    const none = await t.api('POST', '/v1/jobs', {
      kind: 'enrich_contacts',
      connectionId: 'con_nope',
      contacts: people(0, 2),
    })
    assert.equal(none.status, 404)
    assert.equal(none.body.error.code, 'CONNECTION_NOT_FOUND')
    const missing = await t.api('GET', '/v1/jobs/job_nope')
    assert.equal(missing.status, 404)
    assert.equal(missing.body.error.code, 'JOB_NOT_FOUND')
    assert.equal(gate.bulkRequests, before, 'nothing was looked up')
  })

  test('an instance that stops mid-job gives it back; the next one resumes it from where it was and finishes it', async () => {
    // Its own store, shared by the two instances one after the other.
    const database = serviceDatabase().fresh()
    const shared = { ...serviceDatabase(), fresh: () => database }
    const first = await startTestService({ db: shared, contactdata: { ...sandbox, url: gate.url } })
    const acct = await control(sandbox, 'POST', '/accounts', {
      name: 'Resumed',
      plan: 'enterprise',
      credits: 10_000,
    })
    const conn = await first.api('POST', '/v1/connections', {
      connector: 'contactdata',
      authMethod: 'api_key',
      credentials: { apiKey: acct.apiKey },
    })
    gate.holding = true
    const bulkBefore = gate.bulkRequests
    const started = await first.api('POST', '/v1/jobs', {
      kind: 'enrich_contacts',
      connectionId: conn.body.id,
      contacts: people(0, 300),
    })
    const id = started.body.id
    await gate.untilHeld(1)
    gate.releaseAll()
    await gate.untilHeld(1)
    // The first instance stops while its second piece is upstream; the piece's answer comes too late.
    const closing = first.service.close()
    gate.holding = false
    gate.releaseAll()
    await closing
    await first.taskboard.close()

    const second = await startTestService({ db: shared, contactdata: { ...sandbox, url: gate.url } })
    try {
      // Its adminKey is its own; the job is in the workspace the store holds.
      const ended = await eventually(
        async () => (await second.api('GET', `/v1/jobs/${id}`)).body,
        (j) => j.status === 'succeeded' || j.status === 'failed',
      )
      assert.equal(ended.status, 'succeeded', JSON.stringify(ended.error))
      assert.equal(ended.done, 300)
      assert.equal(ended.result.results.length, 300)
      assert.ok(
        ended.result.results.every(
          (r: any, i: number) => r.matched && r.contact.emails[0].address === emailOf(i),
        ),
      )
      assert.equal(
        gate.bulkRequests - bulkBefore,
        4,
        'three pieces, the one under way at the stop sent again; the first piece was not done again',
      )
    } finally {
      await second.close()
    }
  })
})

describe('a replay of many dead deliveries as a job', () => {
  let t: TestService
  let receiver: Receiver
  let agentId: string

  before(async () => {
    receiver = await new Receiver().start()
    t = await startTestService({
      env: { PATCHBAY_DELIVERY_RETRY_SCHEDULE_MS: '10', PATCHBAY_DELIVERY_SCAN_MS: '25' },
    })
    const conn = await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: {
        key: t.taskboard.demo.key,
        token: t.taskboard.demo.token,
        secret: t.taskboard.demo.secret,
      },
    })
    const agent = await t.api('POST', '/v1/agents', {
      name: 'unreachable for a while',
      scope: { boards: [t.taskboard.demo.boardId] },
      connectionIds: [conn.body.id],
      delivery: { type: 'webhook', url: receiver.url },
    })
    agentId = agent.body.id
    receiver.secret = agent.body.signingSecret
    const trig = await t.api('POST', `/v1/agents/${agentId}/triggers`, {
      trigger: 'taskboard.new_card',
      connectionId: conn.body.id,
      config: { idBoard: t.taskboard.demo.boardId },
    })
    assert.equal(trig.status, 201, JSON.stringify(trig.body))
  })
  after(async () => {
    await t.close()
    await receiver.close()
  })

  test('40 dead deliveries replayed by one job: it counts them all, and the agent receives each again with its own id', async () => {
    const N = 40
    receiver.failNext = 1_000_000
    for (let i = 0; i < N; i++)
      await taskboardRest(t.taskboard, 'POST', '/1/cards', {
        idList: t.taskboard.demo.listIds[0],
        name: `dead ${i}`,
      })
    const dead = await eventually(
      async () =>
        (await t.api('GET', `/v1/deliveries?status=dead&agentId=${agentId}&limit=100`)).body.deliveries,
      (d: any[]) => d.length === N,
    )
    receiver.failNext = 0
    const from = receiver.received.length
    const started = await t.api('POST', '/v1/jobs', { kind: 'replay_deliveries', agentId })
    assert.equal(started.status, 202, JSON.stringify(started.body))
    assert.equal(started.body.total, N)
    const ended = await eventually(
      async () => (await t.api('GET', `/v1/jobs/${started.body.id}`)).body,
      (j) => j.status !== 'queued' && j.status !== 'running',
    )
    assert.equal(ended.status, 'succeeded')
    assert.equal(ended.done, N)
    assert.equal(ended.errors, 0)
    assert.deepEqual(ended.result, { replayed: N, failed: [] })
    const got = await receiver.until((r) => r.length - from >= N)
    assert.deepEqual(
      new Set(got.slice(from).map((r) => r.id)),
      new Set(dead.map((d: any) => d.id)),
      'each dead delivery is sent again under its own webhook-id',
    )
    assert.ok(got.slice(from).every((r) => r.verified))
    await eventually(
      async () =>
        (await t.api('GET', `/v1/deliveries?status=dead&agentId=${agentId}`)).body.deliveries.length,
      (n) => n === 0,
    )
    const nothingLeft = await t.api('POST', '/v1/jobs', { kind: 'replay_deliveries', agentId })
    assert.equal(nothingLeft.status, 202)
    assert.equal(nothingLeft.body.total, 0)
  })
})
