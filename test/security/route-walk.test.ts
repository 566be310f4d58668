// The generated route walk: every operation of the served /openapi.json (so a new route cannot be
// forgotten) is called as each role of workspace A (owner, admin, member, viewer), as an agent key
// of A, and as the owner key of workspace B, with the ids of A's real objects in its path. Each
// answer is either allowed (2xx, or a 4xx about the request itself) or a clear refusal with a code
// (403 naming the role or the agent key, 404 for what is not the caller's): never a 5xx, never a
// refusal the policy table does not call for, never a 2xx that shows B anything of A.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { type Role, roleAtLeast } from '../../src/engine/access/caller.ts'
import { POLICY, type Rule } from '../../src/engine/access/policy.ts'
import { eventually } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { createCardDelivery, postSigned } from '../helpers/taskboard.ts'

let t: TestService
const keys = {} as Record<Role, string>
let agentKey: string
let otherKey: string
/** A's objects, by the name the walk substitutes them for. */
const a: Record<string, string> = {}

before(async () => {
  t = await startTestService()
  const engine = t.service.engine
  a.workspace = t.service.workspaceId
  for (const role of ['owner', 'admin', 'member', 'viewer'] as const) {
    const made = await engine.apiKeys.create({
      workspaceId: a.workspace,
      kind: 'workspace',
      role,
      name: role,
    })
    keys[role] = made.key
  }
  const spare = await engine.apiKeys.create({
    workspaceId: a.workspace,
    kind: 'workspace',
    role: 'viewer',
    name: 'spare',
  })
  a.workspaceKey = spare.row.id
  const b = await engine.apiKeys.createWorkspace('B')
  otherKey = (await engine.apiKeys.create({ workspaceId: b.id, kind: 'workspace', role: 'owner', name: 'b' }))
    .key

  const sb = t.taskboard
  const conn = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: sb.demo.key, token: sb.demo.token, secret: sb.demo.secret },
  })
  assert.equal(conn.status, 201, JSON.stringify(conn.body))
  a.connection = conn.body.id
  const agent = await t.api('POST', '/v1/agents', {
    name: 'walker',
    scope: { boards: [sb.demo.boardId] },
    connectionIds: [a.connection],
    delivery: { type: 'stream' },
  })
  a.agent = agent.body.id
  const ak = await t.api('POST', `/v1/agents/${a.agent}/keys`, { name: 'walk' })
  agentKey = ak.body.key
  a.agentKey = ak.body.id
  const trig = await t.api('POST', `/v1/agents/${a.agent}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId: a.connection,
    config: { idBoard: sb.demo.boardId },
  })
  assert.equal(trig.status, 201, JSON.stringify(trig.body))
  a.trigger = trig.body.id
  const tool = await t.api('POST', `/v1/agents/${a.agent}/tools`, {
    name: 'Read a card',
    steps: [
      { stepId: 'taskboard.get_card', connectionId: a.connection, input: { idCard: '{{input.cardId}}' } },
    ],
  })
  assert.equal(tool.status, 201, JSON.stringify(tool.body))
  a.tool = tool.body.id
  const run = await t.api('POST', `/v1/agents/${a.agent}/tools/${a.tool}/run`, { input: { cardId: 'nope' } })
  a.toolRun = run.body.id
  await t.api('PUT', `/v1/credits/budgets/${a.agent}`, { limit: 10 })
  // An event and its delivery: the upstream tells of a new card on the board.
  const callbackUrl = `${t.url}/hooks/taskboard/${trig.body.webhook.id}`
  const posted = await postSigned(sb, callbackUrl, JSON.stringify(createCardDelivery(sb, 'card1')))
  assert.equal(posted.status, 200)
  const deliveries = await eventually(
    () => t.api('GET', '/v1/deliveries'),
    (r) => r.body.deliveries.length > 0,
  )
  a.delivery = deliveries.body.deliveries[0].id
  a.event = deliveries.body.deliveries[0].eventId
  // A job (a replay of A's dead deliveries: none, so it ends at once).
  const job = await t.api('POST', '/v1/jobs', { kind: 'replay_deliveries', agentId: a.agent })
  assert.equal(job.status, 202, JSON.stringify(job.body))
  a.job = job.body.id
})
after(() => t.close())

/** The id the walk puts in a path parameter, by the path and the parameter's name. */
function idFor(path: string, param: string): string {
  if (param === 'agentId') return a.agent
  if (param === 'toolId') return a.tool
  if (param === 'keyId') return a.agentKey
  if (param === 'stepId') return 'taskboard.get_card'
  if (param === 'connector') return 'taskboard'
  if (param === 'field') return 'idList'
  if (param === 'seq') return '1'
  const collection = path.split('/')[2]
  const byCollection: Record<string, string> = {
    agents: a.agent,
    connections: a.connection,
    triggers: a.trigger,
    'tool-runs': a.toolRun,
    events: a.event,
    deliveries: a.delivery,
    jobs: a.job,
    keys: a.workspaceKey,
    workspaces: a.workspace,
    steps: 'taskboard.get_card',
    catalog: 'taskboard.new_card',
  }
  return byCollection[collection] ?? 'x1'
}

interface Operation {
  method: string
  path: string
  id: string
  rule: Rule
}

async function operations(): Promise<Operation[]> {
  const doc = await (await fetch(`${t.url}/openapi.json`)).json()
  const ops: Operation[] = []
  for (const [template, byMethod] of Object.entries(doc.paths as Record<string, Record<string, any>>))
    for (const [method, op] of Object.entries(byMethod)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue
      const rule = (POLICY as Record<string, Rule>)[op.operationId]
      assert.ok(rule, `${op.operationId} has a rule`)
      const path = template.replace(/\{([^}]+)\}/g, (_m, p: string) => encodeURIComponent(idFor(template, p)))
      // Routes that act as an agent named in the query (a workspace key's MCP, function tools) name A's.
      const query = (op.parameters ?? []).some((p: any) => p.in === 'query' && p.name === 'agent')
        ? `?agent=${a.agent}`
        : ''
      ops.push({ method: method.toUpperCase(), path: path + query, id: op.operationId, rule })
    }
  // What removes the walkers' own objects goes last (deleting workspace A last of all).
  const weight = (o: Operation) => (o.id === 'deleteWorkspace' ? 2 : o.method === 'DELETE' ? 1 : 0)
  return ops.sort((x, y) => weight(x) - weight(y))
}

async function call(op: Operation, key: string) {
  const hasBody = op.method !== 'GET' && op.method !== 'DELETE'
  const controller = new AbortController()
  const res = await fetch(t.url + op.path, {
    method: op.method,
    headers: { authorization: `Bearer ${key}`, ...(hasBody ? { 'content-type': 'application/json' } : {}) },
    body: hasBody ? '{}' : undefined,
    signal: controller.signal,
  })
  // An event stream stays open: its status and headers are the answer.
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    controller.abort()
    return { status: res.status, text: '', html: false }
  }
  const html = (res.headers.get('content-type') ?? '').startsWith('text/html')
  return { status: res.status, text: await res.text(), html }
}

/** The refusal the policy table calls for, if any. */
function expectedRefusal(rule: Rule, caller: { role: Role | null; agent: boolean }): string | null {
  if (rule.access === 'public') return null
  if (caller.agent) return rule.access === 'workspace' && rule.agents ? null : 'AGENT_KEY_FORBIDDEN'
  if (rule.access === 'signedIn') return null
  return roleAtLeast(caller.role, rule.role) ? null : 'ROLE_FORBIDDEN'
}

test('every operation, as every role, an agent key and a key of another workspace: allowed or a clear refusal, never across workspaces, never a 5xx', async () => {
  const ops = await operations()
  assert.ok(ops.length > 60, `${ops.length} operations`)
  const aIds = Object.values(a).filter((v) => v.length > 8)
  const problems: string[] = []
  const callers = [
    { name: 'other workspace', key: otherKey, role: 'owner' as Role, agent: false, other: true },
    { name: 'viewer', key: keys.viewer, role: 'viewer' as Role, agent: false, other: false },
    { name: 'agent key', key: agentKey, role: null, agent: true, other: false },
    { name: 'member', key: keys.member, role: 'member' as Role, agent: false, other: false },
    { name: 'admin', key: keys.admin, role: 'admin' as Role, agent: false, other: false },
    { name: 'owner', key: keys.owner, role: 'owner' as Role, agent: false, other: false },
  ]
  let answered = 0
  for (const caller of callers)
    for (const op of ops) {
      const where = `${caller.name}: ${op.method} ${op.path} (${op.id})`
      const res = await call(op, caller.key)
      answered++
      let body: any = null
      try {
        body = res.text ? JSON.parse(res.text) : null
      } catch {}
      const code: string | undefined = body?.error?.code
      if (res.status >= 500) problems.push(`${where}: ${res.status} ${res.text.slice(0, 200)}`)
      // A page for a browser (the sign-in callback) says what went wrong on the page.
      if (res.status >= 400 && !code && !res.html) problems.push(`${where}: ${res.status} without a code`)
      if (caller.other) {
        // Nothing of A, ever: not by its ids, not in a list.
        // (B's audit log names what B's own callers tried, ids of A they sent included.)
        if (res.status < 300 && op.id !== 'listAudit' && aIds.some((id) => res.text.includes(id)))
          problems.push(`${where}: ${res.status} shows workspace A's objects`)
        if (
          res.status < 300 &&
          aIds.some((id) => op.path.includes(encodeURIComponent(id))) &&
          op.rule.access !== 'public'
        )
          problems.push(`${where}: ${res.status} on an object of workspace A`)
        continue
      }
      const refusal = expectedRefusal(op.rule, caller)
      if (refusal && (res.status !== 403 || code !== refusal))
        problems.push(`${where}: expected 403 ${refusal}, got ${res.status} ${code ?? ''}`)
      // (A public route checks its own credential, e.g. a connect token: its 401 is its own.)
      if (
        !refusal &&
        ((res.status === 401 && op.rule.access !== 'public') ||
          code === 'ROLE_FORBIDDEN' ||
          code === 'AGENT_KEY_FORBIDDEN')
      )
        problems.push(`${where}: refused (${res.status} ${code}) though the policy allows it`)
    }
  assert.deepEqual(problems, [], `${problems.length} problems in ${answered} calls`)
})
