// The `patchbay` command against a real Patchbay and the sandbox task-board: run as a child
// process (always), and in a real terminal through tmux (skipped, with the reason printed, when
// tmux is not installed). Also the launcher on an older Node, and MCP over stdio.
import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { after, before, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { testConnectors } from '../connectors/extra/index.ts'
import { startShelfUpstream } from '../connectors/extra/shelf/upstream.ts'
import { eventually } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

const root = path.resolve(import.meta.dirname, '../..')
const MAIN = path.join(root, 'src/cli/main.ts')
const LAUNCHER = path.join(root, 'src/cli/patchbay.mjs')

let t: TestService
let conn: string
let agentId: string
let agentKey: string

interface Ran {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs `patchbay …` to its end; `env` adds to (or, with undefined, removes from) the environment. */
function cli(
  args: string[],
  env: Record<string, string | undefined> = {},
  node = process.execPath,
  entry = MAIN,
) {
  return new Promise<Ran>((resolve, reject) => {
    const child = spawn(node, [entry, ...args], {
      cwd: root,
      env: cleanEnv({ PATCHBAY_URL: t.url, PATCHBAY_KEY: t.adminKey, ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c) => (stdout += c))
    child.stderr.on('data', (c) => (stderr += c))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

function cleanEnv(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' }
  delete env.NODE_TEST_CONTEXT
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k]
    else env[k] = v
  }
  return env
}

const card = (name: string) =>
  t.api('POST', '/v1/steps/taskboard.create_card/run', {
    connectionId: conn,
    input: { idList: t.taskboard.demo.listIds[0], name },
  })

before(async () => {
  t = await startTestService()
  conn = (
    await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: {
        key: t.taskboard.demo.key,
        token: t.taskboard.demo.token,
        secret: t.taskboard.demo.secret,
      },
    })
  ).body.id
})
after(() => t.close())

test('agents, keys and triggers are made from the command line', async () => {
  const made = await cli([
    'agents',
    'create',
    '--name',
    'CLI agent',
    '--board',
    t.taskboard.demo.boardId,
    '--connection',
    conn,
    '--stream',
    '--json',
  ])
  assert.equal(made.code, 0, made.stderr)
  const agent = JSON.parse(made.stdout)
  assert.match(agent.signingSecret, /^whsec_/)
  agentId = agent.id
  const key = await cli(['agents', 'keys', 'create', agentId, '--name', 'cli', '--json'])
  assert.equal(key.code, 0, key.stderr)
  agentKey = JSON.parse(key.stdout).key
  const keys = await cli(['agents', 'keys', 'list', agentId])
  assert.match(keys.stdout, /^ID\s+NAME\s+KEY PREFIX/)
  assert.doesNotMatch(keys.stdout, new RegExp(agentKey))

  const trig = await cli([
    'triggers',
    'create',
    '--agent',
    agentId,
    '--trigger',
    'taskboard.new_card',
    '--connection',
    conn,
    '--set',
    `idBoard=${t.taskboard.demo.boardId}`,
    '--json',
  ])
  assert.equal(trig.code, 0, trig.stderr)
  const triggerId = JSON.parse(trig.stdout).id
  const listed = await cli(['triggers', 'list', '--agent', agentId])
  assert.match(listed.stdout, new RegExp(`${triggerId}\\s+taskboard\\.new_card`))
  const diagnosed = await cli(['triggers', 'diagnose', triggerId])
  assert.match(diagnosed.stdout, /connection_lapsed/, diagnosed.stderr)

  const agents = await cli(['agents', 'list'])
  assert.match(agents.stdout, /^ID\s+NAME\s+BOARDS/)
  assert.match(agents.stdout, /CLI agent/)
  const connections = await cli(['connections', 'list'])
  assert.match(connections.stdout, new RegExp(`${conn}\\s+taskboard\\s+demo\\s+active`))
})

test('agents create --place puts places of any kind the connectors declare in the scope; an unknown scope key is refused with the keys there are', async () => {
  const made = await cli([
    'agents',
    'create',
    '--name',
    'Placed agent',
    '--place',
    'repositories=octo/demo',
    '--board',
    t.taskboard.demo.boardId,
    '--place',
    `boards=${'b'.repeat(24)}`,
    '--json',
  ])
  assert.equal(made.code, 0, made.stderr)
  assert.deepEqual(JSON.parse(made.stdout).scope, {
    boards: [t.taskboard.demo.boardId, 'b'.repeat(24)],
    repositories: ['octo/demo'],
  })

  const unknown = await cli(['agents', 'create', '--name', 'Nowhere', '--place', 'shelves=shelf-a'])
  assert.equal(unknown.code, 2)
  assert.match(
    unknown.stderr,
    /"shelves" is not a scope key of this Patchbay's connectors; the scope keys are: boards, repositories\./,
  )
  const malformed = await cli(['agents', 'create', '--name', 'Nowhere', '--place', 'boards'])
  assert.equal(malformed.code, 2)
  assert.match(
    malformed.stderr,
    /--place takes <scopeKey>=<id>, not "boards"; the scope keys are: boards, repositories\./,
  )
  assert.equal(
    (await t.api('GET', '/v1/agents')).body.agents.filter((a: any) => a.name === 'Nowhere').length,
    0,
  )

  // Against a Patchbay with another connector (the tests' shelf), its kind is a scope key too,
  // and agents list shows a column for it.
  const shelfUp = await startShelfUpstream()
  const other = await startTestService({ connectors: testConnectors, baseUrls: { shelf: shelfUp.url } })
  try {
    const env = { PATCHBAY_URL: other.url, PATCHBAY_KEY: other.adminKey }
    const shelved = await cli(
      ['agents', 'create', '--name', 'Shelved', '--place', 'shelves=shelf-a', '--json'],
      env,
    )
    assert.equal(shelved.code, 0, shelved.stderr)
    assert.deepEqual(JSON.parse(shelved.stdout).scope, { boards: [], repositories: [], shelves: ['shelf-a'] })
    const listed = await cli(['agents', 'list'], env)
    assert.match(listed.stdout, /^ID\s+NAME\s+BOARDS\s+REPOSITORIES\s+SHELVES\s+CONNECTIONS\s+DELIVERY/)
    assert.match(listed.stdout, /Shelved\s+shelf-a\s+stream/)
  } finally {
    await other.close()
    await shelfUp.close()
  }
})

test('steps search and run: a table for people, JSON for scripts', async () => {
  const found = await cli(['steps', 'search', 'task-board'])
  assert.equal(found.code, 0, found.stderr)
  assert.match(found.stdout, /^ID\s+NAME\s+HINTS/)
  assert.match(found.stdout, /taskboard\.get_card\s+Get Card\s+read-only, idempotent/)

  const ran = await cli([
    'steps',
    'run',
    'taskboard.create_card',
    '--connection',
    conn,
    '--set',
    `idList=${t.taskboard.demo.listIds[0]}`,
    '--set',
    'name=Made by the CLI',
    '--json',
  ])
  assert.equal(ran.code, 0, ran.stderr)
  const result = JSON.parse(ran.stdout)
  assert.equal(result.output.name, 'Made by the CLI')
  assert.match(result.meta.runId, /^run_/)

  const human = await cli([
    'steps',
    'run',
    'taskboard.get_card',
    '--connection',
    conn,
    '--input',
    JSON.stringify({ idCard: result.output.id }),
  ])
  assert.equal(human.code, 0, human.stderr)
  assert.equal(JSON.parse(human.stdout).name, 'Made by the CLI')
  assert.match(human.stderr, /taskboard\.get_card in [\d.]+ ms/)
})

test('steps options and triggers options list a field’s choices: the boards, then the lists of the chosen board', async () => {
  const boards = await cli(['steps', 'options', 'taskboard.create_card', 'idBoard', '--connection', conn])
  assert.equal(boards.code, 0, boards.stderr)
  assert.match(boards.stdout, /^VALUE\s+LABEL\s+DETAIL/)
  assert.match(boards.stdout, new RegExp(`${t.taskboard.demo.boardId}\\s+Demo Board`))
  const lists = await cli([
    'steps',
    'options',
    'taskboard.create_card',
    'idList',
    '--parent',
    `idBoard=${t.taskboard.demo.boardId}`,
    '--json',
  ])
  assert.equal(lists.code, 0, lists.stderr)
  const found = JSON.parse(lists.stdout)
  assert.equal(found.noun, 'list')
  assert.deepEqual(
    found.choices.map((c: { value: string }) => c.value),
    t.taskboard.demo.listIds,
  )
  // A trigger's config field too: the boards a New Card trigger can watch.
  const watch = await cli(['triggers', 'options', 'taskboard.new_card', 'idBoard', '--json'])
  assert.equal(watch.code, 0, watch.stderr)
  assert.ok(JSON.parse(watch.stdout).choices.some((c: { label: string }) => c.label === 'Demo Board'))
  const noParent = await cli(['steps', 'options', 'taskboard.create_card', 'idList'])
  assert.equal(noParent.code, 1)
  assert.match(noParent.stderr, /PARENT_REQUIRED/)
})

test('API errors print code, message and hint and exit 1; an agent key is scoped', async () => {
  const invalid = await cli([
    'steps',
    'run',
    'taskboard.create_card',
    '--connection',
    conn,
    '--set',
    `idList=${t.taskboard.demo.listIds[0]}`,
  ])
  assert.equal(invalid.code, 1)
  assert.match(invalid.stderr, /error: VALIDATION_FAILED \(HTTP 400\): .*input\.name/)
  assert.match(invalid.stderr, /hint: Correct the named fields/)
  assert.equal(invalid.stdout, '')

  const asJson = await cli(['steps', 'run', 'taskboard.nope', '--json'])
  assert.equal(asJson.code, 1)
  assert.equal(JSON.parse(asJson.stdout).error.code, 'STEP_NOT_FOUND')

  const wrongKey = await cli(['connections', 'list'], { PATCHBAY_KEY: 'pb_admin_wrong' })
  assert.equal(wrongKey.code, 1)
  assert.match(wrongKey.stderr, /UNAUTHORIZED/)

  const noKey = await cli(['connections', 'list'], { PATCHBAY_KEY: undefined })
  assert.equal(noKey.code, 2)
  assert.match(noKey.stderr, /No API key/)

  const outside = await cli(
    [
      'steps',
      'run',
      'taskboard.api_call',
      '--connection',
      conn,
      '--set',
      'method=GET',
      '--set',
      'endpoint=/1/members/me',
    ],
    { PATCHBAY_KEY: agentKey },
  )
  assert.equal(outside.code, 1)
  assert.match(outside.stderr, /SCOPE_DENIED/)

  const unreachable = await cli(['connections', 'list', '--url', 'http://127.0.0.1:9'])
  assert.equal(unreachable.code, 1)
  assert.match(unreachable.stderr, /could not reach Patchbay/)
})

test('inbox list and retry go through the API: nothing set aside lists empty, an unknown row is INBOX_ROW_NOT_FOUND', async () => {
  const empty = await cli(['inbox', 'list', '--json'])
  assert.equal(empty.code, 0, empty.stderr)
  assert.deepEqual(JSON.parse(empty.stdout), [])
  const missing = await cli(['inbox', 'retry', '999999999'])
  assert.equal(missing.code, 1)
  assert.match(missing.stderr, /INBOX_ROW_NOT_FOUND/)
  const bad = await cli(['inbox', 'retry', 'x'])
  assert.equal(bad.code, 2)
})

test('unknown flags, commands and missing arguments are usage errors (exit 2)', async () => {
  const flag = await cli(['steps', 'run', 'taskboard.get_card', '--bogus'])
  assert.equal(flag.code, 2)
  assert.match(flag.stderr, /Unknown option '--bogus'/)
  assert.match(flag.stderr, /patchbay steps run --help/)

  const command = await cli(['frobnicate'])
  assert.equal(command.code, 2)
  assert.match(command.stderr, /Unknown command "frobnicate"/)

  const sub = await cli(['agents', 'keys', 'frob'])
  assert.equal(sub.code, 2)
  assert.match(sub.stderr, /Unknown command "agents keys frob"/)
  assert.match(sub.stderr, /patchbay agents keys create/)

  const missing = await cli(['steps', 'run'])
  assert.equal(missing.code, 2)
  assert.match(missing.stderr, /needs <stepId>/)

  const badJson = await cli(['steps', 'run', 'taskboard.get_card', '--input', '{nope'])
  assert.equal(badJson.code, 2)
  assert.match(badJson.stderr, /--input is not valid JSON/)

  const help = await cli(['steps', 'run', '--help'])
  assert.equal(help.code, 0)
  assert.match(help.stdout, /--connection <id>/)
})

test('events tail prints the agent’s events and stops after --count', async () => {
  // Start after what earlier tests made happen.
  const latest = (await t.api('GET', `/v1/deliveries?agentId=${agentId}&limit=1`)).body.deliveries[0]
  await card('tail one')
  await card('tail two')
  const tail = await cli(
    ['events', 'tail', '--agent', agentId, '--since', String(latest?.seq ?? 0), '--count', '2'],
    {
      PATCHBAY_KEY: agentKey,
    },
  )
  assert.equal(tail.code, 0, tail.stderr)
  const lines = tail.stdout.trim().split('\n')
  assert.equal(lines.length, 2)
  assert.match(lines[0], /^#\d+ .*taskboard\.new_card .*"tail one"$/)
  assert.match(lines[1], /"tail two"$/)
  assert.match(tail.stderr, /Following the events of/)

  const first = Number(/^#(\d+)/.exec(lines[0])![1])
  const resumed = await cli([
    'events',
    'tail',
    '--agent',
    agentId,
    '--since',
    String(first),
    '--count',
    '1',
    '--json',
  ])
  assert.equal(resumed.code, 0, resumed.stderr)
  assert.equal(JSON.parse(resumed.stdout).delivery.data.event.data.card.name, 'tail two')
})

test('events tail on an agent whose events go to a webhook says so and what to do, instead of waiting for nothing', async () => {
  const hooked = await t.api('POST', '/v1/agents', {
    name: 'Hooked',
    scope: { boards: [] },
    connectionIds: [],
    delivery: { type: 'webhook', url: 'https://agent.example/hook' },
  })
  assert.equal(hooked.status, 201, JSON.stringify(hooked.body))
  const tail = await cli(['events', 'tail', '--agent', hooked.body.id, '--count', '1'])
  assert.equal(tail.code, 1)
  assert.match(tail.stderr, /pushed to its webhook https:\/\/agent\.example\/hook/)
  assert.match(tail.stderr, /GET \/v1\/deliveries\?agentId=/)
  assert.match(tail.stderr, /"delivery":\{"type":"stream"\}/)
})

test('mcp serves the agent over stdio through the running Patchbay', async () => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN, 'mcp', '--agent', agentId],
    cwd: root,
    env: cleanEnv({ PATCHBAY_URL: t.url, PATCHBAY_KEY: agentKey }) as Record<string, string>,
    stderr: 'pipe',
  })
  const client = new Client({ name: 'stdio-test', version: '1.0.0' })
  await client.connect(transport)
  try {
    const { tools } = await client.listTools()
    assert.deepEqual(
      tools.map((x) => x.name).sort(),
      [...(await taskboardToolNames()), 'describe_tool'].sort(),
    )
    const made: any = await client.callTool({
      name: 'taskboard_create_card',
      arguments: { idList: t.taskboard.demo.listIds[0], name: 'Over stdio' },
    })
    assert.equal(made.structuredContent.name, 'Over stdio')
    const denied: any = await client.callTool({
      name: 'taskboard_api_call',
      arguments: { method: 'GET', endpoint: '/1/members/me' },
    })
    assert.equal(denied.isError, true)
    assert.equal(JSON.parse(denied.content[0].text).error.code, 'SCOPE_DENIED')
  } finally {
    await client.close()
  }
  const refused = await cli(['mcp', '--agent', agentId], { PATCHBAY_KEY: 'pb_agent_wrong' })
  assert.equal(refused.code, 1)
  assert.match(refused.stderr, /UNAUTHORIZED/)
})

test('the launcher runs the CLI on this Node and re-executes an older one with the bundled Node 24', async () => {
  const direct = await cli(['--version'], {}, process.execPath, LAUNCHER)
  assert.equal(direct.code, 0, direct.stderr)
  assert.match(direct.stdout, /^\d+\.\d+\.\d+\n$/)
  const older = findOlderNode()
  if (!older) {
    console.log('# skipped the re-exec part: no Node older than 24 on PATH')
    return
  }
  const viaOlder = await cli(['steps', 'search', 'task-board', '--json'], {}, older, LAUNCHER)
  assert.equal(viaOlder.code, 0, viaOlder.stderr)
  assert.ok(JSON.parse(viaOlder.stdout).some((s: { id: string }) => s.id === 'taskboard.create_card'))
  const failing = await cli(['frobnicate'], {}, older, LAUNCHER)
  assert.equal(failing.code, 2)
})

/** Every task-board step as an MCP tool name: the agent has a task-board connection and nothing else. */
async function taskboardToolNames(): Promise<string[]> {
  const { steps } = (await t.api('GET', '/v1/steps?q=task-board')).body
  return steps.map((s: { id: string }) => s.id.replace('.', '_')).sort()
}

function findOlderNode(): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'node')
    if (!existsSync(candidate)) continue
    try {
      const version = execFileSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim()
      if (Number(version.split('.')[0]) < 24) return candidate
    } catch {}
  }
  return null
}

// ---- in a real terminal

const hasTmux = (() => {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()
if (!hasTmux) console.log('# skipped the terminal tests: tmux is not installed')

test('in a terminal (tmux): steps run shows the output, events tail follows live until Ctrl-C', {
  skip: !hasTmux && 'tmux is not installed',
}, async () => {
  const socket = `patchbay-test-${process.pid}`
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' })
  const pane = () => tmux('capture-pane', '-p', '-J', '-S', '-200', '-t', 'cli')
  const type = (line: string) => tmux('send-keys', '-t', 'cli', line, 'Enter')
  tmux(
    'new-session',
    '-d',
    '-s',
    'cli',
    '-x',
    '200',
    '-y',
    '50',
    '-c',
    root,
    '-e',
    `PATCHBAY_URL=${t.url}`,
    '-e',
    `PATCHBAY_KEY=${agentKey}`,
    'bash --noprofile --norc',
  )
  try {
    const node = process.execPath
    type(
      `PS1='$ '; ${node} src/cli/main.ts steps run taskboard.create_card --set idList=${t.taskboard.demo.listIds[0]} --set 'name=Typed in a terminal'; echo "exit=$?"`,
    )
    const ran = await eventually(
      async () => pane(),
      (p) => /exit=\d/.test(p),
    )
    assert.match(ran, /"name": "Typed in a terminal"/)
    assert.match(ran, /taskboard\.create_card in [\d.]+ ms/)
    assert.match(ran, /exit=0/)

    type('clear')
    // Through the launcher, on an older Node when there is one (it then re-executes Node 24).
    type(
      `${findOlderNode() ?? node} src/cli/patchbay.mjs events tail --agent ${agentId}; echo "tail exit=$?"`,
    )
    await eventually(
      async () => pane(),
      (p) => /Following the events of/.test(p),
    )
    await card('live in tmux')
    const live = await eventually(
      async () => pane(),
      (p) => /"live in tmux"/.test(p),
    )
    assert.match(live, /#\d+ .*taskboard\.new_card .*"live in tmux"/)
    tmux('send-keys', '-t', 'cli', 'C-c')
    const stopped = await eventually(
      async () => pane(),
      (p) => /tail exit=\d+/.test(p),
    )
    assert.match(stopped, /tail exit=0/)

    type(`${node} src/cli/main.ts steps run taskboard.get_card --bogus; echo "bad exit=$?"`)
    const bad = await eventually(
      async () => pane(),
      (p) => /bad exit=\d/.test(p),
    )
    assert.match(bad, /Unknown option '--bogus'/)
    assert.match(bad, /bad exit=2/)
  } finally {
    try {
      tmux('kill-server')
    } catch {}
  }
})
