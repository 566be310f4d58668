// What an MCP client's OAuth access token costs at /mcp beside an agent key: one Patchbay (SQLite),
// one agent, its key (cached by authentication for a few seconds) and an access token of a grant
// (read from the store at every request, so a revocation holds at once on every instance: the
// provider's token record and the grant, about two indexed reads and a vault open). The same
// `tools/list` over loopback HTTP, interleaved batches of each; the medians of the batches and
// their ratio. Also: how long the whole OAuth flow takes over HTTP (registration, authorization,
// consent, token), and a refresh. The machine may be shared: the absolute ms move with it, the
// ratio less. Prints one JSON line. `node bench/mcp-oauth.ts [--requests n] [--rounds n]`
import { createHash, randomBytes } from 'node:crypto'
import os from 'node:os'
import { parseArgs } from 'node:util'
import { request } from 'undici'
import { loadConfig } from '../src/config.ts'
import { startService } from '../src/service.ts'
import { tempDir } from '../test/helpers/databases.ts'
import { Person } from '../test/helpers/person.ts'
import { median, report, round } from './_stats.ts'

const { values: flags } = parseArgs({
  options: { requests: { type: 'string', default: '600' }, rounds: { type: 'string', default: '3' } },
})
const REQUESTS = Number(flags.requests)
const ROUNDS = Number(flags.rounds)
const REDIRECT = 'http://127.0.0.1:9/callback'

const adminKey = 'pb_ws_bench_mcp_oauth_owner_key_00000000'
const service = await startService(
  {
    ...loadConfig({ PATCHBAY_SIGNUP: 'open' }),
    port: 0,
    host: '127.0.0.1',
    databaseUrl: null,
    dataDir: tempDir('patchbay-bench-mcp-oauth-'),
    adminKey,
  },
  { baseUrls: {}, logging: false },
)
const base = service.url
const admin = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const json = await res.json()
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
  return json
}
const agent = await admin('POST', '/v1/agents', {
  name: 'bench',
  scope: { boards: [] },
  connectionIds: [],
  delivery: { type: 'stream' },
})
const agentKey = (await admin('POST', `/v1/agents/${agent.id}/keys`, {})).key as string
const person = new Person(base)
await person.signUp('bench@example.test', 'a long bench password 1', 'Bench')
await admin('POST', `/v1/workspaces/${service.workspaceId}/members`, {
  email: 'bench@example.test',
  role: 'member',
})

/** The OAuth flow over HTTP, as a client and the consent page make it; its tokens. */
async function signInWithOAuth() {
  const reg = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'none',
    }),
  })
  const clientId = (await reg.json()).client_id as string
  const verifier = randomBytes(32).toString('base64url')
  const challenge = createHash('sha256').update(verifier).digest('base64url')
  const started = await person.api(
    'GET',
    `/oauth/authorize?${new URLSearchParams({ client_id: clientId, response_type: 'code', redirect_uri: REDIRECT, scope: 'mcp', code_challenge: challenge, code_challenge_method: 'S256', resource: `${base}/mcp` })}`,
  )
  const consent = new URL(started.headers.get('location')!, base).pathname
  person.workspaceId = service.workspaceId
  const granted = await person.api('POST', `${consent}/grant`, { agentId: agent.id })
  const resumed = await person.api('GET', new URL(granted.body.redirectTo, base).pathname)
  const code = new URL(resumed.headers.get('location')!).searchParams.get('code')!
  const token = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      client_id: clientId,
      code_verifier: verifier,
      resource: `${base}/mcp`,
    }),
  })
  if (!token.ok) throw new Error(`token: ${token.status} ${await token.text()}`)
  return { clientId, ...((await token.json()) as { access_token: string; refresh_token: string }) }
}

await person.signIn('bench@example.test', 'a long bench password 1')
// The first flow makes the authorization server (keys, provider); the second is timed.
await signInWithOAuth()
const t0 = performance.now()
const tokens = await signInWithOAuth()
const flowMs = performance.now() - t0
const r0 = performance.now()
const refreshed = await fetch(`${base}/oauth/token`, {
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({
    grant_type: 'refresh_token',
    refresh_token: tokens.refresh_token,
    client_id: tokens.clientId,
  }),
})
const refreshMs = performance.now() - r0
if (!refreshed.ok) throw new Error(`refresh: ${refreshed.status}`)
const accessToken = ((await refreshed.json()) as { access_token: string }).access_token

const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
const call = async (bearer: string) => {
  const res = await request(`${base}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${bearer}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body,
  })
  await res.body.text()
  if (res.statusCode !== 200) throw new Error(`/mcp: ${res.statusCode}`)
}
const cases = { agentKey, accessToken }
const perRequestMs: Record<string, number[]> = { agentKey: [], accessToken: [] }
for (const bearer of Object.values(cases)) for (let i = 0; i < 50; i++) await call(bearer)
const BATCH = 50
for (let r = 0; r < ROUNDS; r++)
  for (let b = 0; b < REQUESTS / BATCH; b++)
    for (const [name, bearer] of Object.entries(cases)) {
      const s = performance.now()
      for (let i = 0; i < BATCH; i++) await call(bearer)
      perRequestMs[name].push((performance.now() - s) / BATCH)
    }
const med = Object.fromEntries(Object.entries(perRequestMs).map(([k, v]) => [k, round(median(v), 3)]))
report(
  {
    bench: 'mcp-oauth',
    date: new Date().toISOString(),
    loadAverage: os.loadavg().map((l) => round(l, 2)),
    requests: REQUESTS,
    rounds: ROUNDS,
    note: 'tools/list over loopback HTTP, sequential, SQLite; the machine may be shared',
    toolsListMs: med,
    tokenOverKeyRatio: round(med.accessToken / med.agentKey, 3),
    oauthFlowMs: round(flowMs, 1),
    refreshMs: round(refreshMs, 1),
  },
  [],
)
await service.close()
process.exit(0)
