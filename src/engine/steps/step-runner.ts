// Runs one tool step: validate the input, resolve the credentials (a stored connection, or
// ones the step takes in its input), run the step's `run` with ctx.http, slim the output through
// its schema, and record the run off the hot path.

import type { Credentials } from '../../kit/define.ts'
import { PatchbayError, validationError } from '../../kit/errors.ts'
import { inSpan, type OpenSpan, tracingOn } from '../../kit/tracing.ts'
import { newId, nowIso } from '../../store/ids.ts'
import type { StepRuns } from '../../store/step-runs.ts'
import { type Caller, callerId } from '../access/caller.ts'
import type { ScopeGuard } from '../access/scope-guard.ts'
import type { WorkspaceSettings } from '../access/workspace-settings.ts'
import { unknownArguments } from '../agents/tool-schemas.ts'
import type { ConnectionService } from '../connections/connection-service.ts'
import type { RegisteredStep, Registry } from '../registry.ts'
import type { UpstreamClients } from '../upstream/upstream-clients.ts'
import type { UpstreamPages } from '../upstream/upstream-pages.ts'
import type { StepServices } from './step-services.ts'

export interface StepRunResult {
  output: unknown
  meta: { runId: string; durationMs: number; attempts: number }
}

export class StepRunner {
  #scopeGuard: ScopeGuard
  /** Reads page addresses in scoped input fields into identifiers (upstream/upstream-pages.ts). */
  #pages: UpstreamPages
  #registry: Registry
  #connections: ConnectionService
  #clients: UpstreamClients
  #runs: StepRuns
  #services: StepServices
  #settings: WorkspaceSettings

  constructor(deps: {
    /** Whether agent keys may give credentials inline (allowInlineAuth). */
    settings: WorkspaceSettings
    registry: Registry
    connections: ConnectionService
    clients: UpstreamClients
    runs: StepRuns
    /** The agent scope check every agent's step passes (access/scope-guard.ts). */
    scopeGuard: ScopeGuard
    pages: UpstreamPages
    /** Cache, batching, credits and per-connection rate limits lent to each run. */
    services: StepServices
  }) {
    this.#services = deps.services
    this.#settings = deps.settings
    this.#scopeGuard = deps.scopeGuard
    this.#pages = deps.pages
    this.#registry = deps.registry
    this.#connections = deps.connections
    this.#clients = deps.clients
    this.#runs = deps.runs
  }

  run(
    caller: Caller,
    stepId: string,
    req: { connectionId?: string | null; input?: unknown },
  ): Promise<StepRunResult> {
    if (!tracingOn()) return this.#run(caller, stepId, req, null)
    return inSpan(
      `step ${stepId}`,
      {
        'patchbay.step.id': stepId,
        'patchbay.workspace.id': caller.workspaceId,
        'patchbay.agent.id': caller.agentId ?? undefined,
      },
      (span) => this.#run(caller, stepId, req, span),
    )
  }

  async #run(
    caller: Caller,
    stepId: string,
    req: { connectionId?: string | null; input?: unknown },
    span: OpenSpan | null,
  ): Promise<StepRunResult> {
    const started = performance.now()
    const registered = this.#registry.steps.get(stepId)
    if (!registered)
      throw new PatchbayError('STEP_NOT_FOUND', `There is no tool step "${stepId}".`, {
        hint: 'Find step ids with GET /v1/steps?q=<connector or step name>.',
      })
    const { connector, step } = registered
    let raw: unknown = req.input ?? {}
    // An argument the step does not take is refused by name (its schema is closed), not dropped.
    const unknown = unknownArguments(this.#registry.stepSummary(stepId).inputSchema, raw)
    if (unknown.length > 0) throw validationError(unknown, 'input')
    // A page address given for an identifier is read into the identifier first,
    // through a connection that has passed every check (the agent may use it) before that read.
    if (this.#pages.holdsPageAddress(connector, step.scoped, raw)) {
      const loaded = await this.#usableConnection(caller, registered, req.connectionId)
      await this.#scopeGuard.checkConnection(caller, loaded.row.id)
      try {
        raw = await this.#pages.resolve(connector, step.scoped ?? [], raw, loaded.credentials, 'input')
      } catch (err) {
        // An agent learns nothing about what lies outside its scope: not whether the page exists.
        if (caller.agentId && err instanceof PatchbayError && err.code === 'PAGE_ADDRESS_UNRESOLVED')
          throw new PatchbayError(
            'SCOPE_DENIED',
            `A page address in the input could not be placed in the agent's scope.`,
            {
              hint: `Give the identifier of a resource on a ${this.#registry.places.names(this.#registry.places.of(connector.id))} in the agent's scope.`,
            },
          )
        throw err
      }
    }
    const parsed = step.input.safeParse(raw)
    if (!parsed.success) throw validationError(parsed.error.issues, 'input')
    const input = parsed.data

    let credentials: Credentials
    let connection: { id: string | null; accountName: string | null; accountId: string | null }
    const inline = step.inlineCredentials?.(input)
    if (inline) {
      // An agent is held to its connections unless the workspace allows credentials given inline.
      if (caller.agentId !== null && !(await this.#settings.get(caller.workspaceId)).allowInlineAuth)
        throw new PatchbayError(
          'INLINE_CREDENTIALS_NOT_ALLOWED',
          `Agent keys may not give credentials inline (input.${step.inlineCredentialsField ?? 'auth'}) in this workspace; the agent uses its own connections.`,
          {
            hint: `Leave input.${step.inlineCredentialsField ?? 'auth'} out and give one of the agent's ${connector.name} connections as connectionId; or a workspace admin allows it: PATCH /v1/workspace/settings {"allowInlineAuth":true}.`,
            status: 403,
          },
        )
      credentials = inline
      connection = { id: null, accountName: null, accountId: null }
    } else {
      // A cached connection is checked without waiting (most runs).
      const loaded =
        this.#connections.usableNow(
          caller.workspaceId,
          req.connectionId,
          connector,
          `the step ${registered.id}`,
        ) ?? (await this.#usableConnection(caller, registered, req.connectionId))
      credentials = loaded.credentials
      connection = {
        id: loaded.row.id,
        accountName: loaded.row.account_name,
        accountId: loaded.row.account_id,
      }
    }

    // A scoped agent's scope also goes to the step, for steps that reach across resources (searches).
    const checking = this.#scopeGuard.checkStep(caller, registered, input, {
      connectionId: connection.id,
      credentials,
    })
    const scope = (checking && (await checking)) ?? undefined

    const connectionId = connection.id
    const runId = newId('run')
    const preparing = this.#services.prepare({
      caller,
      stepId,
      runId,
      connector,
      connectionId,
      credentials,
    })
    const lent = preparing instanceof Promise ? await preparing : preparing
    const clientOptions = { paced: !step.passThrough, pacing: lent?.pacing, onResponse: lent?.onResponse }
    const http = connectionId
      ? this.#connections.client(connectionId, connector, credentials, clientOptions)
      : this.#clients.create({ ...clientOptions, connector, credentials, storedConnection: false })

    let status: 'succeeded' | 'failed' = 'failed'
    let errorCode: string | null = null
    try {
      const raw = await step.run({ http, connection, scope, ...lent?.context }, input)
      const out = step.output.safeParse(raw)
      if (!out.success)
        throw new PatchbayError(
          'UPSTREAM_UNEXPECTED_RESPONSE',
          `${connector.name} answered ${stepId} with data of an unexpected shape.`,
          {
            hint: 'This is a Patchbay or upstream defect; the API Call step can show the raw answer.',
          },
        )
      status = 'succeeded'
      return {
        output: out.data,
        meta: { runId, durationMs: round(performance.now() - started), attempts: http.stats.attempts },
      }
    } catch (err) {
      errorCode = err instanceof PatchbayError ? err.code : 'INTERNAL'
      throw err
    } finally {
      // Charges are in the ledger before the caller hears back.
      const settling = lent?.settle()
      if (settling) await settling
      const durationMs = Math.round(performance.now() - started)
      span?.set({
        'patchbay.step.run_id': runId,
        'patchbay.connector': connector.id,
        'patchbay.connection.id': connectionId ?? undefined,
        'patchbay.step.status': status,
        'patchbay.step.attempts': http.stats.attempts,
        'patchbay.step.rate_limited': http.stats.rateLimited,
        'patchbay.step.credits': lent?.context.credits?.charged,
      })
      this.#runs.record({
        id: runId,
        workspace_id: caller.workspaceId,
        step_id: stepId,
        connection_id: connectionId,
        caller_key_id: callerId(caller),
        status,
        error_code: errorCode,
        duration_ms: durationMs,
        attempts: http.stats.attempts,
        created_at: nowIso(),
        rate_limited: http.stats.rateLimited,
        requests: http.stats.requests.length > 0 ? JSON.stringify(http.stats.requests) : null,
      })
    }
  }

  /** The step's stored connection, refused unless it is of the step's connector and active. */
  #usableConnection(caller: Caller, registered: RegisteredStep, connectionId: string | null | undefined) {
    return this.#connections.usable(
      caller.workspaceId,
      connectionId,
      registered.connector,
      `the step ${registered.id}`,
    )
  }
}

const round = (ms: number) => Math.round(ms * 100) / 100
