// Tools: an agent's ordered chains of tool steps. Saving one checks every step id, connection
// and template; running one renders each step's input from the tool's input, the trigger event
// and earlier outputs, runs the steps in order AS THE AGENT (so its scope applies), stops at the
// first failure, and records what each step did.

import type { FastifyBaseLogger } from 'fastify'
import { type ErrorCode, PatchbayError, validationError } from '../../kit/errors.ts'
import { inSpan, tracingOn } from '../../kit/tracing.ts'
import type { Causations } from '../../store/causations.ts'
import { newId, nowIso } from '../../store/ids.ts'
import type { PageRequest } from '../../store/paging.ts'
import type { ToolRunRow, ToolRuns } from '../../store/tool-runs.ts'
import type { ToolRow, Tools } from '../../store/tools.ts'
import type { Triggers } from '../../store/triggers.ts'
import { agentItself, asAgent, type Caller } from '../access/caller.ts'
import type { AgentService, AgentView } from '../agents/agent-service.ts'
import { type ConnectionService, connectorMismatch } from '../connections/connection-service.ts'
import type { Registry } from '../registry.ts'
import type { StepRunner } from '../steps/step-runner.ts'
import {
  checkStepTemplates,
  type KnownValues,
  missingBeforeRun,
  renderTemplates,
  TemplateError,
  TemplateValueMissing,
} from './templates.ts'
import {
  type DeclaredInputs,
  type NewTool,
  NewToolInput,
  type StoredToolStep,
  type ToolChanges,
  ToolChangesInput,
} from './tool-input.ts'

export type { ToolStep } from './tool-input.ts'

export interface ToolView {
  id: string
  agentId: string
  name: string
  description: string
  /** The declared inputs, or null when the tool declares none (then its templates say what it reads). */
  inputs: DeclaredInputs | null
  /** A step whose connection was disconnected has connectionId null and says which it needs. */
  steps: StoredToolStep[]
  createdAt: string
  updatedAt: string
}

export interface ToolStepRecord {
  index: number
  name: string | null
  stepId: string
  connectionId: string | null
  status: 'succeeded' | 'failed' | 'skipped'
  /** The step's output (a large one is replaced by a note of its size). */
  output?: unknown
  error: { code: string; message: string } | null
  /** The step run's record (GET /v1/runs), when the step reached the step runner. */
  runId: string | null
  durationMs: number | null
}

export interface ToolRunView {
  id: string
  agentId: string
  toolId: string
  triggerId: string | null
  eventId: string | null
  status: 'running' | 'succeeded' | 'failed'
  input: unknown
  steps: ToolStepRecord[]
  /** The failing step's error, when the run failed. */
  errorCode: string | null
  errorMessage: string | null
  createdAt: string
  finishedAt: string | null
}

export interface ToolRunRequest {
  /** The tool's input: an object, read by {{input.…}}. */
  input?: unknown
  /** The trigger event that started the run, read by {{event.…}}. */
  event?: unknown
  triggerId?: string | null
  eventId?: string | null
  /** Who asked for the run (its step runs act as the agent, recorded with this caller's id); trigger runs have none. */
  caller?: Caller
  /**
   * How deep in a chain of Patchbay's own changes the event that started the run is (0: a change
   * made by someone else, or no event). What the run's steps make or change is remembered one
   * deeper, so the event they cause carries it (the loop guard, engine/events/deliverer.ts).
   */
  causationDepth?: number
}

/** Outputs larger than this are not kept in the run record (later steps still see them whole). */
const MAX_RECORDED_OUTPUT = 64 * 1024

export function toolView(row: ToolRow): ToolView {
  return {
    id: row.id,
    agentId: row.agent_id,
    name: row.name,
    description: row.description,
    // What the tool's input schema accepted when they were written.
    inputs: row.inputs as DeclaredInputs | null,
    steps: row.steps as StoredToolStep[],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

export function toolRunView(row: ToolRunRow): ToolRunView {
  return {
    id: row.id,
    agentId: row.agent_id,
    toolId: row.tool_id,
    triggerId: row.trigger_id,
    eventId: row.event_id,
    status: row.status,
    input: row.input,
    steps: row.steps as ToolStepRecord[],
    errorCode: row.error_code,
    errorMessage: row.error_message,
    createdAt: row.created_at,
    finishedAt: row.finished_at,
  }
}

const toolNotFound = (agentId: string, toolId: string) =>
  new PatchbayError('TOOL_NOT_FOUND', `Agent ${agentId} has no tool "${toolId}".`, {
    hint: `List its tools with GET /v1/agents/${agentId}/tools.`,
  })

export class ToolService {
  #tools: Tools
  #runs: ToolRuns
  #agents: AgentService
  #connections: ConnectionService
  #registry: Registry
  #steps: StepRunner
  #triggers: Triggers
  #log: FastifyBaseLogger
  #causations: Causations

  constructor(deps: {
    tools: Tools
    runs: ToolRuns
    /** The triggers that start tools: their events are what {{event.…}} reads. */
    triggers: Triggers
    agents: AgentService
    connections: ConnectionService
    registry: Registry
    steps: StepRunner
    causations: Causations
    log: FastifyBaseLogger
  }) {
    this.#causations = deps.causations
    this.#tools = deps.tools
    this.#runs = deps.runs
    this.#agents = deps.agents
    this.#connections = deps.connections
    this.#registry = deps.registry
    this.#steps = deps.steps
    this.#triggers = deps.triggers
    this.#log = deps.log
  }

  async create(workspaceId: string, agentId: string, input: NewTool): Promise<ToolView> {
    const parsed = NewToolInput.safeParse(input)
    if (!parsed.success) throw validationError(parsed.error.issues, '')
    const agent = await this.#agents.get(workspaceId, agentId)
    const inputs = parsed.data.inputs ?? null
    await this.#checkSteps(workspaceId, agent, parsed.data.steps, [], inputs)
    const row = await this.#tools.insert({
      workspace_id: workspaceId,
      agent_id: agentId,
      name: parsed.data.name,
      description: parsed.data.description,
      steps: parsed.data.steps,
      inputs,
    })
    return toolView(row)
  }

  async list(workspaceId: string, agentId: string): Promise<ToolView[]> {
    await this.#agents.get(workspaceId, agentId)
    return (await this.#tools.list(workspaceId, agentId)).map(toolView)
  }

  /** The agent's tools, oldest first, a page at a time (GET /v1/agents/{id}/tools). */
  async page(
    workspaceId: string,
    agentId: string,
    page: PageRequest,
  ): Promise<{ tools: ToolView[]; next: string | null }> {
    await this.#agents.get(workspaceId, agentId)
    const { items, next } = await this.#tools.page(workspaceId, agentId, page)
    return { tools: items.map(toolView), next }
  }

  async get(workspaceId: string, agentId: string, toolId: string): Promise<ToolView> {
    await this.#agents.get(workspaceId, agentId)
    const row = await this.#tools.get(workspaceId, agentId, toolId)
    if (!row) throw toolNotFound(agentId, toolId)
    return toolView(row)
  }

  /** For the trigger code: whether a trigger may target this tool. */
  /** How many of the agent's tool runs are under way (the loop guard waits for them). */
  running(workspaceId: string, agentId: string, since?: string): Promise<number> {
    return this.#runs.running(workspaceId, agentId, since)
  }

  async exists(workspaceId: string, agentId: string, toolId: string): Promise<boolean> {
    return (await this.#tools.get(workspaceId, agentId, toolId)) !== undefined
  }

  /**
   * For the trigger code, before a trigger targets this tool: refuses it (INVALID_TEMPLATE, naming
   * the step and path) when the tool's {{event.…}} templates read what the trigger's events do not hold.
   */
  async checkStartingTrigger(workspaceId: string, agentId: string, toolId: string, triggerKey: string) {
    const tool = await this.get(workspaceId, agentId, toolId)
    const events = this.#eventsOf([triggerKey])
    tool.steps.forEach((step, i) => {
      this.#checkTemplates(step, i, tool.steps.slice(0, i), {
        outputs: this.#outputs(tool.steps),
        events,
        inputs: tool.inputs ? Object.keys(tool.inputs) : undefined,
      })
    })
  }

  /** Samples of the events of the triggers that start this tool, as a tool run sees them. */
  async #startingEvents(workspaceId: string, agentId: string, toolId: string) {
    const rows = await this.#triggers.list(workspaceId, { agentId })
    const keys = rows
      .filter((r) => r.target.type === 'tool' && r.target.toolId === toolId)
      .map((r) => r.trigger_key)
    return this.#eventsOf([...new Set(keys)])
  }

  #eventsOf(triggerKeys: string[]): KnownValues['events'] {
    const out: KnownValues['events'] = []
    for (const key of triggerKeys) {
      const registered = this.#registry.triggers.get(key)
      const sample = registered?.trigger.sample as Record<string, unknown> | undefined
      if (!registered || !sample) continue
      out.push({
        trigger: `${registered.trigger.name} (${key})`,
        // The event as a tool run receives it ({{event.…}}): the delivery's event object.
        event: {
          id: 'evt_sample',
          connector: registered.connector.id,
          type: sample.type,
          upstreamId: sample.id,
          occurredAt: sample.occurredAt,
          refs: sample.refs ?? {},
          data: sample.data,
        },
      })
    }
    return out
  }

  #outputs(steps: StoredToolStep[]): unknown[] {
    return steps.map((s) =>
      this.#registry.steps.has(s.stepId) ? this.#registry.stepSummary(s.stepId).outputSchema : undefined,
    )
  }

  async update(
    workspaceId: string,
    agentId: string,
    toolId: string,
    changes: ToolChanges,
  ): Promise<ToolView> {
    const parsed = ToolChangesInput.safeParse(changes)
    if (!parsed.success) throw validationError(parsed.error.issues, '')
    const c = parsed.data
    const agent = await this.#agents.get(workspaceId, agentId)
    const row = await this.#tools.get(workspaceId, agentId, toolId)
    if (!row) throw toolNotFound(agentId, toolId)
    const current = toolView(row)
    // New steps, or new inputs, are checked together with whichever of the two stays.
    const inputs = c.inputs === undefined ? current.inputs : c.inputs
    if (c.steps || c.inputs !== undefined)
      await this.#checkSteps(
        workspaceId,
        agent,
        c.steps ?? current.steps,
        await this.#startingEvents(workspaceId, agentId, toolId),
        inputs,
      )
    await this.#tools.update(workspaceId, agentId, toolId, {
      name: c.name,
      description: c.description,
      steps: c.steps,
      inputs: c.inputs,
    })
    return this.get(workspaceId, agentId, toolId)
  }

  async delete(workspaceId: string, agentId: string, toolId: string): Promise<void> {
    await this.#agents.get(workspaceId, agentId)
    if (!(await this.#tools.delete(workspaceId, agentId, toolId))) throw toolNotFound(agentId, toolId)
  }

  /**
   * Runs a tool as its agent and records the run. A step that fails ends the run (the rest are
   * skipped); the run is then `failed` with that step's error. Resolves with the run either way.
   */
  run(workspaceId: string, agentId: string, toolId: string, req: ToolRunRequest = {}): Promise<ToolRunView> {
    if (!tracingOn()) return this.#run(workspaceId, agentId, toolId, req)
    return inSpan(
      'tool run',
      {
        'patchbay.workspace.id': workspaceId,
        'patchbay.agent.id': agentId,
        'patchbay.tool.id': toolId,
        'patchbay.trigger.id': req.triggerId ?? undefined,
        'patchbay.event.id': req.eventId ?? undefined,
      },
      async (span) => {
        const run = await this.#run(workspaceId, agentId, toolId, req)
        span?.set({ 'patchbay.tool_run.id': run.id, 'patchbay.tool_run.status': run.status })
        if (run.status === 'failed') span?.set({ 'patchbay.error_code': run.errorCode ?? 'FAILED' })
        return run
      },
    )
  }

  async #run(
    workspaceId: string,
    agentId: string,
    toolId: string,
    req: ToolRunRequest = {},
  ): Promise<ToolRunView> {
    const input = req.input ?? {}
    if (input === null || typeof input !== 'object' || Array.isArray(input))
      throw new PatchbayError(
        'VALIDATION_FAILED',
        "Invalid input: input must be an object (the tool's input, read by {{input.…}}).",
        {
          hint: 'Send {"input": {…}}.',
        },
      )
    const tool = await this.get(workspaceId, agentId, toolId)
    const missing = Object.entries(tool.inputs ?? {})
      .filter(([name, d]) => d.required && (input as Record<string, unknown>)[name] === undefined)
      .map(([name]) => `input.${name}`)
    if (missing.length)
      throw new PatchbayError(
        'VALIDATION_FAILED',
        `Invalid input: ${missing.map((m) => `${m}: the tool requires it`).join('; ')}.`,
        { hint: `Give the tool's required inputs: ${Object.keys(tool.inputs ?? {}).join(', ')}.` },
      )
    // The run's steps act as the agent, whoever asked for it.
    const caller: Caller = req.caller ? asAgent(req.caller, agentId) : agentItself(workspaceId, agentId)

    const row: ToolRunRow = {
      id: newId('trun'),
      workspace_id: workspaceId,
      agent_id: agentId,
      tool_id: toolId,
      trigger_id: req.triggerId ?? null,
      event_id: req.eventId ?? null,
      status: 'running',
      input,
      steps: [],
      error_code: null,
      error_message: null,
      created_at: nowIso(),
      finished_at: null,
    }
    await this.#runs.insert(row)

    const records: ToolStepRecord[] = []
    const done: Array<{ name?: string; output: unknown }> = []
    let failure: { code: string; message: string } | null = null
    // Every input a later step needs from the tool's input or the event is checked before the
    // first step acts, so a run never stops half-way for a value it could have known was missing.
    const unbuildable = this.#unbuildable(tool.steps, { input, event: req.event ?? null })
    if (unbuildable)
      failure = this.#stepError(unbuildable.error, unbuildable.index, tool.steps[unbuildable.index])
    for (const [index, step] of tool.steps.entries()) {
      const base = { index, name: step.name ?? null, stepId: step.stepId, connectionId: step.connectionId }
      if (failure) {
        const mine = unbuildable?.index === index
        records.push({
          ...base,
          status: mine ? 'failed' : 'skipped',
          error: mine ? failure : null,
          runId: null,
          durationMs: null,
        })
        continue
      }
      const started = performance.now()
      try {
        const rendered = renderTemplates(
          step.input,
          { input, event: req.event ?? null, steps: done },
          `steps.${index}.input`,
        )
        this.#refuseInlineCredentials(step.stepId, rendered, index)
        if (!step.connectionId) throw connectionNeeded(step)
        const result = await this.#steps.run(caller, step.stepId, {
          connectionId: step.connectionId,
          input: rendered,
        })
        done.push({ name: step.name, output: result.output })
        await this.#rememberChange(workspaceId, step.stepId, result.output, (req.causationDepth ?? 0) + 1)
        records.push({
          ...base,
          status: 'succeeded',
          output: recordable(result.output),
          error: null,
          runId: result.meta.runId,
          durationMs: result.meta.durationMs,
        })
      } catch (err) {
        failure = this.#stepError(err, index, step)
        records.push({
          ...base,
          status: 'failed',
          error: failure,
          runId: null,
          durationMs: Math.round(performance.now() - started),
        })
      }
    }

    const finished = {
      status: failure ? ('failed' as const) : ('succeeded' as const),
      steps: records,
      error_code: failure?.code ?? null,
      error_message: failure?.message ?? null,
      finished_at: nowIso(),
    }
    await this.#runs.finish(row.id, finished)
    return toolRunView({ ...row, ...finished })
  }

  /**
   * What a step made or changed, by the upstream ids its output names (a card's id, a comment's
   * action id; the connector's changedResources where it says otherwise: a code-host issue's web
   * address), remembered at `depth` before the run goes on: the events those changes cause are
   * recognized as this run's doing. A failure to remember is logged, never failing the run.
   */
  async #rememberChange(workspaceId: string, stepId: string, output: unknown, depth: number) {
    const registered = this.#registry.steps.get(stepId)
    // A step that only reads changes nothing: what it names is not this run's doing.
    if (!registered || registered.step.hints.readOnly) return
    const { connector } = registered
    const refs = connector.changedResources
      ? connector.changedResources(output)
      : (Array.isArray(output) ? output : [output]).flatMap((o) => {
          const id = o && typeof o === 'object' ? (o as { id?: unknown }).id : undefined
          return typeof id === 'string' || typeof id === 'number' ? [String(id)] : []
        })
    if (refs.length === 0) return
    await this.#causations
      .record(workspaceId, connector.id, refs.slice(0, 100), depth)
      .catch((err) => this.#log.error({ err }, 'could not remember a change a tool run made'))
  }

  async listRuns(
    workspaceId: string,
    agentId: string,
    page: { limit: number; cursor?: string; toolId?: string },
  ): Promise<{ runs: ToolRunView[]; next: string | null }> {
    await this.#agents.get(workspaceId, agentId)
    const r = await this.#runs.list(workspaceId, agentId, page)
    return { runs: r.runs.map(toolRunView), next: r.next }
  }

  /** One run; for an agent key only the agent's own. */
  async getRun(caller: Caller, runId: string): Promise<ToolRunView> {
    const row = await this.#runs.get(caller.workspaceId, runId)
    if (!row || (caller.agentId && row.agent_id !== caller.agentId))
      throw new PatchbayError('TOOL_RUN_NOT_FOUND', `There is no tool run "${runId}" in this workspace.`, {
        hint: 'List runs with GET /v1/agents/{id}/tool-runs.',
      })
    return toolRunView(row)
  }

  /**
   * Checks a chain of steps before it is saved: step ids, connections, names and templates (each
   * path against the earlier steps' output schemas and the events of the triggers that start it).
   */
  async #checkSteps(
    workspaceId: string,
    agent: AgentView,
    steps: StoredToolStep[],
    events: KnownValues['events'],
    inputs: DeclaredInputs | null,
  ): Promise<void> {
    const named = steps.flatMap((s) => (s.connectionId ? [s.connectionId] : []))
    const connections = new Map((await this.#connections.named(workspaceId, named)).map((c) => [c.id, c]))
    const names: Array<string | undefined> = []
    for (const [i, step] of steps.entries()) {
      const at = `steps.${i}`
      const registered = this.#registry.steps.get(step.stepId)
      if (!registered)
        throw new PatchbayError('STEP_NOT_FOUND', `${at}.stepId: there is no tool step "${step.stepId}".`, {
          hint: 'Find step ids with GET /v1/steps?q=<connector or step name>.',
          status: 400,
        })
      if (step.name !== undefined && names.includes(step.name))
        throw new PatchbayError(
          'DUPLICATE_STEP_NAME',
          `${at}.name: another step is already named "${step.name}".`,
          {
            hint: 'Give each step a name of its own, so {{steps.<name>.output}} names one step.',
          },
        )
      if (!step.connectionId) throw connectionNeeded(step, at)
      if (!agent.connectionIds.includes(step.connectionId))
        throw new PatchbayError(
          'CONNECTION_NOT_ALLOWED',
          `${at}.connectionId: agent ${agent.id} may not use connection ${step.connectionId}; it may use ${
            agent.connectionIds.join(', ') || 'none'
          }.`,
          {
            hint: `Use one of the agent's connections, or add this one to it (PATCH /v1/agents/${agent.id}).`,
            status: 400,
          },
        )
      const connection = connections.get(step.connectionId)
      if (!connection)
        throw new PatchbayError(
          'CONNECTION_NOT_FOUND',
          `${at}.connectionId: there is no connection "${step.connectionId}".`,
          {
            hint: 'List connections with GET /v1/connections.',
            status: 400,
          },
        )
      if (connection.connector !== registered.connector.id)
        throw connectorMismatch(
          { id: step.connectionId, connector: connection.connector },
          registered.connector,
          step.stepId,
          {
            at: `${at}.connectionId`,
          },
        )
      this.#checkTemplates(step, i, steps.slice(0, i), {
        outputs: this.#outputs(steps),
        events,
        inputs: inputs ? Object.keys(inputs) : undefined,
      })
      this.#refuseInlineCredentials(step.stepId, step.input, i, true)
      names.push(step.name)
    }
  }

  #checkTemplates(step: StoredToolStep, i: number, earlier: StoredToolStep[], known: KnownValues): void {
    try {
      checkStepTemplates(
        step.input,
        `steps.${i}.input`,
        i,
        earlier.map((s) => s.name),
        known,
      )
    } catch (err) {
      if (!(err instanceof TemplateError)) throw err
      throw new PatchbayError(
        'INVALID_TEMPLATE',
        `Step ${i}${step.name ? ` ("${step.name}")` : ''} (${step.stepId}), ${err.field}: ${err.message}.`,
        {
          hint: "Templates are {{input.…}}, {{event.…}} and {{steps.<index or name>.output.…}} of an earlier step; the catalog (GET /v1/steps/{id}) shows each step's outputSchema and each trigger's sample.",
          details: { step: i, field: err.field },
        },
      )
    }
  }

  /**
   * A tool's steps run with the agent's connections. Credentials written into a step's input
   * (an API Call's key and token) would sit unsealed in the tool, so they are refused.
   */
  #refuseInlineCredentials(stepId: string, input: unknown, index: number, saving = false): void {
    const { step } = this.#registry.steps.get(stepId) ?? {}
    if (!step?.inlineCredentials) return
    let creds: unknown
    try {
      const parsed = step.input.safeParse(input)
      creds = step.inlineCredentials(parsed.success ? parsed.data : input)
    } catch {
      creds = undefined // an input it cannot read carries no credentials it could use
    }
    if (creds)
      throw new PatchbayError(
        'INLINE_CREDENTIALS_NOT_ALLOWED',
        `steps.${index}.input carries credentials${saving ? '' : ' (after its templates were filled in)'}; a tool's steps use the agent's connections.`,
        { hint: 'Remove the credentials from the step input (e.g. auth) and give the step a connectionId.' },
      )
  }

  #unbuildable(steps: StoredToolStep[], ctx: { input: unknown; event: unknown }) {
    for (const [index, step] of steps.entries()) {
      const schema = this.#registry.steps.has(step.stepId)
        ? (this.#registry.stepSummary(step.stepId).inputSchema as { required?: string[] })
        : {}
      const error = missingBeforeRun(step.input, `steps.${index}.input`, ctx, new Set(schema.required ?? []))
      if (error) return { index, error }
    }
    return undefined
  }

  #stepError(err: unknown, index: number, step: StoredToolStep): { code: ErrorCode; message: string } {
    const which = `Step ${index}${step.name ? ` ("${step.name}")` : ''} (${step.stepId})`
    if (err instanceof TemplateValueMissing)
      return {
        code: 'TEMPLATE_VALUE_MISSING',
        message: `${which}, ${err.field}: {{${err.expression}}} has no value in this run, so the text around it cannot be filled in.`,
      }
    if (err instanceof TemplateError)
      return { code: 'INVALID_TEMPLATE', message: `${which}, ${err.field}: ${err.message}.` }
    if (err instanceof PatchbayError) return { code: err.code, message: `${which}: ${err.message}` }
    // Anything else may carry anything; it goes to the log, not to the record.
    this.#log.error({ err, stepId: step.stepId }, 'tool step failed unexpectedly')
    return { code: 'INTERNAL', message: `${which}: an unexpected error occurred; it has been logged.` }
  }
}

/** A step whose connection was disconnected: which account it needs, and how to give it one. */
function connectionNeeded(step: StoredToolStep, at?: string): PatchbayError {
  const need = step.connectionNeeded
  return new PatchbayError(
    'CONNECTION_NEEDED',
    `${at ? `${at}.connectionId: ` : ''}the step needs a connection: ${
      need
        ? `its connection ${need.connectionId} (${need.accountName}, ${need.connector}) was disconnected at ${need.disconnectedAt}`
        : 'it has none'
    }.`,
    {
      hint: need
        ? `Connect ${need.accountName} again and restore (POST /v1/connections/{new id}/restore), or give the step another ${need.connector} connection (PATCH the tool's steps).`
        : "Give the step one of the agent's connections (PATCH the tool's steps).",
    },
  )
}

function recordable(output: unknown): unknown {
  const json = JSON.stringify(output) ?? 'null'
  return json.length > MAX_RECORDED_OUTPUT ? { truncated: true, bytes: Buffer.byteLength(json) } : output
}
