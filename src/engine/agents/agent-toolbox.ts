// What an agent can call, as one list: the tool steps of every connector the agent has a
// connection for, and the agent's own tools (chains). The MCP server and the function-calling
// exports (OpenAI, Anthropic) are both made from this list, and every call goes through
// engine.steps.run / engine.tools.run as the agent, so scope is checked exactly as in the REST
// API. Everything about a step — name, description, schemas, hints — comes from the registry.
import { PatchbayError } from '../../kit/errors.ts'
import type { Caller } from '../access/caller.ts'
import type { ConnectionService, ConnectionView } from '../connections/connection-service.ts'
import type { Registry } from '../registry.ts'
import type { StepRunner } from '../steps/step-runner.ts'
import { parseTemplate, stringsOf } from '../tools/templates.ts'
import type { ToolRunView, ToolService, ToolView } from '../tools/tool-service.ts'
import type { AgentService, AgentView } from './agent-service.ts'

/** A JSON Schema of an object, as MCP and the function-calling formats want it. */
export type ObjectSchema = { type: 'object'; properties?: Record<string, unknown>; [k: string]: unknown }

export interface AgentCallable {
  /** `taskboard_create_card` (the step id with '.' → '_'), or `tool_<name>` for a tool. */
  name: string
  title: string
  description: string
  inputSchema: ObjectSchema
  /** Present when the result is always an object of this shape (steps whose output is an object). */
  outputSchema?: ObjectSchema
  annotations: {
    title: string
    readOnlyHint: boolean
    destructiveHint: boolean
    idempotentHint: boolean
    openWorldHint: true
  }
  target:
    | { kind: 'step'; stepId: string; connector: string; connections: ConnectionView[] }
    | { kind: 'tool'; toolId: string }
}

export type CallResult =
  | { kind: 'step'; output: unknown; meta: { runId: string; durationMs: number; attempts: number } }
  | { kind: 'tool'; run: ToolRunView }

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

  /** Everything the agent may call: its allowed steps, then its tools. */
  async list(caller: Caller): Promise<AgentCallable[]> {
    const agent = await this.agent(caller)
    const own = new Set(agent.connectionIds)
    const connections = (await this.#d.connections.list(caller.workspaceId)).filter((c) => own.has(c.id))
    const out: AgentCallable[] = []
    for (const { id, connector } of this.#d.registry.steps.values()) {
      const usable = connections.filter((c) => c.connector === connector.id)
      if (usable.length > 0) out.push(this.#stepCallable(id, usable))
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
  async call(caller: Caller, name: string, args: unknown): Promise<CallResult> {
    const callable = (await this.list(caller)).find((c) => c.name === name)
    if (!callable) throw unknownCallable(name)
    const given = args ?? {}
    if (typeof given !== 'object' || Array.isArray(given))
      throw new PatchbayError('VALIDATION_FAILED', 'Invalid input: the arguments must be an object.', {
        hint: "Send the arguments as a JSON object per the tool's inputSchema.",
      })
    if (callable.target.kind === 'tool') {
      const agent = await this.agent(caller)
      const run = await this.#d.tools.run(caller.workspaceId, agent.id, callable.target.toolId, {
        input: given,
        keyId: caller.keyId,
      })
      return { kind: 'tool', run }
    }
    const { [CONNECTION_ARGUMENT]: chosen, ...input } = given as Record<string, unknown>
    if (chosen !== undefined && typeof chosen !== 'string')
      throw new PatchbayError(
        'VALIDATION_FAILED',
        `Invalid input: ${CONNECTION_ARGUMENT}: must be a string`,
        {
          hint: `Give one of the agent's connection ids, or leave ${CONNECTION_ARGUMENT} out.`,
        },
      )
    const { stepId, connections } = callable.target
    const connectionId = chosen ?? (connections.length === 1 ? connections[0].id : undefined)
    try {
      const result = await this.#d.steps.run(caller, stepId, { connectionId, input })
      return { kind: 'step', output: result.output, meta: result.meta }
    } catch (err) {
      // No connection was named and the agent has several of this connector: say which.
      if (err instanceof PatchbayError && err.code === 'CONNECTION_REQUIRED' && connections.length > 1)
        throw new PatchbayError(
          'CONNECTION_AMBIGUOUS',
          `The agent has ${connections.length} ${callable.target.connector} connections; say which with ${CONNECTION_ARGUMENT}: ${connections
            .map((c) => `${c.id} (${c.accountName})`)
            .join(', ')}.`,
          { hint: `Add "${CONNECTION_ARGUMENT}": "<one of them>" to the arguments.` },
        )
      throw err
    }
  }

  #stepCallable(stepId: string, connections: ConnectionView[]): AgentCallable {
    const { connector } = this.#d.registry.steps.get(stepId)!
    const summary = this.#d.registry.stepSummary(stepId)
    const input = objectSchema(summary.inputSchema)
    if (!input) throw new Error(`step ${stepId}: its input schema is not an object`)
    if (input.properties && CONNECTION_ARGUMENT in input.properties)
      throw new Error(`step ${stepId}: its input already has a field named ${CONNECTION_ARGUMENT}`)
    const choices = connections.map(
      (c) => `${c.id} (${c.accountName}${c.status === 'lapsed' ? ', lapsed' : ''})`,
    )
    const connectionProperty = {
      type: 'string',
      enum: connections.map((c) => c.id),
      description:
        connections.length === 1
          ? `The ${connector.name} connection to use; defaults to the agent's only one: ${choices[0]}.`
          : `The ${connector.name} connection to use — needed, since the agent has several: ${choices.join(', ')}.`,
    }
    const output = objectSchema(summary.outputSchema)
    const title = summary.name
    return {
      name: callableNameOfStep(stepId),
      title,
      description: `${connector.name}${connector.beta ? ' (beta)' : ''}: ${summary.description}`,
      inputSchema: {
        ...input,
        properties: { ...input.properties, [CONNECTION_ARGUMENT]: connectionProperty },
      },
      outputSchema: output ?? undefined,
      annotations: {
        title,
        readOnlyHint: summary.hints.readOnly,
        destructiveHint: summary.hints.destructive,
        idempotentHint: summary.hints.idempotent,
        openWorldHint: true,
      },
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
    return {
      name,
      title: tool.name,
      description: `${tool.description ? `${tool.description} ` : ''}(A tool of this agent: runs ${chain} in order and returns the run record with each step's output.)`,
      inputSchema: toolInputSchema(tool),
      annotations: {
        title: tool.name,
        readOnlyHint: hints.every((h) => h?.readOnly === true),
        destructiveHint: hints.some((h) => h?.destructive !== false),
        idempotentHint: hints.every((h) => h?.idempotent === true),
        openWorldHint: true,
      },
      target: { kind: 'tool', toolId: tool.id },
    }
  }
}

export function unknownCallable(name: string): PatchbayError {
  return new PatchbayError('TOOL_NOT_FOUND', `This agent has no tool "${name}".`, {
    hint: 'List the tools this agent may call (MCP tools/list, or GET /v1/agents/{id}/tools.json).',
  })
}

/** The schema without `$schema` (MCP clients compile it with their own dialect), if it is an object. */
function objectSchema(schema: unknown): ObjectSchema | null {
  if (!schema || typeof schema !== 'object') return null
  const { $schema: _dialect, ...rest } = schema as Record<string, unknown>
  return rest.type === 'object' ? (rest as ObjectSchema) : null
}

/** A tool's input is what its templates read: each `{{input.x…}}` names a property x. */
function toolInputSchema(tool: ToolView): ObjectSchema {
  const uses = new Map<string, string[]>()
  tool.steps.forEach((step, i) => {
    for (const { field, text } of stringsOf(step.input, 'input')) {
      let parts: ReturnType<typeof parseTemplate>
      try {
        parts = parseTemplate(text, field)
      } catch {
        continue // checked when the tool was saved
      }
      for (const p of parts) {
        if (typeof p === 'string' || p.root !== 'input' || p.path.length === 0) continue
        const where = `step ${i}${step.name ? ` (${step.name})` : ''} ${step.stepId}, ${field}`
        uses.set(p.path[0], [...(uses.get(p.path[0]) ?? []), where])
      }
    }
  })
  const properties: Record<string, unknown> = {}
  for (const [key, where] of uses) properties[key] = { description: `Used by ${where.join('; ')}.` }
  return { type: 'object', properties, additionalProperties: true }
}

function slug(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
}
