// Scope holds for Project Item Status Changed too: an item's status change reaches an agent only
// when the item's issue or pull request lies in a repository of its scope (a draft issue: when
// the scope holds a repository of the project's owner). An organization's delivery names only the
// content's node id, so Patchbay reads the repository with the connection first; the personal
// account's poll asks for it in its query. A lookup that fails delivers nothing to scoped agents.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { CodehostSandbox } from '../../sandbox/codehost/index.ts'
import { act, ch, connectDemoCodehost, settle as settleCodehost } from '../helpers/codehost.ts'
import { Receiver } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
let sb: CodehostSandbox
let conn: string

/** Waits until the sandbox has sent every webhook and Patchbay has pushed every delivery. */
const settle = () => settleCodehost(t)

const statusEvents = async (): Promise<any[]> =>
  (await t.api('GET', '/v1/events?type=projects_v2_item.edited&limit=500')).body.events

/** Sets an item's status upstream; returns the event Patchbay stored for it, with its deliveries. */
async function statusChange(item: string, status: string) {
  await settle()
  const before = new Set((await statusEvents()).map((e) => e.id))
  await act(sb, 'set_project_item_status', { item_id: item, status })
  await settle()
  const fresh = (await statusEvents()).filter((e) => !before.has(e.id))
  assert.equal(fresh.length, 1, 'one status change, one event')
  const event = await t.api('GET', `/v1/events/${fresh[0].id}`)
  assert.equal(event.status, 200, JSON.stringify(event.body))
  return event.body
}

const contentLookups = () =>
  sb.emulator.requests.filter((r) => r.url === '/graphql' && r.body?.includes('PatchbayContentRepository'))
    .length

async function agent(name: string, repositories: string[], receiver: Receiver) {
  const made = await t.api('POST', '/v1/agents', {
    name,
    scope: { repositories },
    connectionIds: [conn],
    delivery: { type: 'webhook', url: receiver.url },
  })
  assert.equal(made.status, 201, JSON.stringify(made.body))
  receiver.secret = made.body.signingSecret
  return made.body.id as string
}

async function trigger(agentId: string, config: Record<string, unknown>) {
  const res = await t.api('POST', `/v1/agents/${agentId}/triggers`, {
    trigger: 'codehost.project_item_status_changed',
    connectionId: conn,
    config,
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body.id as string
}

async function issueIn(owner: string, name: string) {
  await act(sb, 'create_repo', { ...(owner === 'octo-demo' ? {} : { org: owner }), name })
  const issue = await act(sb, 'open_issue', { owner, repo: name, title: `An issue of ${name}` })
  return { owner, repo: name, number: issue.result.number as number }
}

before(async () => {
  t = await startTestService({
    codehost: true,
    env: { PATCHBAY_DELIVERY_RETRY_SCHEDULE_MS: '50,100,200', PATCHBAY_DELIVERY_SCAN_MS: '25' },
  })
  sb = t.codehost!
  conn = await connectDemoCodehost(t)
})
after(async () => {
  await t.close()
})

describe("an organization's project, through the organization's webhook", () => {
  const scopedA = new Receiver()
  const elsewhere = new Receiver()
  const items: Record<'a' | 'b' | 'draft', string> = { a: '', b: '', draft: '' }
  const triggers: Record<string, string> = {}

  before(async () => {
    await scopedA.start()
    await elsewhere.start()
    const a = await issueIn('octo-org', 'repo-a')
    const b = await issueIn('octo-org', 'repo-b')
    const project = await ch(sb, 'POST', '/projects-v2', {
      owner: 'octo-org',
      title: 'Org roadmap',
      items: [a, b, { draft: 'Plan the launch' }],
    })
    ;[items.a, items.b, items.draft] = project.items.map((i: any) => i.id)
    triggers.a = await trigger(await agent('repo A', ['octo-org/repo-a'], scopedA), {
      organization: 'octo-org',
    })
    triggers.elsewhere = await trigger(await agent('another owner', ['octo-demo/hello-world'], elsewhere), {
      organization: 'octo-org',
    })
  })
  after(async () => {
    await scopedA.close()
    await elsewhere.close()
  })

  test('an item of an issue in repo A reaches the agent scoped to repo A, attributed to its repository', async () => {
    const from = scopedA.received.length
    const event = await statusChange(items.a, 'In Progress')
    assert.equal(event.refs.repository, 'octo-org/repo-a')
    assert.deepEqual(
      event.deliveries.map((d: any) => d.triggerId),
      [triggers.a],
    )
    const got = await scopedA.until((r) => r.length > from)
    assert.equal(got[from].body.data.event.refs.repository, 'octo-org/repo-a')
    assert.equal(got[from].body.data.event.data.changes.field_value.to.name, 'In Progress')
    assert.equal(elsewhere.received.length, 0)
  })

  test('an item of an issue in repo B reaches no agent: repo B is in neither scope', async () => {
    const from = scopedA.received.length
    const event = await statusChange(items.b, 'Done')
    assert.equal(event.refs.repository, 'octo-org/repo-b')
    assert.deepEqual(event.deliveries, [])
    assert.equal(event.matchedTriggers, 0)
    assert.equal(scopedA.received.length, from)
    assert.equal(elsewhere.received.length, 0)
  })

  test("a content's repository is read once and then remembered", async () => {
    const lookups = contentLookups()
    const event = await statusChange(items.a, 'Done')
    assert.equal(event.deliveries.length, 1)
    assert.equal(contentLookups(), lookups, 'no second lookup of the same content')
  })

  test("a draft issue reaches the agent whose scope holds a repository of the project's owner only", async () => {
    const from = scopedA.received.length
    const event = await statusChange(items.draft, 'Done')
    assert.equal(event.refs.repository, undefined)
    assert.equal(event.refs.owner, 'octo-org')
    assert.deepEqual(
      event.deliveries.map((d: any) => d.triggerId),
      [triggers.a],
    )
    await scopedA.until((r) => r.length > from)
    assert.equal(elsewhere.received.length, 0, 'a scope of octo-demo repositories holds nothing of octo-org')
  })

  test('when the repository cannot be read (the upstream fails), the scoped agent gets nothing and the event says why', async () => {
    // A fresh item of repo A: its content has never been looked up, so nothing remembered answers.
    const c = await act(sb, 'open_issue', { owner: 'octo-org', repo: 'repo-a', title: 'Another' })
    const added = (
      await act(sb, 'add_project_item', {
        project_id: (await orgProjectId()) as string,
        owner: 'octo-org',
        repo: 'repo-a',
        number: c.result.number,
      })
    ).result
    const from = scopedA.received.length
    await ch(sb, 'POST', '/faults', { pathPrefix: '/graphql', errorRate: 1, errorStatus: 502 })
    let event: any
    try {
      event = await statusChange(added.id, 'Done')
    } finally {
      await ch(sb, 'DELETE', '/faults')
    }
    assert.equal(event.refs.repository, undefined)
    assert.match(event.refs.unattributed, /502|did not answer/)
    assert.deepEqual(event.deliveries, [])
    assert.equal(event.matchedTriggers, 0)
    assert.equal(scopedA.received.length, from, 'not delivered, not even to the agent the item belongs to')
    // The failure is not remembered: with the upstream back, the next change is read and delivered.
    const again = await statusChange(added.id, 'Todo')
    assert.equal(again.refs.repository, 'octo-org/repo-a')
    assert.equal(again.refs.unattributed, undefined)
    assert.deepEqual(
      again.deliveries.map((d: any) => d.triggerId),
      [triggers.a],
    )
  })
})

/** The organization project's node id, read through the code host's GraphQL API. */
async function orgProjectId(): Promise<string> {
  const res = await fetch(`${sb.url}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${sb.demo.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      query: '{ organization(login: "octo-org") { projectsV2(first: 10) { nodes { id } } } }',
    }),
  })
  const body = (await res.json()) as any
  return body.data.organization.projectsV2.nodes[0].id
}

describe("the connection's own project, by poll", () => {
  const scoped = new Receiver()
  let triggerId = ''
  const items: Record<'inScope' | 'outside' | 'draft', string> = { inScope: '', outside: '', draft: '' }
  const pollNow = async () => {
    const res = await t.api('POST', `/v1/triggers/${triggerId}/poll`)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    await settle()
    return res.body.events as number
  }

  before(async () => {
    await scoped.start()
    const demo = await ch(sb, 'GET', '/demo')
    items.inScope = demo.projectV2.items.find((i: any) => i.type === 'Issue').id
    items.draft = demo.projectV2.items.find((i: any) => i.type === 'DraftIssue').id
    const other = await issueIn('octo-demo', 'side-project')
    items.outside = (await act(sb, 'add_project_item', { project_id: demo.projectV2.id, ...other })).result.id
    triggerId = await trigger(await agent('hello-world only', ['octo-demo/hello-world'], scoped), {
      projectNumber: 1,
    })
    assert.equal(await pollNow(), 0, 'the first poll only notes the statuses')
  })
  after(async () => {
    await scoped.close()
  })

  test('a status change of an item in the scope is delivered, with its repository', async () => {
    const from = scoped.received.length
    await act(sb, 'set_project_item_status', { item_id: items.inScope, status: 'Done' })
    assert.equal(await pollNow(), 1)
    const got = await scoped.until((r) => r.length > from)
    assert.equal(got[from].body.data.event.refs.repository, 'octo-demo/hello-world')
  })

  test('a status change of an item of another repository is not', async () => {
    const lookups = contentLookups()
    const from = scoped.received.length
    await act(sb, 'set_project_item_status', { item_id: items.outside, status: 'Done' })
    assert.equal(await pollNow(), 0)
    assert.equal(scoped.received.length, from)
    assert.equal(contentLookups(), lookups, 'the poll names the repository itself: nothing is looked up')
  })

  test("a draft issue of the account's project is delivered: the scope holds a repository of its owner", async () => {
    const from = scoped.received.length
    await act(sb, 'set_project_item_status', { item_id: items.draft, status: 'Done' })
    assert.equal(await pollNow(), 1)
    const got = await scoped.until((r) => r.length > from)
    assert.equal(got[from].body.data.event.refs.owner, 'octo-demo')
  })
})
