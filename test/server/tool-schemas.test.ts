// Every exported tool, checked against each model provider's rules: an agent with a connection
// of every connector and two tools (one declaring its inputs, one not) exports its whole list as
// OpenAI strict, OpenAI, Anthropic and Gemini function tools, and as MCP tools. OpenAI publishes
// its strict-mode normalizer (the `openai` package's toStrictJsonSchema, which throws on what
// strict mode cannot take): each strict schema must pass it unchanged. Anthropic and Gemini
// publish no validator; their documented rules are transcribed below, each with its page. Then
// calls written as the providers write them (nulls for "none", JSON text for an object of free
// keys) run against the sandboxes, and an unknown argument is refused by name.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { toStrictJsonSchema } from 'openai/lib/transform.js'
import {
  GEMINI_FORMATS,
  GEMINI_KEYWORDS,
  GEMINI_TYPES,
  OPENAI_STRICT_FORMATS,
  OPENAI_STRICT_KEYWORDS,
} from '../../src/engine/agents/tool-schemas.ts'
import { connectWithToken, mintToken } from '../helpers/codehost.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService
let agentId: string
let taskboard: string
const every = () => [...t.service.engine.registry.steps.keys()].filter((id) => !id.startsWith('http.'))

before(async () => {
  t = await startTestService({ contactdata: true, codehost: true })
  taskboard = (
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
  const contactdata = await t.api('POST', '/v1/connections', {
    connector: 'contactdata',
    authMethod: 'api_key',
    credentials: { apiKey: t.contactdata!.demo.apiKey },
  })
  const codehost = await connectWithToken(
    t,
    await mintToken(t.codehost!, { kind: 'classic', scopes: ['repo', 'workflow', 'gist', 'project'] }),
  )
  const agent = await t.api('POST', '/v1/agents', {
    name: 'Everything',
    scope: { boards: [t.taskboard.demo.boardId], repositories: [] },
    connectionIds: [taskboard, contactdata.body.id, codehost],
    delivery: { type: 'stream' },
  })
  agentId = agent.body.id
  for (const tool of [
    {
      name: 'Copy a card',
      steps: [
        {
          name: 'source',
          stepId: 'taskboard.get_card',
          connectionId: taskboard,
          input: { idCard: '{{input.cardId}}' },
        },
        {
          stepId: 'taskboard.create_card',
          connectionId: taskboard,
          input: { idList: '{{input.list}}', name: 'Copy of {{steps.source.output.name}} ({{input.note}})' },
        },
      ],
    },
    {
      name: 'Make a card',
      inputs: {
        list: { type: 'string', required: true },
        title: { description: 'The name.' },
        extra: { type: 'object' },
      },
      steps: [
        {
          stepId: 'taskboard.create_card',
          connectionId: taskboard,
          input: { idList: '{{input.list}}', name: '{{input.title}}' },
        },
      ],
    },
  ]) {
    const made = await t.api('POST', `/v1/agents/${agentId}/tools`, tool)
    assert.equal(made.status, 201, JSON.stringify(made.body))
  }
})
after(() => t.close())

const exported = async (query: string) => {
  const r = await t.api('GET', `/v1/agents/${agentId}/tools.json?${query}`)
  assert.equal(r.status, 200, JSON.stringify(r.body))
  return r.body as any[]
}

/** Every subschema with its path (properties, items, anyOf branches). */
function* subschemas(s: any, path = '#'): Generator<[string, any]> {
  yield [path, s]
  for (const [k, p] of Object.entries(s.properties ?? {})) yield* subschemas(p, `${path}/properties/${k}`)
  if (s.items && typeof s.items === 'object' && !Array.isArray(s.items))
    yield* subschemas(s.items, `${path}/items`)
  for (const key of ['anyOf', 'oneOf', 'allOf'])
    for (const [i, b] of (s[key] ?? []).entries()) yield* subschemas(b, `${path}/${key}/${i}`)
  if (s.additionalProperties && typeof s.additionalProperties === 'object')
    yield* subschemas(s.additionalProperties, `${path}/additionalProperties`)
}

/** The whole list: every step of the three connectors, both tools and describe_tool. */
const assertWholeList = (names: string[]) => {
  const want = [
    ...every().map((id) => id.replace('.', '_')),
    'tool_copy_a_card',
    'tool_make_a_card',
    'describe_tool',
  ]
  assert.deepEqual([...names].sort(), want.sort())
}

// OpenAI function names: a-z, A-Z, 0-9, underscores and dashes, at most 64
// (https://platform.openai.com/docs/api-reference/chat/create#chat-create-tools); Anthropic's the
// same, ^[a-zA-Z0-9_-]{1,64}$ (https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use).
const OPENAI_ANTHROPIC_NAME = /^[a-zA-Z0-9_-]{1,64}$/
// Gemini: starts with a letter or an underscore; letters, digits, underscores, dots, colons and
// dashes; at most 64 (https://ai.google.dev/api/caching#FunctionDeclaration).
const GEMINI_NAME = /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/

/** A description that is whole: no "…" cut, ending a sentence. */
const assertWholeDescription = (name: string, d: string) => {
  assert.ok(d.length > 0, name)
  assert.ok(!d.endsWith('…'), `${name}: cut: ${d}`)
  assert.match(d, /[.!?)]$/, `${name}: does not end a sentence: ${d}`)
}

test('OpenAI strict: every tool passes the openai package’s strict normalizer unchanged, and the documented keyword rules', async () => {
  const tools = await exported('format=openai&strict=true')
  assertWholeList(tools.map((x) => x.function.name))
  const rejected: string[] = []
  for (const { type, function: f } of tools) {
    assert.equal(type, 'function')
    assert.equal(f.strict, true, f.name)
    assert.match(f.name, OPENAI_ANTHROPIC_NAME)
    assertWholeDescription(f.name, f.description)
    try {
      // Throws on what strict mode cannot represent; changes what it would have to fix itself.
      assert.deepEqual(toStrictJsonSchema(f.parameters), f.parameters)
    } catch (err) {
      rejected.push(`${f.name}: ${(err as Error).message}`)
      continue
    }
    assert.equal(f.parameters.type, 'object', f.name)
    for (const [path, s] of subschemas(f.parameters)) {
      const where = `${f.name} ${path}`
      // https://platform.openai.com/docs/guides/structured-outputs#supported-schemas
      for (const k of Object.keys(s))
        assert.ok(OPENAI_STRICT_KEYWORDS.has(k), `${where}: ${k} is not supported`)
      if (s.format) assert.ok(OPENAI_STRICT_FORMATS.has(s.format), `${where}: format ${s.format}`)
      // "All fields must be required" and "additionalProperties: false must always be set in objects".
      if (s.properties) {
        assert.deepEqual(s.required, Object.keys(s.properties), where)
        assert.equal(s.additionalProperties, false, where)
      }
      // Every schema says its type (or is a union of typed branches).
      assert.ok(s.type !== undefined || s.anyOf !== undefined || s.enum !== undefined, `${where}: untyped`)
      if ([s.type].flat().includes('array')) assert.ok(s.items, `${where}: an array without items`)
    }
  }
  assert.deepEqual(rejected, [], `${rejected.length} of ${tools.length} rejected`)
})

test('OpenAI (not strict) and Anthropic: closed JSON Schemas that compile, names and descriptions whole', async () => {
  const ajv = new Ajv2020({ strict: false, validateFormats: false })
  for (const [query, of] of [
    [
      'format=openai',
      (x: any) => ({
        name: x.function.name,
        description: x.function.description,
        schema: x.function.parameters,
      }),
    ],
    ['format=anthropic', (x: any) => ({ name: x.name, description: x.description, schema: x.input_schema })],
  ] as const) {
    const tools = (await exported(query)).map(of)
    assertWholeList(tools.map((x) => x.name))
    for (const { name, description, schema } of tools) {
      assert.match(name, OPENAI_ANTHROPIC_NAME)
      assertWholeDescription(name, description)
      // Anthropic: input_schema is a JSON Schema object describing the parameters, of type object.
      assert.equal(schema.type, 'object', name)
      ajv.compile(schema)
      for (const [path, s] of subschemas(schema)) {
        if (s.properties) assert.equal(s.additionalProperties, false, `${name} ${path}: not closed`)
        assert.ok(
          s.type !== undefined ||
            s.anyOf ||
            s.oneOf ||
            s.enum ||
            s.const !== undefined ||
            path.endsWith('additionalProperties') ||
            path.endsWith('items'),
          `${name} ${path}: untyped`,
        )
      }
    }
  }
})

test('Gemini: every function declaration uses only the documented Schema subset', async () => {
  const tools = await exported('format=gemini')
  assertWholeList(tools.map((x) => x.name))
  const rejected: string[] = []
  for (const fn of tools) {
    assert.match(fn.name, GEMINI_NAME)
    assertWholeDescription(fn.name, fn.description)
    assert.deepEqual(
      Object.keys(fn).filter((k) => !['name', 'description', 'parameters'].includes(k)),
      [],
    )
    if (!fn.parameters) continue
    assert.equal(fn.parameters.type, 'object', fn.name)
    for (const [path, s] of subschemas(fn.parameters)) {
      const where = `${fn.name} ${path}`
      // https://ai.google.dev/api/caching#Schema: the fields a Schema may have.
      for (const k of Object.keys(s)) if (!GEMINI_KEYWORDS.has(k)) rejected.push(`${where}: ${k}`)
      // type is one value of the Type enum (no type arrays); a schema without one is refused.
      if (s.anyOf === undefined) {
        if (typeof s.type !== 'string' || !GEMINI_TYPES.has(s.type))
          rejected.push(`${where}: type ${JSON.stringify(s.type)}`)
      }
      // enum: "Possible values of the element of Type.STRING".
      if (s.enum && (s.type !== 'string' || s.enum.some((v: unknown) => typeof v !== 'string')))
        rejected.push(`${where}: enum on ${s.type}`)
      if (s.format && !GEMINI_FORMATS[s.type]?.has(s.format))
        rejected.push(`${where}: format ${s.format} on ${s.type}`)
      // "properties: should be non-empty for OBJECT type" (the API's refusal).
      if (s.type === 'object' && Object.keys(s.properties ?? {}).length === 0)
        rejected.push(`${where}: empty object`)
      if (s.type === 'array' && !s.items) rejected.push(`${where}: array without items`)
      for (const r of s.required ?? [])
        if (!s.properties?.[r]) rejected.push(`${where}: requires undeclared ${r}`)
    }
  }
  assert.deepEqual(
    rejected,
    [],
    `${new Set(rejected.map((r) => r.split(' ')[0])).size} of ${tools.length} rejected`,
  )
})

test('MCP inputSchema is closed, typed for the tools too, and the same as the OpenAI (not strict) parameters', async () => {
  const mcp = await exported('format=mcp')
  const openai = await exported('format=openai')
  for (const tool of mcp) {
    const same = openai.find((x) => x.function.name === tool.name)
    assert.deepEqual(tool.inputSchema, same.function.parameters, tool.name)
    assert.equal(tool.inputSchema.additionalProperties, false, tool.name)
  }
  const copy = mcp.find((x) => x.name === 'tool_copy_a_card').inputSchema
  // Read whole into a step field: that field's type; read inside a text: a string.
  assert.equal(copy.properties.cardId.type, 'string')
  assert.equal(copy.properties.note.type, 'string')
  const make = mcp.find((x) => x.name === 'tool_make_a_card').inputSchema
  assert.deepEqual(make.required, ['list'])
  assert.equal(make.properties.title.type, 'string', 'undeclared type: the type of the field it fills')
  assert.equal(make.properties.extra.type, 'object')
})

test('a provider format that does not exist is refused, naming those that do', async () => {
  const r = await t.api('GET', `/v1/agents/${agentId}/tools.json?format=mistral`)
  assert.equal(r.status, 400)
  assert.equal(r.body.error.code, 'VALIDATION_FAILED')
  for (const f of ['openai', 'anthropic', 'gemini', 'mcp']) assert.match(r.body.error.message, new RegExp(f))
  const own = await t.api('GET', `/v1/function-tools?agent=${agentId}&format=gemini`)
  assert.equal(own.status, 200)
  assert.equal(own.body.length, (await exported('format=gemini')).length)
})

test('calls as the providers write them run; an unknown argument is refused by name', async () => {
  const call = (name: string, args: unknown) =>
    t.api('POST', `/v1/agents/${agentId}/function-call`, { name, arguments: args })
  // OpenAI strict: every optional argument present, null for none.
  const strict = (await exported('format=openai&strict=true')).find(
    (x) => x.function.name === 'taskboard_create_card',
  )
  const args: Record<string, unknown> = Object.fromEntries(
    Object.keys(strict.function.parameters.properties).map((k) => [k, null]),
  )
  args.idList = t.taskboard.demo.listIds[0]
  args.name = 'Written as OpenAI strict writes it'
  const made = await call('taskboard_create_card', JSON.stringify(args))
  assert.equal(made.status, 200, JSON.stringify(made.body))
  assert.equal(made.body.output.name, 'Written as OpenAI strict writes it')
  // An object of free keys, asked for as JSON text (query of api_call), parsed back.
  const gemini = (await exported('format=gemini')).find((x) => x.name === 'taskboard_api_call')
  assert.equal(gemini.parameters.properties.query.type, 'string')
  const listed = await call('taskboard_api_call', {
    method: 'GET',
    endpoint: `/1/lists/${t.taskboard.demo.listIds[0]}/cards`,
    query: JSON.stringify({ fields: 'name' }),
  })
  assert.equal(listed.status, 200, JSON.stringify(listed.body))
  assert.ok(listed.body.output.body.some((c: any) => c.name === 'Written as OpenAI strict writes it'))
  // An argument the step does not take: refused with its name, by the function call and by REST.
  const unknown = await call('contactdata_search_companies', { query: 'acme' })
  assert.equal(unknown.status, 400)
  assert.equal(unknown.body.error.code, 'VALIDATION_FAILED')
  assert.match(
    unknown.body.error.message,
    /input\.query: is not an argument here \(the arguments are: industry, location/,
  )
  const rest = await t.api('POST', '/v1/steps/taskboard.get_card/run', {
    connectionId: taskboard,
    input: { idCard: 'x', colour: 'red' },
  })
  assert.equal(rest.status, 400)
  assert.match(rest.body.error.message, /input\.colour: is not an argument here/)
})
