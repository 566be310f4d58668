// What Patchbay adds to a Get Card: the same request through Patchbay and straight to the
// sandbox task-board, interleaved in one run, at concurrency 1 and 32. Prints one JSON line.
import { Agent, request } from 'undici'
import { startTaskboardSandbox } from '../sandbox/taskboard/index.ts'
import { loadConfig } from '../src/config.ts'
import { startService } from '../src/service.ts'
import { tempDir } from '../test/helpers/databases.ts'
import { load, median, percentile, round } from './_stats.ts'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const PER_ROUND = Number(process.env.BENCH_REQUESTS ?? 400)

const sandbox = await startTaskboardSandbox()
await fetch(`${sandbox.url}/_sandbox/rate-limits`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ tokenLimit: 1e9, keyLimit: 1e9, windowMs: 10_000 }),
})
const adminKey = 'pb_admin_bench'
const service = await startService(
  {
    ...loadConfig({ PATCHBAY_EGRESS_ALLOW: '127.0.0.1' }),
    port: 0,
    dataDir: tempDir('patchbay-bench-'),
    adminKey,
    pacing: { taskboard: { points: 1e9, durationMs: 1000 } },
  },
  { baseUrls: { taskboard: sandbox.url }, logging: false },
)
const agent = new Agent({ connections: 64 })
const auth = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }
const conn = await (
  await fetch(`${service.url}/v1/connections`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: sandbox.demo.key, token: sandbox.demo.token },
    }),
  })
).json()
const upstreamAuth = {
  authorization: `OAuth oauth_consumer_key="${sandbox.demo.key}", oauth_token="${sandbox.demo.token}"`,
}
const cards = await (
  await fetch(`${sandbox.url}/1/lists/${sandbox.demo.listIds[0]}/cards`, { headers: upstreamAuth })
).json()
const idCard = cards[0].id
const runBody = JSON.stringify({ connectionId: conn.id, input: { idCard } })

const viaPatchbay = async () => {
  const res = await request(`${service.url}/v1/steps/taskboard.get_card/run`, {
    method: 'POST',
    headers: auth,
    body: runBody,
    dispatcher: agent,
  })
  await res.body.text()
  if (res.statusCode !== 200) throw new Error(`Patchbay answered ${res.statusCode}`)
}
const direct = async () => {
  const res = await request(`${sandbox.url}/1/cards/${idCard}`, { headers: upstreamAuth, dispatcher: agent })
  await res.body.text()
  if (res.statusCode !== 200) throw new Error(`sandbox answered ${res.statusCode}`)
}

// Warm both paths (JIT, keep-alive pools, caches).
await load(300, 8, viaPatchbay)
await load(300, 8, direct)

const result: Record<string, unknown> = {
  bench: 'step-overhead',
  rounds: ROUNDS,
  requestsPerRound: PER_ROUND,
}
for (const concurrency of [1, 32]) {
  const rows = {
    patchbay: { p50: [] as number[], p99: [] as number[], rps: [] as number[] },
    direct: { p50: [] as number[], p99: [] as number[], rps: [] as number[] },
  }
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, fn] of [
      ['direct', direct],
      ['patchbay', viaPatchbay],
    ] as const) {
      const m = await load(PER_ROUND, concurrency, fn)
      rows[name].p50.push(percentile(m.latencies, 50))
      rows[name].p99.push(percentile(m.latencies, 99))
      rows[name].rps.push(m.throughput)
    }
  }
  const pb = {
    p50Ms: round(median(rows.patchbay.p50)),
    p99Ms: round(median(rows.patchbay.p99)),
    rps: round(median(rows.patchbay.rps), 0),
  }
  const dr = {
    p50Ms: round(median(rows.direct.p50)),
    p99Ms: round(median(rows.direct.p99)),
    rps: round(median(rows.direct.rps), 0),
  }
  result[`c${concurrency}`] = {
    patchbay: pb,
    direct: dr,
    addedP50Ms: round(pb.p50Ms - dr.p50Ms),
    addedP99Ms: round(pb.p99Ms - dr.p99Ms),
    throughputRatio: round(pb.rps / dr.rps),
  }
}
result.targetAddedP50Ms = 2
result.meetsTarget = (result.c1 as { addedP50Ms: number }).addedP50Ms <= 2
console.log(JSON.stringify(result))
await agent.close()
await service.close()
await sandbox.close()
