// A typed client for Patchbay's REST API. Every type comes from the API contract: the views and
// bodies from /openapi.json (contract.ts), step inputs and outputs from the catalog's JSON Schemas
// (steps.ts). The SDK imports nothing of the service.

import type { Answer, RequestBody, Schemas } from './contract.ts'
import { PatchbayApiError } from './errors.ts'
import { followStream, type StreamedDelivery, type StreamOptions } from './events.ts'
import { type RetryOptions, retryRateLimited } from './retry.ts'
import type { StepId, StepInput, StepOutput } from './steps.ts'
import type { DeliveryPayload } from './webhooks.ts'

export interface ClientOptions {
  /** Patchbay's address (default http://127.0.0.1:8080). */
  url?: string
  /** A workspace (admin) key or an agent key. */
  key: string
  fetch?: typeof fetch
}

export interface StepRunMeta {
  runId: string
  durationMs: number
  attempts: number
}

export interface StepResult<O> {
  output: O
  meta: StepRunMeta
}

export interface RunOptions {
  /** The connection to run with (GET /v1/connections). */
  connectionId?: string
  /** Retry RATE_LIMITED refusals with increasing delays: true for the defaults, or the options. */
  retry?: boolean | RetryOptions
  signal?: AbortSignal
}

export type StepSummary = Schemas['Step']
export type ConnectionView = Schemas['Connection']
export type AgentView = Schemas['Agent']
export type AgentKeyView = Schemas['AgentKey']
export type ToolView = Schemas['Tool']
export type ToolRunView = Schemas['ToolRun']
export type TriggerView = Schemas['Trigger']
export type TriggerDiagnosis = Schemas['Diagnosis']
/** The choices of a field that names an upstream resource (a board's lists), and what they depend on. */
export type FieldChoices = Schemas['FieldChoices']
export type DisconnectResult = Answer<'deleteConnection'>
export type RestoreResult = Answer<'restoreConnection'>
export type NewAgent = RequestBody<'createAgent'>
export type NewTool = RequestBody<'createTool'>
export type NewTrigger = RequestBody<'createTrigger'>
export type FunctionFormat = 'openai' | 'anthropic' | 'gemini' | 'mcp'

/** A delivery to an agent; one read by id carries its attempts and the payload the agent receives. */
export type DeliveryView = Schemas['Delivery'] & { payload?: DeliveryPayload }
export type ParkedInboxView = Schemas['ParkedInboxRow']
/** Time series of the workspace (GET /v1/stats): what the dashboard's Overview charts. */
export type StatsView = Schemas['Stats']
/** Long work with its progress (GET /v1/jobs/{id}); the list leaves `result` out. */
export type JobView = Schemas['Job']
export type JobSummaryView = Schemas['JobSummary']
export type NewJob = RequestBody<'startJob'>

export const DEFAULT_URL = 'http://127.0.0.1:8080'

/** Every list pages the same way: `limit`, and `cursor` — the `next` of the previous page. */
export type PageQuery = {
  limit?: number
  cursor?: string
}
export type DeliveryQuery = {
  agentId?: string
  status?: string
  eventId?: string
  triggerId?: string
}

export class PatchbayClient {
  readonly url: string
  #key: string
  #fetch: typeof fetch

  constructor(opts: ClientOptions) {
    this.url = (opts.url ?? DEFAULT_URL).replace(/\/+$/, '')
    this.#key = opts.key
    this.#fetch = opts.fetch ?? fetch
  }

  /** Any API call; errors are thrown as PatchbayApiError with the API's code, message and hint. */
  async request<T = unknown>(
    method: string,
    path: string,
    opts: { body?: unknown; query?: Record<string, string | number | undefined>; signal?: AbortSignal } = {},
  ): Promise<T> {
    const url = new URL(this.url + path)
    for (const [k, v] of Object.entries(opts.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v))
    const res = await this.#fetch(url, {
      method,
      headers: {
        authorization: `Bearer ${this.#key}`,
        ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
      signal: opts.signal,
    })
    if (!res.ok) throw await PatchbayApiError.from(res)
    if (res.status === 204) return undefined as T
    const text = await res.text()
    return (text ? JSON.parse(text) : undefined) as T
  }

  /** The items of page after page, each asked for with the previous page's `next`, until it is null. */
  async *pages<P extends { next: string | null }, T>(
    page: (cursor: string | undefined) => Promise<P>,
    items: (p: P) => T[],
  ): AsyncGenerator<T> {
    for (let cursor: string | undefined; ; ) {
      const p = await page(cursor)
      yield* items(p)
      if (p.next === null) return
      cursor = p.next
    }
  }

  // ---- catalog and steps

  catalog(): Promise<{ connectors: Array<Record<string, unknown>> }> {
    return this.request('GET', '/v1/catalog')
  }

  /** The tool step search: connector names ("task-board") and step names. */
  async searchSteps(q?: string): Promise<StepSummary[]> {
    return (await this.request<{ steps: StepSummary[] }>('GET', '/v1/steps', { query: { q } })).steps
  }

  step(stepId: string): Promise<StepSummary> {
    return this.request('GET', `/v1/steps/${encodeURIComponent(stepId)}`)
  }

  /** Runs a step; its input and output are typed by the step id. */
  runStep<Id extends StepId>(
    stepId: Id,
    input: StepInput<Id>,
    opts: RunOptions = {},
  ): Promise<StepResult<StepOutput<Id>>> {
    return this.runAnyStep(stepId, input, opts) as Promise<StepResult<StepOutput<Id>>>
  }

  /** Runs a step named at run time (a CLI argument, a model's choice); the output is untyped. */
  runAnyStep(stepId: string, input: unknown, opts: RunOptions = {}): Promise<StepResult<unknown>> {
    const once = () =>
      this.request<StepResult<unknown>>('POST', `/v1/steps/${encodeURIComponent(stepId)}/run`, {
        body: { connectionId: opts.connectionId, input },
        signal: opts.signal,
      })
    if (!opts.retry) return once()
    return retryRateLimited(once, { signal: opts.signal, ...(opts.retry === true ? {} : opts.retry) })
  }

  /**
   * The choices of a step's field that names an upstream resource (boards, a board's lists, a
   * repository's branches …), listed with a connection; `parents` are the values of the fields
   * they depend on (the catalog's `pickers` name them), e.g. `{ idBoard }` for Create Card's idList.
   */
  stepOptions(
    stepId: string,
    field: string,
    opts: { connectionId?: string; parents?: Record<string, string> } = {},
  ): Promise<FieldChoices> {
    return this.request('GET', `/v1/steps/${enc(stepId)}/options/${enc(field)}`, {
      query: { connectionId: opts.connectionId, ...opts.parents },
    })
  }

  /** The same for a trigger's config field (the board a New Card trigger watches). */
  triggerOptions(
    triggerId: string,
    field: string,
    opts: { connectionId?: string; parents?: Record<string, string> } = {},
  ): Promise<FieldChoices> {
    return this.request('GET', `/v1/catalog/triggers/${enc(triggerId)}/options/${enc(field)}`, {
      query: { connectionId: opts.connectionId, ...opts.parents },
    })
  }

  // ---- connections

  readonly connections = {
    /** Every connection (of one connector), oldest first, following `next` page after page. */
    list: async (connector?: string): Promise<ConnectionView[]> =>
      collect(this.connections.all({ connector })),
    /** One page with its `next` (null on the last page). */
    page: (
      q: { connector?: string; endUserId?: string } & PageQuery = {},
    ): Promise<{ connections: ConnectionView[]; next: string | null }> =>
      this.request('GET', '/v1/connections', { query: q }),
    /** Every connection that passes the filter, oldest first, page after page. */
    all: (
      q: { connector?: string; endUserId?: string; limit?: number } = {},
    ): AsyncGenerator<ConnectionView> =>
      this.pages(
        (cursor) => this.connections.page({ ...q, cursor }),
        (p) => p.connections,
      ),
    get: (id: string): Promise<ConnectionView> => this.request('GET', `/v1/connections/${enc(id)}`),
    create: (body: {
      connector: string
      authMethod: string
      credentials: Record<string, unknown>
    }): Promise<ConnectionView> => this.request('POST', '/v1/connections', { body }),
    reconnect: (id: string, body: { authMethod: string; credentials: Record<string, unknown> }) =>
      this.request<ConnectionView>('POST', `/v1/connections/${enc(id)}/reconnect`, { body }),
    /** Refused (CONNECTION_IN_USE) while it is in use, unless `force`; answers what it removed and detached. */
    remove: (id: string, opts: { force?: boolean } = {}): Promise<DisconnectResult> =>
      this.request('DELETE', `/v1/connections/${enc(id)}`, {
        query: { force: opts.force ? 'true' : undefined },
      }),
    /** Puts what an earlier connection of the same account bound (its `restorable`) on this one. */
    restore: (id: string, body: { from?: string } = {}): Promise<RestoreResult> =>
      this.request('POST', `/v1/connections/${enc(id)}/restore`, { body }),
  }

  // ---- agents, keys, tools

  readonly agents = {
    /** Every agent, oldest first, following `next` page after page. */
    list: async (): Promise<AgentView[]> => collect(this.agents.all()),
    /** One page with its `next` (null on the last page). */
    page: (q: PageQuery = {}): Promise<{ agents: AgentView[]; next: string | null }> =>
      this.request('GET', '/v1/agents', { query: q }),
    /** Every agent, oldest first, page after page. */
    all: (q: { limit?: number } = {}): AsyncGenerator<AgentView> =>
      this.pages(
        (cursor) => this.agents.page({ ...q, cursor }),
        (p) => p.agents,
      ),
    get: (id: string): Promise<AgentView> => this.request('GET', `/v1/agents/${enc(id)}`),
    create: (body: NewAgent): Promise<Answer<'createAgent'>> => this.request('POST', '/v1/agents', { body }),
    update: (id: string, changes: Partial<NewAgent>): Promise<AgentView> =>
      this.request('PATCH', `/v1/agents/${enc(id)}`, { body: changes }),
    remove: (id: string): Promise<void> => this.request('DELETE', `/v1/agents/${enc(id)}`),
    /** A new signing secret; the previous one stays valid for `previousValidForSeconds` (default 24 h, 0: none). */
    rotateSigningSecret: (
      id: string,
      opts: { previousValidForSeconds?: number } = {},
    ): Promise<{ signingSecret: string; previousSecretValidUntil: string | null }> =>
      this.request('POST', `/v1/agents/${enc(id)}/webhook-secret/rotate`, { body: opts }),
    /** Ends a rotation's overlap now: pushes are signed with the current secret only. */
    endSecretOverlap: (id: string): Promise<void> =>
      this.request('DELETE', `/v1/agents/${enc(id)}/webhook-secret/previous`),
    keys: {
      /** Every key of the agent (never the keys themselves), oldest first, following `next`. */
      list: async (agentId: string): Promise<AgentKeyView[]> =>
        collect(
          this.pages(
            (cursor) =>
              this.request<{ keys: AgentKeyView[]; next: string | null }>(
                'GET',
                `/v1/agents/${enc(agentId)}/keys`,
                { query: { cursor } },
              ),
            (p) => p.keys,
          ),
        ),
      create: (agentId: string, name?: string): Promise<Answer<'createAgentKey'>> =>
        this.request('POST', `/v1/agents/${enc(agentId)}/keys`, { body: name ? { name } : {} }),
      revoke: (agentId: string, keyId: string): Promise<void> =>
        this.request('DELETE', `/v1/agents/${enc(agentId)}/keys/${enc(keyId)}`),
    },
    /** The agent's steps and tools for function calling (OpenAI, Anthropic or MCP tools/list format). */
    /** The agent's tools for function calling; `strict` (format openai) for OpenAI's strict mode. */
    functionTools: (
      agentId: string,
      format: FunctionFormat = 'openai',
      options: { strict?: boolean } = {},
    ): Promise<unknown[]> =>
      this.request('GET', `/v1/agents/${enc(agentId)}/tools.json`, {
        query: { format, ...(options.strict ? { strict: 'true' } : {}) },
      }),
    /** Runs a model's function call ({name, arguments}) as the agent. */
    functionCall: (
      agentId: string,
      name: string,
      args: Record<string, unknown> | string = {},
    ): Promise<{ output: unknown; meta: StepRunMeta } | { run: ToolRunView }> =>
      this.request('POST', `/v1/agents/${enc(agentId)}/function-call`, { body: { name, arguments: args } }),
  }

  readonly tools = {
    /** Every tool of the agent, oldest first, following `next` page after page. */
    list: async (agentId: string): Promise<ToolView[]> =>
      collect(
        this.pages(
          (cursor) =>
            this.request<{ tools: ToolView[]; next: string | null }>(
              'GET',
              `/v1/agents/${enc(agentId)}/tools`,
              {
                query: { cursor },
              },
            ),
          (p) => p.tools,
        ),
      ),
    create: (agentId: string, body: NewTool): Promise<ToolView> =>
      this.request('POST', `/v1/agents/${enc(agentId)}/tools`, { body }),
    remove: (agentId: string, toolId: string): Promise<void> =>
      this.request('DELETE', `/v1/agents/${enc(agentId)}/tools/${enc(toolId)}`),
    run: (agentId: string, toolId: string, input: Record<string, unknown> = {}): Promise<ToolRunView> =>
      this.request('POST', `/v1/agents/${enc(agentId)}/tools/${enc(toolId)}/run`, { body: { input } }),
  }

  // ---- triggers, deliveries, events

  readonly triggers = {
    /** Every trigger of the agent, oldest first, following `next` page after page. */
    list: async (agentId: string): Promise<TriggerView[]> => collect(this.triggers.all(agentId)),
    /** One page with its `next` (null on the last page). */
    page: (agentId: string, q: PageQuery = {}): Promise<{ triggers: TriggerView[]; next: string | null }> =>
      this.request('GET', `/v1/agents/${enc(agentId)}/triggers`, { query: q }),
    /** Every trigger of the agent, oldest first, page after page. */
    all: (agentId: string, q: { limit?: number } = {}): AsyncGenerator<TriggerView> =>
      this.pages(
        (cursor) => this.triggers.page(agentId, { ...q, cursor }),
        (p) => p.triggers,
      ),
    get: (id: string): Promise<TriggerView> => this.request('GET', `/v1/triggers/${enc(id)}`),
    create: (
      agentId: string,
      body: Omit<NewTrigger, 'agentId'> | Record<string, unknown>,
    ): Promise<TriggerView> => this.request('POST', `/v1/agents/${enc(agentId)}/triggers`, { body }),
    remove: (id: string): Promise<{ deleted: true; cleanup: { ok: boolean; error?: string } }> =>
      this.request('DELETE', `/v1/triggers/${enc(id)}`),
    diagnose: (id: string): Promise<TriggerDiagnosis> =>
      this.request('GET', `/v1/triggers/${enc(id)}/diagnose`),
    poll: (id: string): Promise<{ events: number }> => this.request('POST', `/v1/triggers/${enc(id)}/poll`),
  }

  readonly deliveries = {
    /** One page, newest first: its deliveries (pass `cursor` from `page` for the next). */
    list: async (q: DeliveryQuery & PageQuery = {}): Promise<DeliveryView[]> =>
      (await this.deliveries.page(q)).deliveries,
    /** One page with its `next` (null on the last page). */
    page: (q: DeliveryQuery & PageQuery = {}): Promise<{ deliveries: DeliveryView[]; next: string | null }> =>
      this.request('GET', '/v1/deliveries', { query: q }),
    /** Every delivery that passes the filter, newest first, page after page. */
    all: (q: DeliveryQuery & { limit?: number } = {}): AsyncGenerator<DeliveryView> =>
      this.pages(
        (cursor) => this.deliveries.page({ ...q, cursor }),
        (p) => p.deliveries,
      ),
    get: (id: string): Promise<DeliveryView> => this.request('GET', `/v1/deliveries/${enc(id)}`),
    replay: (id: string): Promise<DeliveryView> => this.request('POST', `/v1/deliveries/${enc(id)}/replay`),
  }

  /** Upstream deliveries set aside in the inbox (acknowledged, not processed), and processing one again. */
  readonly inbox = {
    /** One page, newest first (pass `cursor` from `page` for the next). */
    list: async (q: PageQuery = {}): Promise<ParkedInboxView[]> => (await this.inbox.page(q)).parked,
    /** One page with its `next` (null on the last page). */
    page: (q: PageQuery = {}): Promise<{ parked: ParkedInboxView[]; next: string | null }> =>
      this.request('GET', '/v1/inbox', { query: q }),
    /** Every row set aside, newest first, page after page. */
    all: (q: { limit?: number } = {}): AsyncGenerator<ParkedInboxView> =>
      this.pages(
        (cursor) => this.inbox.page({ ...q, cursor }),
        (p) => p.parked,
      ),
    retry: (seq: number): Promise<{ seq: number; status: 'pending' }> =>
      this.request('POST', `/v1/inbox/${enc(String(seq))}/retry`),
  }

  /**
   * Long work as jobs: a bulk enrichment or a replay of many deliveries. `start` answers at once;
   * `wait` polls the job until it ends, telling `onProgress` each time it is read.
   */
  readonly jobs = {
    start: (body: NewJob): Promise<JobView> => this.request('POST', '/v1/jobs', { body }),
    get: (id: string): Promise<JobView> => this.request('GET', `/v1/jobs/${enc(id)}`),
    /** One page, newest first (pass `cursor` from `page` for the next). */
    list: async (q: { status?: string } & PageQuery = {}): Promise<JobSummaryView[]> =>
      (await this.jobs.page(q)).jobs,
    /** One page with its `next` (null on the last page). */
    page: (
      q: { status?: string } & PageQuery = {},
    ): Promise<{ jobs: JobSummaryView[]; next: string | null }> =>
      this.request('GET', '/v1/jobs', { query: q }),
    cancel: (id: string): Promise<JobView> => this.request('POST', `/v1/jobs/${enc(id)}/cancel`),
    wait: async (
      id: string,
      opts: { onProgress?: (job: JobView) => void; intervalMs?: number; signal?: AbortSignal } = {},
    ): Promise<JobView> => {
      for (;;) {
        const job = await this.request<JobView>('GET', `/v1/jobs/${enc(id)}`, { signal: opts.signal })
        opts.onProgress?.(job)
        if (job.status !== 'queued' && job.status !== 'running') return job
        await new Promise((r) => setTimeout(r, opts.intervalMs ?? 500))
        opts.signal?.throwIfAborted()
      }
    },
  }

  /**
   * Time series from the stored records: `series` some of events.received, deliveries.outcome,
   * deliveries.latency, deliveries.backlog, steps.outcome, tools.outcome, upstream.requests,
   * upstream.rate_limited, upstream.headroom, credits.by_connection, credits.by_agent (all when left
   * out); `from`/`to` ISO times (default the last day); `step` 1m … 1d (chosen when left out).
   */
  stats(q: { series?: string[]; from?: string; to?: string; step?: string } = {}): Promise<StatsView> {
    return this.request('GET', '/v1/stats', {
      query: { series: q.series?.join(','), from: q.from, to: q.to, step: q.step },
    })
  }

  /**
   * The agent's event stream (its `stream` deliveries) as an async iterator, resuming with
   * Last-Event-ID after a dropped connection. End it with `opts.signal` or by leaving the loop.
   */
  events(agentId: string, opts: StreamOptions = {}): AsyncGenerator<StreamedDelivery> {
    return followStream(
      (lastEventId, signal) =>
        this.#fetch(`${this.url}/v1/agents/${enc(agentId)}/stream`, {
          headers: {
            authorization: `Bearer ${this.#key}`,
            accept: 'text/event-stream',
            ...(lastEventId !== null ? { 'last-event-id': lastEventId } : {}),
          },
          signal,
        }),
      opts,
    )
  }
}

const enc = encodeURIComponent

/** The items of an async generator as an array (Array.fromAsync, which Node 20 lacks). */
async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = []
  for await (const item of items) all.push(item)
  return all
}
