// Upstream webhook → agent delivery, end to end with durable storage: signed task-board
// deliveries posted to Patchbay's ingress (running as its own process, on SQLite by default),
// matched to a New Card trigger and pushed, signed, to a local agent endpoint. Beside it, in the
// same run, the no-op baseline: the same POSTs sent straight to the agent endpoint. Prints one
// JSON line: throughput at full load and latency (p50, p99) at a fixed 500 events/s.
import { spawn } from 'node:child_process'
import { createHmac, randomBytes } from 'node:crypto'
import http from 'node:http'
import net from 'node:net'
import path from 'node:path'
import { Agent, request } from 'undici'
import { startTaskboardSandbox } from '../sandbox/taskboard/index.ts'
import { tempDir } from '../test/helpers/databases.ts'
import { median, percentile, round } from './_stats.ts'

const THROUGHPUT_EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000)
const RATE = Number(process.env.BENCH_RATE ?? 500)
const RATE_SECONDS = Number(process.env.BENCH_RATE_SECONDS ?? 10)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 256)

const root = path.resolve(import.meta.dirname, '..')
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port
      s.close(() => resolve(p))
    })
  })

// The agent endpoint: notes when each event arrives (by the upstream action id).
const arrivals = new Map<string, number>()
let onArrival: (() => void) | null = null
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString())
    const id = body.data?.event?.upstreamId ?? body.action?.id
    arrivals.set(id, performance.now())
    res.writeHead(200).end()
    onArrival?.()
  })
})
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
const receiverUrl = `http://127.0.0.1:${(receiver.address() as net.AddressInfo).port}/agent`

const sandbox = await startTaskboardSandbox()
const port = await freePort()
const adminKey = 'pb_admin_bench_events'
const child = spawn(process.execPath, [path.join(root, 'src/main.ts')], {
  cwd: root,
  env: {
    ...process.env,
    PORT: String(port),
    PATCHBAY_DATA_DIR: process.env.BENCH_DATA_DIR ?? tempDir('patchbay-bench-events-'),
    PATCHBAY_ADMIN_KEY: adminKey,
    PATCHBAY_TASKBOARD_URL: sandbox.url,
    PATCHBAY_CODEHOST_URL: 'http://127.0.0.1:9',
    PATCHBAY_CONTACTDATA_URL: 'http://127.0.0.1:9',
    // The sandbox and the receiver listen on loopback, which the egress guard refuses unless allowed.
    PATCHBAY_EGRESS_ALLOW: '127.0.0.1',
    LOG_LEVEL: 'silent',
  },
  stdio: ['ignore', 'ignore', 'inherit'],
})
const base = `http://127.0.0.1:${port}`
for (let i = 0; ; i++) {
  if (
    await fetch(`${base}/healthz`)
      .then((r) => r.ok)
      .catch(() => false)
  )
    break
  if (i > 200) throw new Error('Patchbay did not start')
  await new Promise((r) => setTimeout(r, 100))
}
const api = async (method: string, p: string, body?: unknown) =>
  (
    await fetch(base + p, {
      method,
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
  ).json()
const conn = await api('POST', '/v1/connections', {
  connector: 'taskboard',
  authMethod: 'api_key_token',
  credentials: { key: sandbox.demo.key, token: sandbox.demo.token, secret: sandbox.demo.secret },
})
const agent = await api('POST', '/v1/agents', {
  name: 'bench',
  scope: { boards: [sandbox.demo.boardId] },
  connectionIds: [conn.id],
  delivery: { type: 'webhook', url: receiverUrl },
})
const trig = await api('POST', `/v1/agents/${agent.id}/triggers`, {
  trigger: 'taskboard.new_card',
  connectionId: conn.id,
  config: { idBoard: sandbox.demo.boardId },
})
const hookUrl = `${base}/hooks/taskboard/${trig.webhook.id}`

const dispatcher = new Agent({ connections: CONCURRENCY })
function delivery(url: string) {
  const id = randomBytes(12).toString('hex')
  const body = JSON.stringify({
    action: {
      id,
      type: 'createCard',
      date: new Date().toISOString(),
      data: {
        board: { id: sandbox.demo.boardId },
        list: { id: sandbox.demo.listIds[0] },
        card: { id: randomBytes(12).toString('hex'), name: 'bench' },
      },
    },
    model: { id: sandbox.demo.boardId },
  })
  const signature = createHmac('sha1', sandbox.demo.secret)
    .update(body + url)
    .digest('base64')
  return { id, body, headers: { 'content-type': 'application/json', 'x-taskboard-webhook': signature } }
}

/** Sends `n` deliveries to `url` (at most `rate` per second when given); resolves when all arrived. */
async function run(url: string, n: number, rate?: number) {
  arrivals.clear()
  const sentAt = new Map<string, number>()
  const started = performance.now()
  let next = 0
  let failures = 0
  const all = new Promise<void>((resolve) => {
    onArrival = () => {
      if (arrivals.size >= n - failures) resolve()
    }
  })
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        const i = next++
        if (rate) {
          const due = started + (i * 1000) / rate
          const wait = due - performance.now()
          if (wait > 0) await new Promise((r) => setTimeout(r, wait))
        }
        const d = delivery(url)
        sentAt.set(d.id, performance.now())
        const res = await request(url, { method: 'POST', headers: d.headers, body: d.body, dispatcher })
        await res.body.dump()
        if (res.statusCode !== 200) failures++
      }
    }),
  )
  if (arrivals.size < n - failures) await all
  const wallMs = Math.max(...arrivals.values()) - started
  const latencies = [...arrivals.entries()]
    .map(([id, at]) => at - (sentAt.get(id) ?? at))
    .sort((a, b) => a - b)
  return {
    eventsPerSecond: (arrivals.size / wallMs) * 1000,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    failures,
  }
}

// Warm-up.
await run(receiverUrl, 1000)
await run(hookUrl, 2000)

const rows = {
  baseline: [] as any[],
  patchbay: [] as any[],
  baselineRate: [] as any[],
  patchbayRate: [] as any[],
}
for (let r = 0; r < ROUNDS; r++) {
  rows.baseline.push(await run(receiverUrl, THROUGHPUT_EVENTS))
  rows.patchbay.push(await run(hookUrl, THROUGHPUT_EVENTS))
  rows.baselineRate.push(await run(receiverUrl, RATE * RATE_SECONDS, RATE))
  rows.patchbayRate.push(await run(hookUrl, RATE * RATE_SECONDS, RATE))
}
const summary = (xs: any[]) => ({
  eventsPerSecond: round(median(xs.map((x) => x.eventsPerSecond)), 0),
  p50Ms: round(median(xs.map((x) => x.p50Ms))),
  p99Ms: round(median(xs.map((x) => x.p99Ms))),
  failures: xs.reduce((a, x) => a + x.failures, 0),
})
const result = {
  bench: 'events',
  store: 'sqlite',
  rounds: ROUNDS,
  fullLoad: {
    events: THROUGHPUT_EVENTS,
    concurrency: CONCURRENCY,
    baseline: summary(rows.baseline),
    patchbay: summary(rows.patchbay),
  },
  fixedRate: {
    eventsPerSecond: RATE,
    seconds: RATE_SECONDS,
    baseline: summary(rows.baselineRate),
    patchbay: summary(rows.patchbayRate),
  },
  targets: { minEventsPerSecond: 2000, maxP99MsAt500: 50 },
}
const meets = summary(rows.patchbay).eventsPerSecond >= 2000 && summary(rows.patchbayRate).p99Ms < 50
console.log(JSON.stringify({ ...result, meetsTargets: meets }))
child.kill('SIGTERM')
await new Promise((r) => child.once('exit', r))
await dispatcher.close()
receiver.close()
await sandbox.close()
process.exit(0)
