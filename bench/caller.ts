// What resolving the caller costs a request: one bare Fastify app with Patchbay's access hooks only
// (the policy rules, sessions, authentication, the policy check) over a running Patchbay's engine,
// answering the same tiny handler as a public route (no caller) and as a route with a rule — called
// with a workspace key (cached), a signed-in person's session cookie (cached), and the same person
// naming another workspace in Patchbay-Workspace (in-process, app.inject: no sockets). The
// difference to the public route is the per-request cost of resolving the caller (key or session,
// membership, role, workspace) and checking it against the policy table. Medians over rounds; the machine may be shared, so the absolute µs move with
// it, the differences less. Prints one JSON line. `node bench/caller.ts [--requests n] [--rounds n]`
import { parseArgs } from 'node:util'
import Fastify from 'fastify'
import { loadConfig } from '../src/config.ts'
import { installAuthentication, publicRoute } from '../src/server/authenticate.ts'
import { attachRules, enforcePolicy } from '../src/server/authorize.ts'
import { installSessions } from '../src/server/sessions.ts'
import { startService } from '../src/service.ts'
import { tempDir } from '../test/helpers/databases.ts'
import { median, report, round } from './_stats.ts'

const { values: flags } = parseArgs({
  options: { requests: { type: 'string', default: '10000' }, rounds: { type: 'string', default: '3' } },
})
const REQUESTS = Number(flags.requests)
const ROUNDS = Number(flags.rounds)

const ownerKey = 'pb_ws_bench_caller_owner_key_000000000000'
const service = await startService(
  {
    ...loadConfig({ PATCHBAY_SIGNUP: 'open' }),
    port: 0,
    host: '127.0.0.1',
    databaseUrl: null,
    dataDir: tempDir('patchbay-bench-caller-'),
    adminKey: ownerKey,
  },
  { baseUrls: {}, logging: false },
)
const app = service.app
const bare = Fastify()
attachRules(bare)
const sessions = await installSessions(bare, service.engine, { secure: false })
installAuthentication(bare, service.engine, { people: [sessions.authenticator] })
enforcePolicy(bare)
bare.get('/public', { config: publicRoute, schema: { hide: true } }, async () => ({ ok: true }))
bare.get('/caller', { config: { operation: 'getDeliveryBacklog' }, schema: { hide: true } }, async () => ({
  ok: true,
}))
await bare.ready()

// A person with two workspaces (signed up: the session cookie and its CSRF token).
const signUp = await app.inject({
  method: 'POST',
  url: '/v1/auth/sign-up',
  payload: { email: 'bench@example.test', password: 'a long bench password 1', name: 'Bench' },
})
if (signUp.statusCode !== 201) throw new Error(`sign-up: ${signUp.statusCode} ${signUp.body}`)
const cookie = signUp.cookies.map((c) => `${c.name}=${c.value}`).join('; ')
const csrf = signUp.json().csrfToken as string
const made = await app.inject({
  method: 'POST',
  url: '/v1/workspaces',
  payload: { name: 'second' },
  headers: { cookie, 'x-csrf-token': csrf },
})
if (made.statusCode !== 201) throw new Error(`workspace: ${made.statusCode} ${made.body}`)
const second = made.json().id as string

const cases = {
  publicRoute: { url: '/public', headers: {} },
  workspaceKey: { url: '/caller', headers: { authorization: `Bearer ${ownerKey}` } },
  session: { url: '/caller', headers: { cookie } },
  sessionNamingWorkspace: { url: '/caller', headers: { cookie, 'patchbay-workspace': second } },
}
const perRequestUs: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]))
for (const c of Object.values(cases)) {
  const res = await bare.inject({ method: 'GET', ...c })
  if (res.statusCode !== 200) throw new Error(`${c.url}: ${res.statusCode} ${res.body}`)
}
// Interleaved batches (each case in turn, again and again), so a machine whose load changes meanwhile
// weighs on every case alike; the median batch of each case is its figure.
for (const c of Object.values(cases)) for (let i = 0; i < 500; i++) await bare.inject({ method: 'GET', ...c })
const BATCH = 200
for (let r = 0; r < ROUNDS; r++)
  for (let b = 0; b < REQUESTS / BATCH; b++)
    for (const [name, c] of Object.entries(cases)) {
      const t0 = performance.now()
      for (let i = 0; i < BATCH; i++) await bare.inject({ method: 'GET', ...c })
      perRequestUs[name].push(((performance.now() - t0) * 1000) / BATCH)
    }
const med = Object.fromEntries(Object.entries(perRequestUs).map(([k, v]) => [k, round(median(v), 1)]))
const resolve = (name: string) => round(med[name] - med.publicRoute, 1)
const figures = {
  bench: 'caller',
  date: new Date().toISOString(),
  requests: REQUESTS,
  rounds: ROUNDS,
  note: 'in-process (app.inject), sequential; the machine may be shared',
  perRequestUs: med,
  callerResolutionUs: {
    workspaceKey: resolve('workspaceKey'),
    session: resolve('session'),
    sessionNamingWorkspace: resolve('sessionNamingWorkspace'),
  },
}
// The issue asks for the figure, not a bound: reported, no target.
report(figures, [])
await bare.close()
await service.close()
process.exit(0)
