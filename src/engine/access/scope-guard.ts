// An agent touches only what it is configured for. Before a step an agent runs sends anything
// upstream, this checks that the connection is one the agent may use and that every resource the
// input names lies in a place in the agent's scope, of the place kinds the connectors declare
// (access/places.ts: a task-board's boards, a code-host's repositories). A resource that is no
// place itself (a card) is placed through a read-only lookup its connector declares (its
// `scope`), remembered for a while so repeated checks stay off the upstream; an API Call is
// attributed to the resources its method, path and body name, and one that names none is
// refused. Workspace (admin) keys are not scoped.
import type {
  ConnectorDefinition,
  Credentials,
  ScopedField,
  ScopedKind,
  StepDefinition,
} from '../../kit/define.ts'
import { PatchbayError } from '../../kit/errors.ts'
import type { Http } from '../../kit/http.ts'
import { ResultCache } from '../../kit/result-cache.ts'
import type { AgentService } from '../agents/agent-service.ts'
import type { RegisteredStep, Registry } from '../registry.ts'
import type { UpstreamClients } from '../upstream/upstream-clients.ts'
import type { Caller } from './caller.ts'
import type { PlacementChanges } from './placement-changes.ts'
import { either, type Place, type Places, type Scope } from './places.ts'

export interface ScopeRef {
  kind: ScopedKind
  value: string
}

/** Where a scoped resource lies: the unit an agent's scope is written in. */
export type ScopePlace = Place

/** The part of an agent the guard reads. */
export interface ScopedAgent {
  id: string
  name?: string
  scope: Scope
  connectionIds: string[]
}

/** What the scope check reads of a step: its id, connector and scoped fields (a picker's too). */
export type CheckedStep = Pick<RegisteredStep, 'id' | 'connector'> & {
  step: Pick<StepDefinition, 'scoped' | 'passThrough'> & { hints?: StepDefinition['hints'] }
}

/** What the step runner knows of the credentials a step is about to use. */
export interface StepTarget {
  connectionId: string | null
  credentials: Credentials
}

export interface ScopeGuardOptions {
  /**
   * How long a resolved place is trusted. A move an event reports (a webhook delivery or a poll
   * naming the resource) is seen at once; one no event reports, after this.
   */
  cacheTtlMs?: number
  cacheMaxEntries?: number
}

const DEFAULT_TTL_MS = 5_000
const DEFAULT_MAX_ENTRIES = 10_000

export class ScopeGuard {
  #agents: AgentService
  #clients: UpstreamClients
  #registry: Registry
  #kinds: Places
  // A resource's place is a fact of the upstream, not of who asks, so one cache serves every
  // connection: an answer only ever lets an agent reach what its own scope already names.
  #places: ResultCache
  /** Resolution lookups sent upstream (cache misses), for tests and diagnosis. */
  readonly stats = { lookups: 0, cacheHits: 0 }

  constructor(deps: {
    agents: AgentService
    clients: UpstreamClients
    registry: Registry
    placements: PlacementChanges
    options?: ScopeGuardOptions
  }) {
    this.#agents = deps.agents
    this.#clients = deps.clients
    this.#registry = deps.registry
    this.#kinds = deps.registry.places
    this.#places = new ResultCache({
      ttlMs: deps.options?.cacheTtlMs ?? DEFAULT_TTL_MS,
      maxEntries: deps.options?.cacheMaxEntries ?? DEFAULT_MAX_ENTRIES,
    })
    // An event about a movable resource (moved, say) makes its place be looked up again.
    // Keys are placeKey()s: the same on every instance.
    deps.placements.subscribe((places) => {
      if (places.length === 0) this.#places.clear()
      for (const key of places) this.#places.delete(key)
    })
  }

  /** Refuses a connection an agent may not use (before anything is read with it). */
  checkConnection = async (caller: Caller, connectionId: string): Promise<void> => {
    if (!caller.agentId) return
    this.#allowConnection(await this.#agents.forCaller(caller), connectionId)
  }

  /**
   * The step runner's hook: refuses an agent's step before anything but lookups is sent. Only an
   * agent's step is checked: for any other caller there is nothing to wait for (undefined).
   */
  checkStep = (caller: Caller, registered: CheckedStep, input: unknown, target: StepTarget) =>
    caller.agentId ? this.#checkAgentStep(caller, registered, input, target) : undefined

  async #checkAgentStep(caller: Caller, registered: CheckedStep, input: unknown, target: StepTarget) {
    const agent = await this.#agents.forCaller(caller)
    const { connector, step } = registered
    if (target.connectionId !== null) this.#allowConnection(agent, target.connectionId)
    const refs = this.#refsOfStep(agent, connector, step, registered.id, input)
    if (refs.length > 0)
      await this.checkResources(agent, connector.id, refs, this.#lookupClient(connector, target), {
        fresh: writes(step, input),
      })
    // The step learns the scope it runs in, to narrow what reaches across resources (a search).
    return this.#kinds.copy(agent.scope)
  }

  /**
   * Refuses (403 SCOPE_DENIED) unless every resource lies in the agent's scope. `http` is used
   * only for read-only lookups of resources the cache does not place yet.
   */
  async checkResources(
    agent: ScopedAgent,
    connectorId: string,
    refs: ScopeRef[],
    http: Http,
    opts: { fresh?: boolean } = {},
  ): Promise<void> {
    const connector = this.#connector(connectorId)
    const unique = [...new Map(refs.map((r) => [`${r.kind}:${r.value}`, r])).values()]
    const verdicts = await Promise.all(
      unique.map((ref) => this.#verdict(agent, connector, ref, http, opts.fresh ?? false)),
    )
    const denied = verdicts.find((v) => v !== null)
    if (denied) throw denied
  }

  /** Refuses a trigger whose configuration names a place outside the agent's scope. */
  async checkTriggerConfig(
    agent: ScopedAgent,
    triggerId: string,
    config: unknown,
    http: Http,
  ): Promise<void> {
    const registered = this.#registry.triggers.get(triggerId)
    if (!registered) throw new Error(`checkTriggerConfig: unknown trigger ${triggerId}`)
    const refs = refsOfFields(registered.trigger.scoped ?? [], config)
    if (refs.length > 0) await this.checkResources(agent, registered.connector.id, refs, http)
  }

  /** Whether a place (an event's, say) is in the agent's scope; no lookups. */
  allows(agent: ScopedAgent, place: ScopePlace): boolean {
    return this.#kinds.contains(agent.scope, place)
  }

  #allowConnection(agent: ScopedAgent, connectionId: string): void {
    if (!agent.connectionIds.includes(connectionId))
      throw new PatchbayError(
        'CONNECTION_NOT_ALLOWED',
        `Agent ${label(agent)} may not use connection ${connectionId}; it may use ${list(agent.connectionIds)}.`,
        { hint: `Use one of the agent's connections, or add this one to it (PATCH /v1/agents/${agent.id}).` },
      )
  }

  /** Forgets every resolved place (after a bulk move upstream, say). */
  forget(): void {
    this.#places.clear()
  }

  #refsOfStep(
    agent: ScopedAgent,
    connector: ConnectorDefinition,
    step: CheckedStep['step'],
    stepId: string,
    input: unknown,
  ): ScopeRef[] {
    if (!step.passThrough) return refsOfFields(step.scoped ?? [], input)
    const scoped =
      connector.steps.some((s) => s.scoped?.length) || connector.triggers.some((t) => t.scoped?.length)
    if (!connector.scope) {
      // A connector with nothing scoped (contact-data) has nothing to refuse; one that has scoped
      // resources but no way to attribute a call is closed to agents rather than open.
      if (!scoped) return []
      throw denied(agent, `${stepId} cannot be checked against the agent's scope`, {
        hint: `Use the ${connector.name} ready-made steps, or a workspace key.`,
      })
    }
    const refs = connector.scope.attributeApiCall(asObject(input))
    if (!refs || refs.length === 0) {
      const i = input as { method?: string; endpoint?: string }
      throw denied(
        agent,
        `${i.method ?? ''} ${i.endpoint ?? ''} names no ${connector.name} resource the agent's scope can allow (it is not about one ${this.#kinds.names()})`.trim(),
        { hint: connector.scope.apiCallHint ?? "An agent's API Calls must address a resource in its scope." },
      )
    }
    return refs
  }

  async #verdict(
    agent: ScopedAgent,
    connector: ConnectorDefinition,
    ref: ScopeRef,
    http: Http,
    fresh: boolean,
  ): Promise<PatchbayError | null> {
    // Places in the scope need no lookup; nor does a place of a kind whose values are their own
    // place (owner/repo), or a group (its places are in the scope or not).
    const kind = this.#kinds.kind(ref.kind)
    if (kind && this.allows(agent, { kind: ref.kind, id: ref.value })) return null
    if (kind && !kind.resolve) return this.#outside(agent, ref, null)
    if (this.#kinds.groupOf(ref.kind))
      return this.#kinds.groupContains(agent.scope, ref.kind, ref.value)
        ? null
        : this.#outside(agent, ref, null)
    if (!connector.scope)
      return denied(agent, `the ${ref.kind} ${ref.value} cannot be placed on a ${this.#kinds.names()}`, {
        hint: `${connector.name} declares no scope lookups; use a workspace key.`,
      })
    let place: ScopePlace
    try {
      place = fresh ? await this.#placeNow(connector, ref, http) : await this.#place(connector, ref, http)
    } catch (err) {
      // A resource the upstream will not place (missing, unreadable) cannot be shown to be in
      // scope. Transient failures (rate limits, outages) are passed on to be retried.
      if (
        err instanceof PatchbayError &&
        err.status >= 400 &&
        err.status < 500 &&
        err.code !== 'RATE_LIMITED'
      )
        return denied(
          agent,
          `the ${ref.kind} ${ref.value} could not be placed on a ${this.#kinds.names(this.#kinds.of(connector.id))} (${err.message})`,
          {
            hint: `Check the identifier; only resources on ${either(this.#kinds.of(connector.id).map((k) => k.scopeKey))} in the agent's scope can be used.`,
            upstream: err.upstream,
          },
        )
      throw err
    }
    return this.allows(agent, place) ? null : this.#outside(agent, ref, place)
  }

  async #place(connector: ConnectorDefinition, ref: ScopeRef, http: Http): Promise<ScopePlace> {
    const key = `${connector.id}:${ref.kind}:${ref.value}`
    const claim = this.#places.claim<ScopePlace>(key)
    if (!claim.owner) {
      this.stats.cacheHits++
      return claim.lookup.state === 'hit' ? claim.lookup.value : claim.lookup.promise
    }
    try {
      this.stats.lookups++
      const place = await connector.scope!.resolve(http, ref.kind, ref.value)
      claim.settle(place, true)
      return place
    } catch (err) {
      claim.fail(err)
      throw err
    }
  }

  /**
   * Where a resource lies now, asked of the upstream whatever is remembered (a write's check: a
   * resource moved out of the agent's scope a moment ago is refused). What it finds is remembered for
   * the reads that follow.
   */
  async #placeNow(connector: ConnectorDefinition, ref: ScopeRef, http: Http): Promise<ScopePlace> {
    const key = `${connector.id}:${ref.kind}:${ref.value}`
    this.stats.lookups++
    const place = await connector.scope!.resolve(http, ref.kind, ref.value)
    this.#places.put(key, place)
    return place
  }

  #lookupClient(connector: ConnectorDefinition, target: StepTarget): Http {
    // Lookups are paced like ready-made steps (they spend the same token's budget). They are not
    // a stored connection's requests: a refusal here denies the step instead of lapsing the
    // connection, since a 401 can mean "not your place" as well as "bad credentials".
    return this.#clients.create({
      connector,
      credentials: target.credentials,
      paced: true,
      storedConnection: false,
    })
  }

  #outside(agent: ScopedAgent, ref: ScopeRef, place: ScopePlace | null): PatchbayError {
    // The scope's list the refusal shows: the place's kind, else the kind the resource is one of
    // (or the group of).
    const kind = (place && this.#kinds.kind(place.kind)) ?? this.#kinds.home(ref.kind)
    const inScope = kind ? `${kind.scopeKey}: ${list(this.#kinds.listed(agent.scope, kind))}` : 'none'
    return outside(agent, ref, place, inScope)
  }

  #connector(id: string): ConnectorDefinition {
    const c = this.#registry.connector(id)
    if (!c) throw new Error(`scope check for unknown connector ${id}`)
    return c
  }
}

/** An input as the object a connector's readers take (an input that is not one names nothing). */
const asObject = (input: unknown): object => (typeof input === 'object' && input !== null ? input : {})

/**
 * Whether a step changes the upstream: a ready-made step not marked read-only, or an API Call
 * whose method is not GET or HEAD. A write's resources are placed from the upstream as they are
 * now; a read may use a place remembered for a few seconds (DEFAULT_TTL_MS).
 */
function writes(step: CheckedStep['step'], input: unknown): boolean {
  if (step.passThrough) {
    const method = String((input as { method?: unknown })?.method ?? 'GET').toUpperCase()
    return method !== 'GET' && method !== 'HEAD'
  }
  return step.hints?.readOnly !== true
}

/** The scoped values an input names, per the step's or trigger's field declarations. */
export function refsOfFields(fields: ScopedField[], input: unknown): ScopeRef[] {
  const refs: ScopeRef[] = []
  for (const f of fields) {
    const v = f.value ? f.value(asObject(input)) : f.field ? readPath(input, f.field) : undefined
    for (const value of Array.isArray(v) ? v : [v])
      if (typeof value === 'string' && value !== '') refs.push({ kind: f.kind, value })
  }
  return refs
}

function readPath(obj: unknown, path: string): unknown {
  let cur = obj
  for (const k of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, k)) return undefined
    cur = (cur as Record<string, unknown>)[k]
  }
  return cur
}

const label = (agent: ScopedAgent) => (agent.name ? `"${agent.name}" (${agent.id})` : agent.id)

const list = (xs: string[]) => (xs.length ? xs.join(', ') : 'none')

function denied(
  agent: ScopedAgent,
  why: string,
  opts: { hint: string; upstream?: PatchbayError['upstream'] },
) {
  return new PatchbayError('SCOPE_DENIED', `Agent ${label(agent)} may not do this: ${why}.`, {
    hint: opts.hint,
    upstream: opts.upstream,
  })
}

function outside(
  agent: ScopedAgent,
  ref: ScopeRef,
  place: ScopePlace | null,
  inScope: string,
): PatchbayError {
  const where =
    place && !(place.kind === ref.kind && place.id === ref.value)
      ? `, which is on ${place.kind} ${place.id}`
      : ''
  return new PatchbayError(
    'SCOPE_DENIED',
    `Agent ${label(agent)} may not touch ${ref.kind} ${ref.value}${where}: it is outside the agent's scope (${inScope}).`,
    {
      hint: `Use a resource in the agent's scope, or add the ${place?.kind ?? ref.kind} to it (PATCH /v1/agents/${agent.id}).`,
      details: { resource: ref, place },
    },
  )
}
