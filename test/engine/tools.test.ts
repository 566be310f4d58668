// Tools over real HTTP against the sandbox task-board: chains of steps whose inputs are templates
// over the tool's input, the trigger event and earlier outputs, run as the agent (its scope
// applies), stopped at the first failure and recorded step by step. Templates are checked when a
// tool is saved.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTestService, type TestService } from '../helpers/service.ts'
import { control } from '../helpers/taskboard.ts'

let t: TestService
let conn: string
let otherConn: string
let agentId: string
let agentKey: string
const A = { board: '', list: '', card: '' }
const B = { board: '', list: '' }
const C = { board: '', list: '' }

before(async () => {
  t = await startTestService()
  const connect = async () =>
    (
      await t.api('POST', '/v1/connections', {
        connector: 'taskboard',
        authMethod: 'api_key_token',
        credentials: { key: t.taskboard.demo.key, token: t.taskboard.demo.token },
        second: true,
      })
    ).body.id as string
  conn = await connect()
  otherConn = await connect()
  const seeded = await control(t.taskboard, 'POST', '/seed', {
    as: 'demo',
    boards: [
      { name: 'Board B', lists: [{ name: 'Inbox' }] },
      { name: 'Board C', lists: [{ name: 'Off limits' }] },
    ],
  })
  Object.assign(B, { board: seeded.boards[0].id, list: seeded.boards[0].lists[0].id })
  Object.assign(C, { board: seeded.boards[1].id, list: seeded.boards[1].lists[0].id })
  A.board = t.taskboard.demo.boardId
  A.list = t.taskboard.demo.listIds[0]
  A.card = (
    await t.api('POST', '/v1/steps/taskboard.create_card/run', {
      connectionId: conn,
      input: { idList: A.list, name: 'Ship the release' },
    })
  ).body.output.id
  agentId = (
    await t.api('POST', '/v1/agents', {
      name: 'Copier',
      scope: { boards: [A.board, B.board] },
      connectionIds: [conn],
      delivery: { type: 'stream' },
    })
  ).body.id
  agentKey = (await t.api('POST', `/v1/agents/${agentId}/keys`, {})).body.key
})
after(() => t.close())

const createTool = (body: unknown, agent = agentId) => t.api('POST', `/v1/agents/${agent}/tools`, body)
const runTool = (toolId: string, input: unknown, key = agentKey, agent = agentId) =>
  t.api('POST', `/v1/agents/${agent}/tools/${toolId}/run`, { input }, key)
const cardsOn = async (board: string) =>
  (await control(t.taskboard, 'GET', '/state')).boards.find((b: any) => b.id === board).cards as number

/** Reads a card on board A and makes a copy of it on board B, then reads the copy back. */
const copyTool = () => ({
  name: 'Copy a card to board B',
  description: 'Copies the card named in the input to the target list.',
  steps: [
    {
      name: 'source',
      stepId: 'taskboard.get_card',
      connectionId: conn,
      input: { idCard: '{{input.cardId}}' },
    },
    {
      name: 'copy',
      stepId: 'taskboard.create_card',
      connectionId: conn,
      input: {
        idList: '{{input.targetList}}',
        name: 'Copy of {{steps.source.output.name}}',
        desc: 'From board {{steps.0.output.idBoard}}, list {{steps.0.output.idList}}',
        pos: '{{input.pos}}',
      },
    },
    {
      stepId: 'taskboard.api_call',
      connectionId: conn,
      input: {
        method: 'GET',
        endpoint: '/1/cards/{{steps.copy.output.id}}',
        query: { fields: 'name,idBoard,pos' },
      },
    },
  ],
})

test('a tool started with a card on board A makes a card on board B, from its input and earlier outputs', async () => {
  const created = await createTool(copyTool())
  assert.equal(created.status, 201, JSON.stringify(created.body))
  const tool = created.body
  assert.match(tool.id, /^tool_/)
  assert.equal(tool.steps.length, 3)

  const res = await runTool(tool.id, { cardId: A.card, targetList: B.list, pos: 7 })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const run = res.body
  assert.equal(run.status, 'succeeded', JSON.stringify(run))
  assert.match(run.id, /^trun_/)
  assert.equal(run.errorCode, null)
  assert.deepEqual(
    run.steps.map((s: any) => [s.index, s.name, s.status]),
    [
      [0, 'source', 'succeeded'],
      [1, 'copy', 'succeeded'],
      [2, null, 'succeeded'],
    ],
  )
  const copy = run.steps[1].output
  assert.equal(copy.idBoard, B.board)
  assert.equal(copy.name, 'Copy of Ship the release')
  assert.equal(copy.desc, `From board ${A.board}, list ${A.list}`)
  assert.equal(copy.pos, 7, 'a whole-string template keeps the number')
  assert.equal(run.steps[2].output.body.name, 'Copy of Ship the release')
  assert.ok(run.steps.every((s: any) => s.runId?.startsWith('run_')))

  // It is really there, as the admin sees it upstream.
  const seen = await t.api('POST', '/v1/steps/taskboard.get_card/run', {
    connectionId: conn,
    input: { idCard: copy.id },
  })
  assert.equal(seen.body.output.idBoard, B.board)

  const one = await t.api('GET', `/v1/tool-runs/${run.id}`)
  assert.deepEqual(one.body, run)
  const mine = await t.api('GET', `/v1/tool-runs/${run.id}`, undefined, agentKey)
  assert.equal(mine.status, 200)
})

test('a trigger-started run reads the event: engine.tools.run with event, trigger and event ids', async () => {
  const tool = (
    await createTool({
      name: 'Note a moved card',
      steps: [
        {
          stepId: 'taskboard.create_card',
          connectionId: conn,
          input: {
            idList: B.list,
            name: '{{event.data.card.name}} moved to {{event.data.listAfter.name}}',
            desc: '{{input.note}}',
          },
        },
      ],
    })
  ).body
  const run = await t.service.engine.tools.run(t.service.workspaceId, agentId, tool.id, {
    input: {},
    event: {
      type: 'updateCard',
      data: { card: { id: A.card, name: 'Ship the release' }, listAfter: { name: 'Doing' } },
    },
    triggerId: 'trg_test',
    eventId: 'evt_test',
  })
  assert.equal(run.status, 'succeeded', JSON.stringify(run))
  assert.equal(run.triggerId, 'trg_test')
  assert.equal(run.eventId, 'evt_test')
  assert.equal((run.steps[0].output as any).name, 'Ship the release moved to Doing')
  assert.equal((run.steps[0].output as any).desc, '', 'an absent optional value leaves the field out')
  const listed = await t.api('GET', `/v1/agents/${agentId}/tool-runs?toolId=${tool.id}`)
  assert.equal(listed.body.runs[0].id, run.id)
  assert.equal(listed.body.runs[0].triggerId, 'trg_test')
})

test('the first failing step ends the run: later steps are skipped, the run is failed with its error, nothing is sent for it', async () => {
  const tool = (await createTool(copyTool())).body
  const before = await cardsOn(C.board)
  const res = await runTool(tool.id, { cardId: A.card, targetList: C.list, pos: 'top' })
  assert.equal(res.status, 200)
  const run = res.body
  assert.equal(run.status, 'failed')
  assert.equal(run.errorCode, 'SCOPE_DENIED')
  assert.match(run.errorMessage, /Step 1 \("copy"\) \(taskboard\.create_card\)/)
  assert.match(run.errorMessage, new RegExp(C.board))
  assert.deepEqual(
    run.steps.map((s: any) => s.status),
    ['succeeded', 'failed', 'skipped'],
  )
  assert.equal(run.steps[1].error.code, 'SCOPE_DENIED')
  assert.equal(run.steps[2].output, undefined)
  assert.equal(await cardsOn(C.board), before, 'the agent reached nothing on board C')

  // An absent whole value would leave a required field empty: the run stops before any step acts.
  const missing = await runTool(tool.id, { targetList: B.list })
  assert.equal(missing.body.status, 'failed')
  assert.equal(missing.body.errorCode, 'TEMPLATE_VALUE_MISSING')
  assert.match(missing.body.errorMessage, /steps\.0\.input\.idCard: \{\{input\.cardId\}\} has no value/)
  assert.deepEqual(
    missing.body.steps.map((s: any) => s.status),
    ['failed', 'skipped', 'skipped'],
  )

  const text = (
    await createTool({
      name: 'Greets',
      steps: [
        {
          stepId: 'taskboard.create_card',
          connectionId: conn,
          input: { idList: B.list, name: 'Hi {{input.who}}' },
        },
      ],
    })
  ).body
  const noWho = await runTool(text.id, {})
  assert.equal(noWho.body.errorCode, 'TEMPLATE_VALUE_MISSING')
  assert.match(noWho.body.errorMessage, /steps\.0\.input\.name: \{\{input\.who\}\} has no value/)
})

test('templates are checked when a tool is saved, naming the step and the field', async () => {
  const one = (input: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    createTool({
      name: 'bad',
      steps: [{ stepId: 'taskboard.create_card', connectionId: conn, input, ...extra }],
    })
  const cases: Array<[Promise<{ status: number; body: any }>, RegExp]> = [
    [one({ idList: B.list, name: '{{secrets.token}}' }), /steps\.0\.input\.name: .*starts with "secrets"/],
    [one({ idList: B.list, name: 'Hi {{input.who' }), /steps\.0\.input\.name: .*never closes/],
    [one({ idList: B.list, name: '{{ }}' }), /steps\.0\.input\.name: has an empty/],
    [one({ idList: B.list, name: '{{input.a b}}' }), /steps\.0\.input\.name/],
    [
      one({ idList: '{{steps.0.output.idList}}', name: 'x' }),
      /steps\.0\.input\.idList: .*refers to step 0, which is this step/,
    ],
    [
      one({ idList: B.list, name: 'x', idLabels: ['{{input.labels.0}}', '{{steps.x.output.id}}'] }),
      /steps\.0\.input\.idLabels\.1: .*no earlier step "x"/,
    ],
    [
      createTool({
        name: 'bad',
        steps: [
          { stepId: 'taskboard.get_card', connectionId: conn, input: { idCard: '{{steps.1.output.id}}' } },
          { stepId: 'taskboard.get_card', connectionId: conn, input: { idCard: '{{input.id}}' } },
        ],
      }),
      /Step 0 \(taskboard\.get_card\), steps\.0\.input\.idCard: .*refers to step 1, which runs later/,
    ],
    [
      createTool({
        name: 'bad',
        steps: [
          {
            name: 'first',
            stepId: 'taskboard.get_card',
            connectionId: conn,
            input: { idCard: '{{input.id}}' },
          },
          { stepId: 'taskboard.get_card', connectionId: conn, input: { idCard: '{{steps.first.id}}' } },
        ],
      }),
      /steps\.1\.input\.idCard: .*must read the step's output/,
    ],
  ]
  for (const [pending, message] of cases) {
    const res = await pending
    assert.equal(res.status, 400, JSON.stringify(res.body))
    assert.equal(res.body.error.code, 'INVALID_TEMPLATE', JSON.stringify(res.body))
    assert.match(res.body.error.message, message)
  }
})

test("a path an earlier step's output cannot hold is refused at save, naming the step and the path", async () => {
  const res = await createTool({
    name: 'Reads nothing',
    steps: [
      { name: 'card', stepId: 'taskboard.get_card', connectionId: conn, input: { idCard: '{{input.id}}' } },
      {
        stepId: 'taskboard.create_card',
        connectionId: conn,
        input: { idList: '{{steps.card.output.idList}}', name: 'About {{steps.card.output.nope}}' },
      },
    ],
  })
  assert.equal(res.status, 400, JSON.stringify(res.body))
  assert.equal(res.body.error.code, 'INVALID_TEMPLATE')
  assert.match(
    res.body.error.message,
    /Step 1 \(taskboard\.create_card\), steps\.1\.input\.name: \{\{steps\.card\.output\.nope\}\} is not in the output of step 0: output has no "nope"; it has id, name/,
  )
  assert.deepEqual(res.body.error.details, { step: 1, field: 'steps.1.input.name' })
  // Deeper paths and lists are followed too; an API Call's body may hold anything.
  const deeper = await createTool({
    name: 'Deeper',
    steps: [
      { stepId: 'taskboard.get_card', connectionId: conn, input: { idCard: '{{input.id}}' } },
      {
        stepId: 'taskboard.get_card',
        connectionId: conn,
        input: { idCard: '{{steps.0.output.name.first}}' },
      },
    ],
  })
  assert.match(deeper.body.error.message, /output\.name is string, which has no "first"/)
  const fine = await createTool({
    name: 'Fine',
    steps: [
      {
        stepId: 'taskboard.api_call',
        connectionId: conn,
        input: { method: 'GET', endpoint: '/1/members/me' },
      },
      {
        stepId: 'taskboard.get_card',
        connectionId: conn,
        input: { idCard: '{{steps.0.output.body.idCards.0}}' },
      },
      {
        stepId: 'taskboard.get_card',
        connectionId: conn,
        input: { idCard: '{{steps.1.output.idLabels.0}}' },
      },
    ],
  })
  assert.equal(fine.status, 201, JSON.stringify(fine.body))
})

test("a trigger's events are checked against the tool's {{event.…}} templates, whichever is saved first", async () => {
  const tool = (
    await createTool({
      name: 'Notes moves',
      steps: [
        {
          stepId: 'taskboard.create_card',
          connectionId: conn,
          input: { idList: B.list, name: '{{event.data.card.name}} went to {{event.data.listAfter.name}}' },
        },
      ],
    })
  ).body
  // New Card's events hold no listAfter: the trigger is refused, naming the step and path.
  const wrong = await t.api('POST', `/v1/agents/${agentId}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId: conn,
    config: { idBoard: A.board },
    target: { type: 'tool', toolId: tool.id },
  })
  assert.equal(wrong.status, 400, JSON.stringify(wrong.body))
  assert.equal(wrong.body.error.code, 'INVALID_TEMPLATE')
  assert.match(
    wrong.body.error.message,
    /steps\.0\.input\.name: \{\{event\.data\.listAfter\.name\}\} is not in the events of New Card/,
  )
})

test("a tool's declared inputs: templates may read only them, agents see them, a run without a required one is refused", async () => {
  const step = (name: string) => ({
    stepId: 'taskboard.create_card',
    connectionId: conn,
    input: { idList: B.list, name },
  })
  const inputs = { title: { type: 'string', description: 'The card title.', required: true } }
  const wrong = await createTool({ name: 'Declared', inputs, steps: [step('{{input.titel}}')] })
  assert.equal(wrong.status, 400, JSON.stringify(wrong.body))
  assert.equal(wrong.body.error.code, 'INVALID_TEMPLATE')
  assert.match(
    wrong.body.error.message,
    /steps\.0\.input\.name: \{\{input\.titel\}\} is not one of the tool's inputs \(title\)/,
  )
  const tool = await createTool({ name: 'Declared', inputs, steps: [step('{{input.title}}')] })
  assert.equal(tool.status, 201, JSON.stringify(tool.body))
  assert.deepEqual(tool.body.inputs, inputs)
  // Changing the inputs alone checks the steps that stay against them.
  const narrowed = await t.api('PATCH', `/v1/agents/${agentId}/tools/${tool.body.id}`, {
    inputs: { other: {} },
  })
  assert.equal(narrowed.body.error.code, 'INVALID_TEMPLATE')
  // Agents see the declared inputs as the tool's parameters.
  const listed = (await t.api('GET', `/v1/agents/${agentId}/tools.json?format=anthropic`)).body
  const fn = listed.find((x: any) => x.name === 'tool_declared')
  assert.deepEqual(fn.input_schema.required, ['title'])
  assert.equal(fn.input_schema.properties.title.type, 'string')
  // A run without the required input is refused before anything acts.
  const before = await cardsOn(B.board)
  const refused = await runTool(tool.body.id, {})
  assert.equal(refused.status, 400)
  assert.equal(refused.body.error.code, 'VALIDATION_FAILED')
  assert.match(refused.body.error.message, /input\.title: the tool requires it/)
  assert.equal(await cardsOn(B.board), before)
  const ran = await runTool(tool.body.id, { title: 'Declared input' })
  assert.equal(ran.body.status, 'succeeded', JSON.stringify(ran.body))
})

test('a run whose later step needs a value the input lacks stops before its first step acts', async () => {
  const tool = (
    await createTool({
      name: 'Two cards',
      steps: [
        { stepId: 'taskboard.create_card', connectionId: conn, input: { idList: B.list, name: 'First' } },
        {
          stepId: 'taskboard.create_card',
          connectionId: conn,
          input: { idList: B.list, name: 'For {{input.who}}' },
        },
      ],
    })
  ).body
  const before = await cardsOn(B.board)
  const run = (await runTool(tool.id, {})).body
  assert.equal(run.status, 'failed')
  assert.equal(run.errorCode, 'TEMPLATE_VALUE_MISSING')
  assert.match(run.errorMessage, /Step 1 .*steps\.1\.input\.name: \{\{input\.who\}\} has no value/)
  assert.deepEqual(
    run.steps.map((s: any) => s.status),
    ['skipped', 'failed'],
  )
  assert.equal(await cardsOn(B.board), before, 'the first step made no card')
})

test('step ids, connections, names and credentials are checked when a tool is saved', async () => {
  const tool = (steps: unknown[]) => createTool({ name: 'bad', steps })
  const expect = async (pending: Promise<{ status: number; body: any }>, code: string, message: RegExp) => {
    const res = await pending
    assert.equal(res.status, 400, JSON.stringify(res.body))
    assert.equal(res.body.error.code, code)
    assert.match(res.body.error.message, message)
  }
  await expect(
    tool([{ stepId: 'taskboard.fly', connectionId: conn, input: {} }]),
    'STEP_NOT_FOUND',
    /steps\.0\.stepId: there is no tool step "taskboard\.fly"/,
  )
  await expect(
    tool([{ stepId: 'taskboard.get_card', connectionId: otherConn, input: {} }]),
    'CONNECTION_NOT_ALLOWED',
    new RegExp(`steps\\.0\\.connectionId: agent ${agentId} may not use connection ${otherConn}`),
  )
  await expect(
    tool([
      { name: 'same', stepId: 'taskboard.get_card', connectionId: conn, input: {} },
      { name: 'same', stepId: 'taskboard.get_card', connectionId: conn, input: {} },
    ]),
    'DUPLICATE_STEP_NAME',
    /steps\.1\.name/,
  )
  await expect(
    tool([
      {
        stepId: 'taskboard.api_call',
        connectionId: conn,
        input: {
          auth: { type: 'api_key_token', key: 'k', token: 't' },
          method: 'GET',
          endpoint: '/1/members/me',
        },
      },
    ]),
    'INLINE_CREDENTIALS_NOT_ALLOWED',
    /steps\.0\.input carries credentials/,
  )
  await expect(tool([]), 'VALIDATION_FAILED', /body\.steps: must hold at least one step/)
  await expect(
    tool([{ stepId: 'taskboard.get_card', connectionId: conn, input: {}, name: '9lives' }]),
    'VALIDATION_FAILED',
    /body\.steps\.0\.name/,
  )
  const unknownAgent = await createTool(copyTool(), 'agt_nope')
  assert.equal(unknownAgent.status, 404)
  assert.equal(unknownAgent.body.error.code, 'AGENT_NOT_FOUND')
})

test('tools are changed, listed and deleted; an agent key reads and runs its own tools only', async () => {
  const tool = (await createTool(copyTool())).body
  const renamed = await t.api('PATCH', `/v1/agents/${agentId}/tools/${tool.id}`, { name: 'Copier 2' })
  assert.equal(renamed.status, 200)
  assert.equal(renamed.body.name, 'Copier 2')
  assert.deepEqual(renamed.body.steps, tool.steps)
  const badSteps = await t.api('PATCH', `/v1/agents/${agentId}/tools/${tool.id}`, {
    steps: [{ stepId: 'taskboard.get_card', connectionId: conn, input: { idCard: '{{nope}}' } }],
  })
  assert.equal(badSteps.body.error.code, 'INVALID_TEMPLATE')

  const listed = await t.api('GET', `/v1/agents/${agentId}/tools`, undefined, agentKey)
  assert.equal(listed.status, 200)
  assert.ok(listed.body.tools.some((x: any) => x.id === tool.id))
  assert.equal(
    (await t.api('GET', `/v1/agents/${agentId}/tools/${tool.id}`, undefined, agentKey)).status,
    200,
  )
  const cannotCreate = await t.api('POST', `/v1/agents/${agentId}/tools`, copyTool(), agentKey)
  assert.equal(cannotCreate.status, 403)
  assert.equal(cannotCreate.body.error.code, 'AGENT_KEY_FORBIDDEN')

  // Another agent's tools and runs are not this key's.
  const other = (
    await t.api('POST', '/v1/agents', { name: 'Other', connectionIds: [conn], delivery: { type: 'stream' } })
  ).body
  const otherTool = (await createTool(copyTool(), other.id)).body
  const run = await runTool(otherTool.id, { cardId: A.card, targetList: B.list }, agentKey, other.id)
  assert.equal(run.status, 403)
  assert.equal(run.body.error.code, 'AGENT_KEY_FORBIDDEN')
  const otherRun = await runTool(otherTool.id, { cardId: A.card, targetList: B.list }, t.adminKey, other.id)
  assert.equal(otherRun.body.status, 'failed', 'run as the other agent, whose scope is empty')
  assert.equal(otherRun.body.errorCode, 'SCOPE_DENIED')
  const hidden = await t.api('GET', `/v1/tool-runs/${otherRun.body.id}`, undefined, agentKey)
  assert.equal(hidden.status, 404)
  assert.equal(hidden.body.error.code, 'TOOL_RUN_NOT_FOUND')

  assert.equal((await t.api('DELETE', `/v1/agents/${agentId}/tools/${tool.id}`)).status, 204)
  const gone = await t.api('GET', `/v1/agents/${agentId}/tools/${tool.id}`)
  assert.equal(gone.status, 404)
  assert.equal(gone.body.error.code, 'TOOL_NOT_FOUND')
  assert.equal((await runTool(tool.id, {})).body.error.code, 'TOOL_NOT_FOUND')
})

test('tool runs page newest first; a bad cursor is refused; no credential is in any record', async () => {
  const tool = (
    await createTool({
      name: 'Read',
      steps: [{ stepId: 'taskboard.get_card', connectionId: conn, input: { idCard: '{{input.id}}' } }],
    })
  ).body
  const ids: string[] = []
  for (let i = 0; i < 3; i++) ids.push((await runTool(tool.id, { id: A.card })).body.id)
  const seen: string[] = []
  let path = `/v1/agents/${agentId}/tool-runs?toolId=${tool.id}&limit=2`
  for (;;) {
    const page = await t.api('GET', path, undefined, agentKey)
    assert.equal(page.status, 200, JSON.stringify(page.body))
    seen.push(...page.body.runs.map((r: any) => r.id))
    if (!page.body.next) break
    path = `/v1/agents/${agentId}/tool-runs?toolId=${tool.id}&limit=2&cursor=${page.body.next}`
  }
  assert.deepEqual(seen, ids.reverse())
  const bad = await t.api('GET', `/v1/agents/${agentId}/tool-runs?cursor=nonsense`)
  assert.equal(bad.status, 400)
  assert.equal(bad.body.error.code, 'INVALID_CURSOR')

  const rows = await t.service.engine.store.db.selectFrom('tool_runs').selectAll().execute()
  assert.ok(rows.length > 0)
  assert.ok(!JSON.stringify(rows).includes(t.taskboard.demo.token))
  assert.ok(!JSON.stringify(rows).includes(t.taskboard.demo.key))
})
