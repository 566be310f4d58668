// What an agent can call, as one list: the tool steps of every connector the agent has a
// connection for, and the agent's own tools (chains). The MCP server and the function-calling
// exports (OpenAI, Anthropic) are both made from this list, and every call goes through
// engine.steps.run / engine.tools.run as the agent, so scope is checked exactly as in the REST
// API. Everything about a step — name, description, schemas, hints — comes from the registry.
import { PatchbayError, validationError } from '../../kit/errors.ts'
import type { JsonSchemaNode } from '../../kit/json-schema.ts'
import type { Caller } from '../access/caller.ts'
import type { WorkspaceSettings } from '../access/workspace-settings.ts'
import type { ConnectionService, ConnectionView } from '../connections/connection-service.ts'
import type { Registry } from '../registry.ts'
import type { StepRunner } from '../steps/step-runner.ts'
import { parseTemplate, stringsOf } from '../tools/templates.ts'
import type { ToolRunView, ToolService, ToolView } from '../tools/tool-service.ts'
import type { AgentService, AgentView } from './agent-service.ts'
import { fromProviderArguments, unknownArguments } from './tool-schemas.ts'

/** A JSON Schema of an object, as MCP and the function-calling formats want it. */
export type ObjectSchema = { type: 'object'; properties?: Record<string, unknown>; [k: string]: unknown }

export interface AgentCallable {
  /** `taskboard_create_card` (the step id with '.' → '_'), `tool_<name>` for a tool, or DESCRIBE_TOOL. */
  name: string
  title: string
  /** Concise: what the tool does, in a sentence. The whole guidance is in `describe`. */
  description: string
  /** The input schema with each field's description cut to its first sentence. */
  inputSchema: ObjectSchema
  /**
   * Only the hints that differ from MCP's defaults (readOnlyHint false, destructiveHint true,
   * idempotentHint false, openWorldHint true): the defaults cost context and say nothing.
   */
  annotations: { readOnlyHint?: true; destructiveHint?: false; idempotentHint?: true; openWorldHint?: false }
  /** What DESCRIBE_TOOL answers: the whole description and schemas, for an agent that asks. */
  describe: ToolDescription
  target:
    | { kind: 'step'; stepId: string; connector: string; connections: ConnectionView[] }
    | { kind: 'tool'; toolId: string }
    | { kind: 'describe' }
    | { kind: 'find' }
    | { kind: 'call' }
}

/** One callable told in full: its guidance (where each id comes from) and the shape of its result. */
export interface ToolDescription {
  name: string
  title: string
  description: string
  inputSchema: ObjectSchema
  /** Present when the result is always an object of this shape (steps whose output is an object). */
  outputSchema?: ObjectSchema
}

export type CallResult =
  | { kind: 'step'; output: unknown; meta: { runId: string; durationMs: number; attempts: number } }
  | { kind: 'tool'; run: ToolRunView }
  | { kind: 'describe'; output: ToolDescription }
  | { kind: 'found'; output: FoundTools }

/** What find_tools answers: the best matches, each ready to call, and how many matched. */
export interface FoundTools {
  tools: Array<Pick<AgentCallable, 'name' | 'title' | 'description' | 'inputSchema' | 'annotations'>>
  total: number
}

/**
 * The callable that tells the rest in full. `tools/list` and the function-calling exports carry
 * concise descriptions (a large catalog would otherwise fill much of a model's context before it
 * does anything); the guidance each step has — where an id comes from, what a field accepts, the
 * output's shape — is one call away.
 */
export const DESCRIBE_TOOL = 'describe_tool'

/** Discovery mode's two tools: find the agent's tools by words, and call one by name. */
export const FIND_TOOLS = 'find_tools'
export const CALL_TOOL = 'call_tool'

/** The argument every step callable takes besides the step's own input. */
export const CONNECTION_ARGUMENT = 'connectionId'

/** `taskboard.create_card` → `taskboard_create_card` (connector ids hold no '_'). */
export const callableNameOfStep = (stepId: string) => stepId.replace('.', '_')

export interface ToolboxDeps {
  registry: Registry
  agents: AgentService
  connections: ConnectionService
  tools: ToolService
  steps: StepRunner
  /** Whether credentials given inline are offered to models (allowInlineAuth). */
  settings: WorkspaceSettings
}

export class AgentToolbox {
  #d: ToolboxDeps

  constructor(deps: ToolboxDeps) {
    this.#d = deps
  }

  /** The caller's agent (an agent key, or a workspace key acting as a named agent). */
  agent(caller: Caller): Promise<AgentView> {
    return this.#d.agents.forCaller(caller)
  }

  /**
   * Each callable told in full, as describe_tool tells it (MCP offers them as resources too):
   * the whole description, the input schema with each field's guidance, the output schema.
   */
  async descriptions(caller: Caller): Promise<ToolDescription[]> {
    return (await this.#given(caller)).given.map((c) => c.describe)
  }

  /**
   * What the agent lists: without a tool selection its steps, its tools and describe_tool (as
   * before selections existed); with one, exactly the steps and tools it selects; in discovery
   * mode find_tools and call_tool, which reach the same selection.
   */
  async list(caller: Caller): Promise<AgentCallable[]> {
    const { agent, given } = await this.#given(caller)
    if (!agent.toolSelection) return [...given, describeCallable()]
    return agent.toolSelection.discovery ? [findToolsCallable(), callToolCallable()] : given
  }

  /** Every callable of the agent's connections and tools, and those its selection gives it. */
  async #given(caller: Caller): Promise<{ agent: AgentView; all: AgentCallable[]; given: AgentCallable[] }> {
    const agent = await this.agent(caller)
    const all = await this.#callables(caller, agent)
    const selection = agent.toolSelection
    if (!selection) return { agent, all, given: all }
    const given = all.filter((c) =>
      c.target.kind === 'step'
        ? !selection.steps ||
          selection.steps.includes(c.target.stepId) ||
          selection.steps.includes(c.target.connector)
        : c.target.kind === 'tool'
          ? !selection.tools || [c.target.toolId, c.title, c.name].some((x) => selection.tools!.includes(x))
          : false,
    )
    return { agent, all, given }
  }

  async #callables(caller: Caller, agent: AgentView): Promise<AgentCallable[]> {
    const connections = await this.#d.connections.named(caller.workspaceId, agent.connectionIds)
    const { allowInlineAuth } = await this.#d.settings.get(caller.workspaceId)
    const out: AgentCallable[] = []
    for (const { id, connector } of this.#d.registry.steps.values()) {
      const usable = connections.filter((c) => c.connector === connector.id)
      if (usable.length > 0) out.push(this.#stepCallable(id, usable, allowInlineAuth))
    }
    const tools = await this.#d.tools.list(caller.workspaceId, agent.id)
    const taken = new Set(out.map((c) => c.name))
    for (const tool of tools) {
      const callable = this.#toolCallable(tool, taken)
      taken.add(callable.name)
      out.push(callable)
    }
    return out
  }

  /**
   * Calls one of the agent's callables by name. Throws a PatchbayError for anything the REST API
   * would refuse (validation, scope, upstream failures); a tool run that fails resolves with the
   * run (status `failed`) so its record reaches the caller.
   */
  async call(caller: Caller, name: string, rawArgs: unknown): Promise<CallResult> {
    const { agent, all, given } = await this.#given(caller)
    // What it lists, and in any mode the callables its selection gives it by their own names
    // (a client in discovery mode may call what find_tools found directly).
    const callables = [...(await this.list(caller)), ...given]
    if (!callables.some((c) => c.target.kind === 'describe')) callables.push(describeCallable())
    const callable = callables.find((c) => c.name === name)
    if (!callable) throw all.some((c) => c.name === name) ? notGiven(name, agent.id) : unknownCallable(name)
    if (typeof (rawArgs ?? {}) !== 'object' || Array.isArray(rawArgs))
      throw new PatchbayError('VALIDATION_FAILED', 'Invalid input: the arguments must be an object.', {
        hint: "Send the arguments as a JSON object per the tool's inputSchema.",
      })
    // As OpenAI's strict mode or Gemini write them (null for "none", JSON text for an object of
    // free keys), back in the callable's own shape; then an argument it does not take is refused.
    const args = fromProviderArguments(callable.describe.inputSchema, rawArgs ?? {}) as Record<
      string,
      unknown
    >
    const unknown = unknownArguments(callable.describe.inputSchema, args)
    if (unknown.length > 0) throw validationError(unknown, 'input')
    if (callable.target.kind === 'describe') {
      const wanted = args.name
      const described = given.find((c) => c.name === wanted)
      if (typeof wanted !== 'string' || !described)
        throw new PatchbayError(
          'VALIDATION_FAILED',
          `Invalid input: name: ${typeof wanted === 'string' ? `this agent has no tool "${wanted}"` : 'must be the name of one of the tools'}.`,
          {
            hint: `Give the name of a tool from the tool list, e.g. {"name": "${given[0]?.name ?? DESCRIBE_TOOL}"}.`,
          },
        )
      return { kind: 'describe', output: described.describe }
    }
    if (callable.target.kind === 'find') return { kind: 'found', output: findTools(given, args) }
    if (callable.target.kind === 'call') {
      const inner = args.name
      if (typeof inner !== 'string' || inner === FIND_TOOLS || inner === CALL_TOOL)
        throw new PatchbayError(
          'VALIDATION_FAILED',
          'Invalid input: name: must be the name of a tool find_tools found.',
          {
            hint: `Find one first: ${FIND_TOOLS} {"query": "<what it should do>"}.`,
          },
        )
      return this.call(caller, inner, args.arguments ?? {})
    }
    if (callable.target.kind === 'tool') {
      const run = await this.#d.tools.run(caller.workspaceId, agent.id, callable.target.toolId, {
        input: args,
        caller,
      })
      return { kind: 'tool', run }
    }
    const { [CONNECTION_ARGUMENT]: chosen, ...input } = args
    if (chosen !== undefined && typeof chosen !== 'string')
      throw new PatchbayError(
        'VALIDATION_FAILED',
        `Invalid input: ${CONNECTION_ARGUMENT}: must be a string`,
        {
          hint: `Give one of the agent's connection ids, or leave ${CONNECTION_ARGUMENT} out.`,
        },
      )
    const { stepId, connections } = callable.target
    const result = await this.#runStep(caller, stepId, connections, { connectionId: chosen, input })
    return { kind: 'step', output: result.output, meta: result.meta }
  }

  /**
   * Runs a step as an agent (POST /v1/steps/:id/run with an agent key): without a connectionId,
   * with the agent's only connection of the step's connector, as MCP and function calling do.
   */
  async runStep(caller: Caller, stepId: string, req: { connectionId?: string; input?: unknown }) {
    const registered = this.#d.registry.steps.get(stepId)
    if (req.connectionId || !caller.agentId || !registered) return this.#d.steps.run(caller, stepId, req)
    const agent = await this.agent(caller)
    const connections = await this.#d.connections.named(
      caller.workspaceId,
      agent.connectionIds,
      registered.connector.id,
    )
    return this.#runStep(caller, stepId, connections, req)
  }

  async #runStep(
    caller: Caller,
    stepId: string,
    connections: ConnectionView[],
    req: { connectionId?: string; input?: unknown },
  ) {
    const connectionId = req.connectionId ?? (connections.length === 1 ? connections[0].id : undefined)
    try {
      return await this.#d.steps.run(caller, stepId, { connectionId, input: req.input })
    } catch (err) {
      // No connection was named and the agent has several of this connector: say which.
      if (err instanceof PatchbayError && err.code === 'CONNECTION_REQUIRED' && connections.length > 1)
        throw new PatchbayError(
          'CONNECTION_AMBIGUOUS',
          `The agent has ${connections.length} ${connections[0].connector} connections; say which with ${CONNECTION_ARGUMENT}: ${connections
            .map((c) => `${c.id} (${c.accountName})`)
            .join(', ')}.`,
          { hint: `Add "${CONNECTION_ARGUMENT}": "<one of them>".` },
        )
      throw err
    }
  }

  #stepCallable(stepId: string, connections: ConnectionView[], allowInlineAuth: boolean): AgentCallable {
    const { connector, step } = this.#d.registry.steps.get(stepId)!
    const summary = this.#d.registry.stepSummary(stepId)
    const declared = objectSchema(summary.inputSchema)
    if (!declared) throw new Error(`step ${stepId}: its input schema is not an object`)
    // Credentials given inline are offered only where the workspace allows agents to give them.
    const input =
      step.inlineCredentialsField && !allowInlineAuth
        ? withoutProperty(declared, step.inlineCredentialsField)
        : declared
    if (input.properties && CONNECTION_ARGUMENT in input.properties)
      throw new Error(`step ${stepId}: its input already has a field named ${CONNECTION_ARGUMENT}`)
    const choices = connections.map(
      (c) => `${c.id} (${c.accountName}${c.status === 'lapsed' ? ', lapsed' : ''})`,
    )
    // With one connection the property is the default (the server's instructions say so); with
    // several the agent must choose, and is told which account each one is.
    const connectionProperty = {
      type: 'string',
      enum: connections.map((c) => c.id),
      ...(connections.length > 1
        ? {
            description: `Needed: the agent has several ${connector.name} connections: ${choices.join(', ')}.`,
          }
        : {}),
    }
    const output = objectSchema(summary.outputSchema)
    const title = summary.name
    const description = `${connector.name}${connector.beta ? ' (beta)' : ''}: ${summary.description}`
    const withConnection = (schema: ObjectSchema) => ({
      ...schema,
      properties: { ...schema.properties, [CONNECTION_ARGUMENT]: connectionProperty },
    })
    const inputSchema = withConnection(input)
    const name = callableNameOfStep(stepId)
    return {
      name,
      title,
      description: `${connector.beta ? '(beta) ' : ''}${summary.description}`,
      inputSchema: withConnection(leanSchema(input)),
      annotations: leanAnnotations(summary.hints),
      describe: { name, title, description, inputSchema, ...(output ? { outputSchema: output } : {}) },
      target: { kind: 'step', stepId, connector: connector.id, connections },
    }
  }

  #toolCallable(tool: ToolView, taken: Set<string>): AgentCallable {
    const steps = tool.steps.map((s) => ({
      s,
      summary: this.#d.registry.steps.has(s.stepId) ? this.#d.registry.stepSummary(s.stepId) : null,
    }))
    const hints = steps.map((x) => x.summary?.hints)
    let name = `tool_${slug(tool.name)}`.slice(0, 64)
    if (name === 'tool_' || taken.has(name)) name = `tool_${slug(tool.name).slice(0, 40)}_${slug(tool.id)}`
    const chain = steps.map((x) => x.summary?.name ?? x.s.stepId).join(' → ')
    const description = `${tool.description ? `${tool.description} ` : ''}(A tool of this agent: runs ${chain} in order and returns the run record with each step's output.)`
    const inputSchema = toolInputSchema(tool, this.#d.registry)
    return {
      name,
      title: tool.name,
      description,
      inputSchema,
      annotations: leanAnnotations({
        readOnly: hints.every((h) => h?.readOnly === true),
        destructive: hints.some((h) => h?.destructive !== false),
        idempotent: hints.every((h) => h?.idempotent === true),
      }),
      describe: { name, title: tool.name, description, inputSchema },
      target: { kind: 'tool', toolId: tool.id },
    }
  }
}

export function unknownCallable(name: string): PatchbayError {
  return new PatchbayError('TOOL_NOT_FOUND', `This agent has no tool "${name}".`, {
    hint: 'List the tools this agent may call (MCP tools/list, or GET /v1/agents/{id}/tools.json).',
  })
}

function describeCallable(): AgentCallable {
  const description =
    "Tells one of these tools in full: what it does, where each input's value comes from, and the shape of its result. Ask before a tool's first use."
  const inputSchema: ObjectSchema = {
    type: 'object',
    properties: { name: { type: 'string', description: 'A tool name from this list.' } },
    required: ['name'],
    additionalProperties: false,
  }
  return {
    name: DESCRIBE_TOOL,
    title: 'Describe a tool',
    description,
    inputSchema,
    // It reads Patchbay's own registry, nothing outside.
    annotations: {
      ...leanAnnotations({ readOnly: true, destructive: false, idempotent: true }),
      openWorldHint: false,
    },
    describe: { name: DESCRIBE_TOOL, title: 'Describe a tool', description, inputSchema },
    target: { kind: 'describe' },
  }
}

/** The schema without one property (and without it among the required ones). */
function withoutProperty(schema: ObjectSchema, name: string): ObjectSchema {
  const { [name]: _, ...properties } = schema.properties ?? {}
  const required = Array.isArray(schema.required) ? schema.required.filter((r) => r !== name) : undefined
  return { ...schema, properties, ...(required ? { required } : {}) }
}

function findToolsCallable(): AgentCallable {
  const description =
    'Finds this agent\'s tools by what they do: give a few words ("create card", "list workflow runs") and get the best matches, each with its name, description and input schema. Then run one with call_tool.'
  const inputSchema: ObjectSchema = {
    type: 'object',
    properties: {
      query: {
        type: 'string',
        maxLength: 200,
        description: 'Words of what the tool should do, or of its name.',
      },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: 50,
        default: 5,
        description: 'How many matches at most.',
      },
    },
    required: ['query'],
    additionalProperties: false,
  }
  return {
    name: FIND_TOOLS,
    title: 'Find tools',
    description,
    inputSchema,
    annotations: {
      ...leanAnnotations({ readOnly: true, destructive: false, idempotent: true }),
      openWorldHint: false,
    },
    describe: { name: FIND_TOOLS, title: 'Find tools', description, inputSchema },
    target: { kind: 'find' },
  }
}

function callToolCallable(): AgentCallable {
  const description =
    'Runs one of the tools find_tools found, by its name, with its arguments (an object that fits the inputSchema find_tools gave). Answers what the tool answers.'
  const inputSchema: ObjectSchema = {
    type: 'object',
    properties: {
      name: { type: 'string', description: 'The name find_tools gave, e.g. taskboard_create_card.' },
      arguments: { type: 'object', additionalProperties: {}, description: "The tool's arguments." },
    },
    required: ['name'],
    additionalProperties: false,
  }
  return {
    name: CALL_TOOL,
    title: 'Call a tool',
    description,
    inputSchema,
    // It may run any of the agent's tools: MCP's defaults (may write, may destroy) hold.
    annotations: {},
    describe: { name: CALL_TOOL, title: 'Call a tool', description, inputSchema },
    target: { kind: 'call' },
  }
}

const STOP_WORDS = new Set([
  'a',
  'an',
  'the',
  'to',
  'of',
  'in',
  'on',
  'for',
  'with',
  'and',
  'or',
  'by',
  'from',
  'my',
  'me',
])

/**
 * The given callables that best match the words of a query: a word in the name or title counts
 * three, in the connector's names two, in the description one; the best first, then by name.
 */
function findTools(given: AgentCallable[], args: Record<string, unknown>): FoundTools {
  const words = String(args.query ?? '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w && !STOP_WORDS.has(w))
    // "runs" finds Get Workflow Run too.
    .map((w) => (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w))
  const limit = typeof args.limit === 'number' ? Math.min(50, Math.max(1, Math.floor(args.limit))) : 5
  const scored = given.map((c) => {
    const name = `${c.name.replace(/_/g, ' ')} ${c.title}`.toLowerCase()
    const connector = c.target.kind === 'step' ? c.target.connector : 'tool'
    const description = c.describe.description.toLowerCase()
    const score = words.reduce(
      (sum, w) =>
        sum +
        (name.includes(w) ? 3 : 0) +
        (connector.includes(w) ? 2 : 0) +
        (description.includes(w) ? 1 : 0),
      0,
    )
    return { c, score }
  })
  const matches = scored
    .filter((x) => words.length === 0 || x.score > 0)
    .sort((a, b) => b.score - a.score || a.c.name.localeCompare(b.c.name))
  return {
    tools: matches.slice(0, limit).map(({ c }) => ({
      name: c.name,
      title: c.title,
      description: c.description,
      inputSchema: c.inputSchema,
      annotations: c.annotations,
    })),
    total: matches.length,
  }
}

/** A callable of the agent's connections or tools that its tool selection leaves out. */
function notGiven(name: string, agentId: string): PatchbayError {
  return new PatchbayError(
    'TOOL_NOT_FOUND',
    `The tool "${name}" is not among this agent's tools: its tool selection leaves it out.`,
    {
      hint: `Call one of the tools it lists, or add it to the agent's toolSelection (PATCH /v1/agents/${agentId}).`,
    },
  )
}

/** MCP's annotations without the values its defaults already give. */
function leanAnnotations(h: { readOnly?: boolean; destructive?: boolean; idempotent?: boolean }) {
  return {
    ...(h.readOnly ? { readOnlyHint: true as const } : {}),
    // destructiveHint means something only for a tool that writes.
    ...(h.destructive === false && !h.readOnly ? { destructiveHint: false as const } : {}),
    ...(h.idempotent ? { idempotentHint: true as const } : {}),
  }
}

/**
 * A JSON Schema as lean as it can be without saying less about what is valid: the fields'
 * descriptions and titles (the guidance describe_tool gives, the forms' labels), a `format`'s spelled-out pattern, "no limit"
 * bounds and the dialect are left out; names, types, enums, patterns, bounds, defaults and what
 * is required stay.
 */
export function leanSchema<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(leanSchema) as T
  if (!schema || typeof schema !== 'object') return schema
  const s = schema as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(s)) {
    if (k === '$schema' || ((k === 'description' || k === 'title') && typeof v === 'string')) continue
    if (k === 'pattern' && typeof s.format === 'string') continue
    if ((k === 'maximum' || k === 'minimum') && Math.abs(Number(v)) >= Number.MAX_SAFE_INTEGER) continue
    if (k === 'propertyNames' && JSON.stringify(v) === '{"type":"string"}') continue
    // Each property is a schema (a property named "description" too).
    out[k] =
      k === 'properties' && v && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v).map(([p, ps]) => [p, leanSchema(ps)]))
        : leanSchema(v)
  }
  return out as T
}

/** The schema without `$schema` (MCP clients compile it with their own dialect), if it is an object. */
function objectSchema(schema: unknown): ObjectSchema | null {
  if (!schema || typeof schema !== 'object') return null
  const { $schema: _dialect, ...rest } = schema as Record<string, unknown>
  return rest.type === 'object' ? (rest as ObjectSchema) : null
}

/**
 * A tool's input, typed and closed: its declared inputs, or else what its templates read (each
 * `{{input.x…}}` names a property x). An input without a declared type takes the type of the step
 * field it fills when a template is that whole field (`"idList": "{{input.list}}"` → the step's
 * idList schema); read inside a text it is a string; read deeper (`{{input.card.id}}`) an object.
 */
function toolInputSchema(tool: ToolView, registry: Registry): ObjectSchema {
  const uses = new Map<string, { where: string[]; schema?: Record<string, unknown> }>()
  tool.steps.forEach((step, i) => {
    const stepInput = registry.steps.has(step.stepId)
      ? registry.stepSummary(step.stepId).inputSchema
      : undefined
    for (const { field, text } of stringsOf(step.input, 'input')) {
      let parts: ReturnType<typeof parseTemplate>
      try {
        parts = parseTemplate(text, field)
      } catch {
        continue // checked when the tool was saved
      }
      const whole = parts.length === 1 && typeof parts[0] !== 'string'
      for (const p of parts) {
        if (typeof p === 'string' || p.root !== 'input' || p.path.length === 0) continue
        const use = uses.get(p.path[0]) ?? { where: [] }
        use.where.push(`step ${i}${step.name ? ` (${step.name})` : ''} ${step.stepId}, ${field}`)
        use.schema ??=
          p.path.length > 1
            ? { type: 'object', additionalProperties: {} }
            : whole
              ? fieldSchema(stepInput, field.split('.').slice(1))
              : { type: 'string' }
        uses.set(p.path[0], use)
      }
    }
  })
  const typed = (type: string | undefined, name: string) =>
    type === 'object'
      ? { type, additionalProperties: {} }
      : type === 'array'
        ? { type, items: {} }
        : type
          ? { type }
          : (uses.get(name)?.schema ?? { type: 'string' })
  if (tool.inputs) {
    const declared = Object.entries(tool.inputs)
    return {
      type: 'object',
      properties: Object.fromEntries(
        declared.map(([name, d]) => [
          name,
          { ...typed(d.type, name), ...(d.description ? { description: d.description } : {}) },
        ]),
      ),
      required: declared.filter(([, d]) => d.required).map(([name]) => name),
      additionalProperties: false,
    }
  }
  const properties: Record<string, unknown> = {}
  for (const [key, use] of uses)
    properties[key] = { ...typed(undefined, key), description: `Used by ${use.where.join('; ')}.` }
  return { type: 'object', properties, additionalProperties: false }
}

/** The lean schema of one field of a step's input (`['labels', '0']` → the labels' items), else a string. */
function fieldSchema(schema: unknown, path: string[]): Record<string, unknown> {
  let cur = schema as JsonSchemaNode | undefined
  for (const seg of path) {
    if (!cur) break
    cur = /^\d+$/.test(seg) && cur.items ? cur.items : cur.properties?.[seg]
  }
  if (!cur || typeof cur !== 'object') return { type: 'string' }
  return leanSchema(cur)
}

function slug(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
}
