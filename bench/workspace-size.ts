// What a workspace's size costs its requests: a team whose agents act for its own customers holds
// each customer's connections and agents in its workspace, so one workspace may hold thousands.
// Two workspaces of one Patchbay (SQLite, the task-board sandbox in-process), made by a person who
// signs up: a small one with `--small` (10) end users and a large one with `--large` (1,000), each
// end user with a connection (the demo account's, through a connect link) and `--agents` (10)
// agents bound to them, each with a New Card trigger; as many end users gone again (their
// connection, in use by an agent of theirs, disconnected: a disconnection open to restoring each);
// and each workspace with a connection of its own and an agent that uses it. The same requests in each, interleaved in batches, over loopback
// HTTP:
//   - createAgent: POST /v1/agents naming the workspace's connection (the connections named are checked);
//   - createTrigger: POST /v1/agents/{id}/triggers, New Card on the workspace's connection;
//   - agentStep: Get Card with the agent's key and no connectionId (its one task-board connection is used);
//   - mcpToolsList: tools/list at /mcp with the agent's key (its steps, one per connection's connector);
//   - connect: POST /v1/connections with the workspace connection's credentials again (one
//     connection per account: found, and reconnected in place);
//   - endUser: GET /v1/end-users/{id}, one end user with their connection and the agents bound to them;
//   - connectionsPage: GET /v1/connections?limit=20, each with what it may restore;
//   - disconnect: DELETE /v1/connections/{id} of a connection nothing uses (what uses it is looked for).
// Medians of the batches' ms a request, and large against small. Target: each ≤ 1.25× (a request
// reads what it names, not the whole workspace). Disconnecting finds the agents that name the
// connection by index (agent_connections, migration 0026); before, it scanned the workspace's
// agents (4.5–6.7×) and had no target. Prints one JSON line.
// `node bench/workspace-size.ts [--small n] [--large n] [--agents n] [--requests n] [--rounds n]`
import { parseArgs } from 'node:util'
import { Agent, request } from 'undici'
import { startTaskboardSandbox } from '../sandbox/taskboard/index.ts'
import { loadConfig } from '../src/config.ts'
import { startService } from '../src/service.ts'
import { tempDir } from '../test/helpers/databases.ts'
import { median, report, round, target } from './_stats.ts'

const { values: flags } = parseArgs({
  options: {
    small: { type: 'string', default: '10' },
    agents: { type: 'string', default: '10' },
    large: { type: 'string', default: '1000' },
    requests: { type: 'string', default: '40' },
    rounds: { type: 'string', default: '5' },
  },
})
const SIZES = { small: Number(flags.small), large: Number(flags.large) }
const AGENTS = Number(flags.agents)
const BATCH = Number(flags.requests)
const ROUNDS = Number(flags.rounds)

const sandbox = await startTaskboardSandbox()
// Making a thousand connections checks a thousand times who the token belongs to: not paced here.
await fetch(`${sandbox.url}/_sandbox/rate-limits`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ tokenLimit: 1e9, keyLimit: 1e9, windowMs: 10_000 }),
})
const service = await startService(
  {
    ...loadConfig({ PATCHBAY_SIGNUP: 'open', PATCHBAY_EGRESS_ALLOW: '127.0.0.1' }),
    port: 0,
    host: '127.0.0.1',
    databaseUrl: null,
    dataDir: tempDir('patchbay-bench-workspace-size-'),
    adminKey: 'pb_ws_bench_workspace_size_0000000000000',
    pacing: { taskboard: { points: 1e9, durationMs: 1000 } },
  },
  { baseUrls: { taskboard: sandbox.url }, logging: false },
)
const base = service.url
const dispatcher = new Agent({ connections: 16 })

async function call(
  method: string,
  path: string,
  auth: Record<string, string>,
  body?: unknown,
): Promise<Record<string, any>> {
  const res = await request(base + path, {
    method: method as 'POST',
    headers: {
      ...auth,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      accept: 'application/json, text/event-stream',
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    dispatcher,
  })
  const text = await res.body.text()
  const json = (text ? JSON.parse(text) : {}) as Record<string, any>
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(json)}`)
  return json
}

const signUp = await fetch(`${base}/v1/auth/sign-up`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ email: 'bench@example.test', password: 'a long bench password 1', name: 'Bench' }),
})
if (signUp.status !== 201) throw new Error(`sign-up: ${signUp.status} ${await signUp.text()}`)
const person = {
  cookie: signUp.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; '),
  'x-csrf-token': ((await signUp.json()) as { csrfToken: string }).csrfToken,
}
const credentials = { key: sandbox.demo.key, token: sandbox.demo.token, secret: sandbox.demo.secret }
const newConnection = { connector: 'taskboard', authMethod: 'api_key_token', credentials }
const cards = await (
  await fetch(`${sandbox.url}/1/lists/${sandbox.demo.listIds[0]}/cards`, {
    headers: {
      authorization: `OAuth oauth_consumer_key="${sandbox.demo.key}", oauth_token="${sandbox.demo.token}"`,
    },
  })
).json()
const idCard = cards[0].id as string

const newCardTrigger = (connectionId: string) => ({
  trigger: 'taskboard.new_card',
  connectionId,
  config: { idBoard: sandbox.demo.boardId },
})

interface Workspace {
  key: Record<string, string>
  spare: string[]
  agentId: string
  agentKey: Record<string, string>
  connectionId: string
  setUpSeconds: number
}

/** An agent on the demo board using `connectionId` (bound to `endUserId`, when given), delivering to its stream. */
const newAgent = (name: string, connectionId: string, endUserId?: string) => ({
  name,
  ...(endUserId ? { endUserId } : {}),
  scope: { boards: [sandbox.demo.boardId] },
  connectionIds: [connectionId],
  delivery: { type: 'stream' },
})

/** The demo account connected through a connect link, as an end user connects: the connection is theirs. */
async function endUserConnects(key: Record<string, string>, endUserId: string): Promise<string> {
  const { token } = await call('POST', '/v1/connect-sessions', key, { endUserId })
  return (await call('POST', '/v1/connect/connections', {}, { token, ...newConnection })).connection.id
}

/** `each(i)` for i below `n`, eight at a time. */
async function eightAtATime(n: number, each: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = next++; i < n; i = next++) await each(i)
    }),
  )
}

/** A workspace with `endUsers` end users' connections (the demo account's, one each), its own, and an agent. */
async function workspace(name: string, endUsers: number): Promise<Workspace> {
  const t0 = performance.now()
  const id = (await call('POST', '/v1/workspaces', person, { name })).id as string
  const inIt = { ...person, 'patchbay-workspace': id }
  const made = await call('POST', '/v1/keys', inIt, { name: 'bench', role: 'admin' })
  const key = { authorization: `Bearer ${made.key}` }
  await eightAtATime(endUsers, async (i) => {
    const endUserId = `customer-${i}`
    const connectionId = await endUserConnects(key, endUserId)
    for (let k = 0; k < AGENTS; k++) {
      const agent = await call(
        'POST',
        '/v1/agents',
        key,
        newAgent(`agent ${k} of ${endUserId}`, connectionId, endUserId),
      )
      await call('POST', `/v1/agents/${agent.id}/triggers`, key, newCardTrigger(connectionId))
    }
  })
  // As many end users gone again: each connection, in use by an agent bound to them, disconnected
  // (forced), so the workspace holds as many disconnections open to restoring.
  await eightAtATime(endUsers, async (i) => {
    const endUserId = `churned-${i}`
    const connectionId = await endUserConnects(key, endUserId)
    await call('POST', '/v1/agents', key, newAgent(`agent of ${endUserId}`, connectionId, endUserId))
    await call('DELETE', `/v1/connections/${connectionId}?force=true`, key)
  })
  // Connections of end users of their own, for the disconnect request to remove, one each.
  const spare: string[] = []
  for (let i = 0; i < BATCH * (ROUNDS + 1); i++) spare.push(await endUserConnects(key, `spare-${i}`))
  const connectionId = (await call('POST', '/v1/connections', key, newConnection)).id as string
  const agent = await call('POST', '/v1/agents', key, newAgent('bench agent', connectionId))
  const agentKey = (await call('POST', `/v1/agents/${agent.id}/keys`, key, { name: 'bench' })).key
  return {
    key,
    spare,
    agentId: agent.id,
    agentKey: { authorization: `Bearer ${agentKey}` },
    connectionId,
    setUpSeconds: round((performance.now() - t0) / 1000, 1),
  }
}

const workspaces = {
  small: await workspace('small', SIZES.small),
  large: await workspace('large', SIZES.large),
}
type Size = keyof typeof workspaces

const requests: Record<string, (w: Workspace) => Promise<unknown>> = {
  createAgent: (w) => call('POST', '/v1/agents', w.key, newAgent('made in the benchmark', w.connectionId)),
  createTrigger: (w) =>
    call('POST', `/v1/agents/${w.agentId}/triggers`, w.key, newCardTrigger(w.connectionId)),
  agentStep: (w) => call('POST', '/v1/steps/taskboard.get_card/run', w.agentKey, { input: { idCard } }),
  mcpToolsList: (w) => call('POST', '/mcp', w.agentKey, { jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  connect: (w) => call('POST', '/v1/connections', w.key, newConnection),
  endUser: (w) => call('GET', '/v1/end-users/customer-0', w.key),
  connectionsPage: (w) => call('GET', '/v1/connections?limit=20', w.key),
  disconnect: (w) => call('DELETE', `/v1/connections/${w.spare.pop()}`, w.key),
}

const msPerRequest: Record<string, Record<Size, number[]>> = {}
for (const name of Object.keys(requests)) msPerRequest[name] = { small: [], large: [] }
// A warm-up of each, then rounds of a batch of each request in each workspace, in turn.
for (const fn of Object.values(requests))
  for (const size of ['small', 'large'] as Size[]) for (let i = 0; i < BATCH; i++) await fn(workspaces[size])
for (let r = 0; r < ROUNDS; r++)
  for (const [name, fn] of Object.entries(requests))
    for (const size of (r % 2 ? ['large', 'small'] : ['small', 'large']) as Size[]) {
      const t0 = performance.now()
      for (let i = 0; i < BATCH; i++) await fn(workspaces[size])
      msPerRequest[name][size].push((performance.now() - t0) / BATCH)
    }

const figures: Record<string, { smallMs: number; largeMs: number; largeVsSmall: number }> = {}
for (const [name, bySize] of Object.entries(msPerRequest)) {
  const smallMs = median(bySize.small)
  const largeMs = median(bySize.large)
  figures[name] = { smallMs: round(smallMs), largeMs: round(largeMs), largeVsSmall: round(largeMs / smallMs) }
}
report(
  {
    bench: 'workspace-size',
    endUsers: SIZES,
    rounds: ROUNDS,
    requestsPerBatch: BATCH,
    setUpSeconds: { small: workspaces.small.setUpSeconds, large: workspaces.large.setUpSeconds },
    ...figures,
  },
  Object.entries(figures).map(([name, f]) => target(`${name}.largeVsSmall`, f.largeVsSmall, '<=', 1.25)),
)
await dispatcher.close()
await service.close()
await sandbox.close()
