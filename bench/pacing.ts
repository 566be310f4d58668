// Pacing of ready-made task-board steps: 600 Create Card calls from 8 concurrent callers on one
// token, through Patchbay, against the sandbox with its token window shortened to match
// PATCHBAY_TASKBOARD_PACING (100 requests per 2 s here instead of 100 per 10 s). Measures how close
// the steady rate comes to the allowed one and how many upstream 429s it cost (every retry shows in
// meta.attempts; the kit retries a 429). Prints one JSON line.
import { Agent, request } from 'undici'
import { startTaskboardSandbox } from '../sandbox/taskboard/index.ts'
import { loadConfig } from '../src/config.ts'
import { startService } from '../src/service.ts'
import { tempDir } from '../test/helpers/databases.ts'
import { median, report, round, target } from './_stats.ts'

const CALLS = Number(process.env.BENCH_CALLS ?? 600)
const CALLERS = Number(process.env.BENCH_CALLERS ?? 8)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const POINTS = 100
const WINDOW_MS = 2000

const sandbox = await startTaskboardSandbox()
await fetch(`${sandbox.url}/_sandbox/rate-limits`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  // The per-key budget (300 per window upstream) is opened up: this measures the token budget.
  body: JSON.stringify({ tokenLimit: POINTS, keyLimit: 1e9, windowMs: WINDOW_MS }),
})
const adminKey = 'pb_admin_bench'
const service = await startService(
  {
    ...loadConfig({
      PATCHBAY_EGRESS_ALLOW: '127.0.0.1',
      PATCHBAY_TASKBOARD_PACING: `${POINTS}/${WINDOW_MS}`,
    }),
    port: 0,
    dataDir: tempDir('patchbay-bench-'),
    adminKey,
  },
  { baseUrls: { taskboard: sandbox.url }, logging: false },
)
const http = new Agent({ connections: CALLERS })
const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }
const conn = await (
  await fetch(`${service.url}/v1/connections`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: sandbox.demo.key, token: sandbox.demo.token },
    }),
  })
).json()

/** One round: CALLS Create Cards from CALLERS callers; each call's completion time and attempts. */
async function round1(r: number) {
  const done: number[] = []
  let attempts = 0
  let failures = 0
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (next < CALLS) {
        const i = next++
        const res = await request(`${service.url}/v1/steps/taskboard.create_card/run`, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            connectionId: conn.id,
            input: { idList: sandbox.demo.listIds[0], name: `bench ${r}-${i}` },
          }),
          dispatcher: http,
        })
        const body = (await res.body.json()) as { meta?: { attempts: number } }
        if (res.statusCode !== 200) failures++
        attempts += body.meta?.attempts ?? 0
        done.push(performance.now() - started)
      }
    }),
  )
  done.sort((a, b) => a - b)
  // The first window's POINTS go out at once; the steady rate is what follows them.
  const steadyMs = done[done.length - 1] - done[POINTS - 1]
  const steadyRate = ((CALLS - POINTS) / steadyMs) * 1000
  return { wallMs: done[done.length - 1], steadyRate, retries: attempts - (CALLS - failures), failures }
}

const rounds = []
for (let r = 0; r < ROUNDS; r++) {
  // Each round starts with a fresh upstream window (and the pacer's log of the last round spent).
  await new Promise((res) => setTimeout(res, WINDOW_MS + 100))
  rounds.push(await round1(r))
}
const allowed = (POINTS / WINDOW_MS) * 1000
const steady = median(rounds.map((x) => x.steadyRate))
const upstream429s = rounds.reduce((n, x) => n + x.retries, 0)
const failedCalls = rounds.reduce((n, x) => n + x.failures, 0)
report(
  {
    bench: 'pacing',
    rounds: ROUNDS,
    calls: CALLS,
    callers: CALLERS,
    budget: `${POINTS}/${WINDOW_MS}ms per token`,
    allowedPerSec: allowed,
    steadyPerSec: round(steady, 2),
    ofAllowed: round(steady / allowed, 3),
    wallMs: round(median(rounds.map((x) => x.wallMs)), 0),
    upstream429s,
    failedCalls,
  },
  [
    target('ofAllowed', round(steady / allowed, 3), '>=', 0.97),
    target('upstream429s', upstream429s, '<=', 0),
    target('failedCalls', failedCalls, '<=', 0),
  ],
)
await http.close()
await service.close()
await sandbox.close()
