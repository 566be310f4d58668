// What Patchbay adds to a Get Card: the same card read four ways, interleaved in one run, at
// concurrency 1 and 32 — straight to the sandbox task-board (direct), through a bare pass-through
// proxy (node:http + undici, nothing else: the floor any proxy pays for the extra hop), through the
// framework's floor (Fastify with the Zod type provider: the same route, body and answer schemas as
// Patchbay's, the card read and parsed and answered as a step result, and none of a step's work),
// and through Patchbay's POST /v1/steps/taskboard.get_card/run. The client, the proxies and the
// sandbox share one process and event loop. Figures are medians over rounds; ratios and added latencies are
// taken within each round, then their median. Then the step's own work (`stepWork`): the engine's step
// runner called in the process, no HTTP in front, against the same upstream read. Prints one JSON
// line with its targets.
import http from 'node:http'
import type net from 'node:net'
import Fastify from 'fastify'
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod'
import { Agent, request } from 'undici'
import { z } from 'zod'
import { startTaskboardSandbox } from '../sandbox/taskboard/index.ts'
import { loadConfig } from '../src/config.ts'
import type { Caller } from '../src/engine/access/caller.ts'
import { RunStepBody, StepResult } from '../src/server/schemas.ts'
import { startService } from '../src/service.ts'
import { tempDir } from '../test/helpers/databases.ts'
import { load, median, percentile, report, round, target } from './_stats.ts'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9)
const PER_ROUND = Number(process.env.BENCH_REQUESTS ?? 600)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 20_000)

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

// The floor: a pass-through proxy that forwards each request to the sandbox on its own keep-alive
// pool and streams the answer back.
const upstreamPool = new Agent({ connections: 64 })
const bareProxy = http.createServer(async (req, res) => {
  try {
    const up = await request(sandbox.url + req.url, {
      method: req.method as 'GET',
      headers: { authorization: req.headers.authorization ?? '' },
      dispatcher: upstreamPool,
    })
    res.writeHead(up.statusCode, { 'content-type': String(up.headers['content-type'] ?? '') })
    for await (const chunk of up.body) res.write(chunk)
    res.end()
  } catch {
    res.writeHead(502).end()
  }
})
await new Promise<void>((r) => bareProxy.listen(0, '127.0.0.1', r))
const proxyUrl = `http://127.0.0.1:${(bareProxy.address() as net.AddressInfo).port}`
const viaBareProxy = async () => {
  const res = await request(`${proxyUrl}/1/cards/${idCard}`, { headers: upstreamAuth, dispatcher: agent })
  await res.body.text()
  if (res.statusCode !== 200) throw new Error(`the bare proxy answered ${res.statusCode}`)
}

// The framework's floor: what a Fastify API with Patchbay's schemas pays for the same hop (its body
// validated, the card read on a keep-alive pool and parsed, the answer serialized through the
// StepResult schema) without a step's work: no key, scope, connection, pacing, validation of the
// step's input and output, or run record. What Patchbay costs above it is its own.
const floorApp = Fastify({ logger: false }).withTypeProvider<ZodTypeProvider>()
floorApp.setValidatorCompiler(validatorCompiler)
floorApp.setSerializerCompiler(serializerCompiler)
const floorPool = new Agent({ connections: 64 })
floorApp.post(
  '/v1/steps/:stepId/run',
  {
    schema: {
      params: z.object({ stepId: z.string() }),
      body: RunStepBody,
      response: { 200: StepResult },
    },
  },
  async (req) => {
    const up = await floorPool.request({
      origin: sandbox.url,
      path: `/1/cards/${req.body.input.idCard}`,
      method: 'GET',
      headers: upstreamAuth,
    })
    return { output: await up.body.json(), meta: { runId: 'run_floor', durationMs: 0, attempts: 1 } }
  },
)
await floorApp.listen({ port: 0, host: '127.0.0.1' })
const floorUrl = `http://127.0.0.1:${(floorApp.server.address() as net.AddressInfo).port}`
const viaFastifyFloor = async () => {
  const res = await request(`${floorUrl}/v1/steps/taskboard.get_card/run`, {
    method: 'POST',
    headers: auth,
    body: runBody,
    dispatcher: agent,
  })
  await res.body.text()
  if (res.statusCode !== 200) throw new Error(`the framework floor answered ${res.statusCode}`)
}

// Warm every path to its steady state (keep-alive pools, caches, and the JIT: Patchbay's path is
// still being optimized by V8 for its first 10,000-15,000 requests — its CPU a request falls from
// about 200 to 110 µs — while the bare proxy's small path is done within a few hundred).
await load(WARMUP, 32, viaPatchbay)
await load(WARMUP, 32, viaBareProxy)
await load(WARMUP, 32, viaFastifyFloor)
await load(WARMUP, 32, direct)

const paths = { direct, bareProxy: viaBareProxy, fastifyFloor: viaFastifyFloor, patchbay: viaPatchbay }
type PathName = keyof typeof paths
const result: Record<string, unknown> = {
  bench: 'step-overhead',
  rounds: ROUNDS,
  requestsPerRound: PER_ROUND,
}
for (const concurrency of [1, 32]) {
  const rounds: Record<PathName, { p50: number; p99: number; rps: number; cpuUs: number }>[] = []
  for (let r = 0; r < ROUNDS; r++) {
    const row = {} as (typeof rounds)[number]
    for (const name of Object.keys(paths) as PathName[]) {
      const m = await load(PER_ROUND, concurrency, paths[name])
      row[name] = {
        p50: percentile(m.latencies, 50),
        p99: percentile(m.latencies, 99),
        rps: m.throughput,
        cpuUs: m.cpuUsPerCall,
      }
    }
    rounds.push(row)
  }
  const med = (f: (row: (typeof rounds)[number]) => number, digits = 3) =>
    round(median(rounds.map(f)), digits)
  const figures = (name: PathName) => ({
    p50Ms: med((x) => x[name].p50),
    p99Ms: med((x) => x[name].p99),
    rps: med((x) => x[name].rps, 0),
    // CPU of the whole process (client, proxy, sandbox) per request: less moved by other load.
    cpuUsPerRequest: med((x) => x[name].cpuUs, 0),
  })
  result[`c${concurrency}`] = {
    direct: figures('direct'),
    bareProxy: figures('bareProxy'),
    fastifyFloor: figures('fastifyFloor'),
    patchbay: figures('patchbay'),
    addedP50Ms: med((x) => x.patchbay.p50 - x.direct.p50),
    addedP99Ms: med((x) => x.patchbay.p99 - x.direct.p99),
    bareProxyAddedP50Ms: med((x) => x.bareProxy.p50 - x.direct.p50),
    ratioToDirect: med((x) => x.patchbay.rps / x.direct.rps),
    bareProxyRatioToDirect: med((x) => x.bareProxy.rps / x.direct.rps),
    ratioToBareProxy: med((x) => x.patchbay.rps / x.bareProxy.rps),
    cpuRatioToBareProxy: med((x) => x.bareProxy.cpuUs / x.patchbay.cpuUs),
    // The framework's own share of the gap: its floor against the bare proxy, and Patchbay against it.
    fastifyFloorRatioToBareProxy: med((x) => x.fastifyFloor.rps / x.bareProxy.rps),
    ratioToFastifyFloor: med((x) => x.patchbay.rps / x.fastifyFloor.rps),
    // CPU a request Patchbay's step work costs above the framework's floor (µs, whole process).
    cpuUsAboveFastifyFloor: med((x) => x.patchbay.cpuUs - x.fastifyFloor.cpuUs, 1),
  }
}
// The step's own work, without HTTP in front of it: the engine's step runner called in this process
// (as the route calls it for a workspace key), against the same upstream read with the query
// Patchbay sends (taken from the sandbox's request log) on a keep-alive pool, the answer parsed.
// Interleaved, at 32 in flight; the difference is what running a step costs beyond its request.
const caller: Caller = {
  workspaceId: service.workspaceId,
  kind: 'workspaceKey',
  role: 'owner',
  keyId: 'key_bench',
  personId: null,
  agentId: null,
}
const viaStepRunner = async () => {
  await service.engine.steps.run(caller, 'taskboard.get_card', { connectionId: conn.id, input: { idCard } })
}
await viaStepRunner()
const sentPath = sandbox.emulator.requests.at(-1)?.url ?? ''
const upstreamRead = async () => {
  const res = await upstreamPool.request({
    origin: sandbox.url,
    path: sentPath,
    method: 'GET',
    headers: { ...upstreamAuth, accept: 'application/json' },
  })
  await res.body.json()
  if (res.statusCode !== 200) throw new Error(`sandbox answered ${res.statusCode} to ${sentPath}`)
}
await load(WARMUP, 32, viaStepRunner)
await load(WARMUP / 4, 32, upstreamRead)
const stepWorkRounds: { runner: number; read: number }[] = []
for (let r = 0; r < ROUNDS; r++) {
  const runner = (await load(PER_ROUND * 4, 32, viaStepRunner)).cpuUsPerCall
  const read = (await load(PER_ROUND * 4, 32, upstreamRead)).cpuUsPerCall
  stepWorkRounds.push({ runner, read })
}
result.stepWork = {
  upstreamPath: sentPath.split('?')[0].replace(idCard, '{idCard}'),
  runnerCpuUsPerRun: round(median(stepWorkRounds.map((x) => x.runner)), 1),
  upstreamReadCpuUsPerRequest: round(median(stepWorkRounds.map((x) => x.read)), 1),
  cpuUsAboveUpstreamRead: round(median(stepWorkRounds.map((x) => x.runner - x.read)), 1),
}

const c1 = result.c1 as { addedP50Ms: number }
const c32 = result.c32 as { ratioToBareProxy: number }
report(result as { bench: string }, [
  target('c32.ratioToBareProxy', c32.ratioToBareProxy, '>=', 0.8),
  target('c32.ratioToBareProxy (issue 29)', c32.ratioToBareProxy, '>=', 0.9),
  target('c1.addedP50Ms', c1.addedP50Ms, '<=', 0.3),
])
await agent.close()
await upstreamPool.close()
await floorApp.close()
await floorPool.close()
bareProxy.close()
await service.close()
await sandbox.close()
