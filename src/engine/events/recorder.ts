// The one recorder of events. Every source — the upstream webhook ingress, its inbox drain, the
// pollers, and Patchbay's own notices — hands the events it parsed to `record`, which goes
// through the same lines for all of them:
//
//   attribute (read the place of events whose source did not name it, events/attribution.ts)
//   → match (each of the source's listeners that fires — asked only of those the event's keys
//     concern where their triggers give keys, events/listener-sieve.ts — held against its agent's
//     scope and connections as they are now, events/event-scope.ts)
//   → store (the events, once per owner by the upstream's id — the owner being the end user of
//     the connection they came through, or the workspace — with how many listeners they matched,
//     and one delivery per match, in one commit — with whatever the source writes in the same commit)
//   → dispatch (the new deliveries handed to the deliverer at once, events/deliverer.ts).
//
// A source says where its events come from and who listens there (EventSource); the recorder
// knows nothing of webhooks, polls or notices beyond that.

import type { FastifyBaseLogger } from 'fastify'
import type { Kysely, Transaction } from 'kysely'
import type { NormalizedEvent, TriggerDefinition } from '../../kit/define.ts'
import { closedSpan, openSpan, type TraceContext, tracingOn } from '../../kit/tracing.ts'
import {
  deliveries,
  eventKey,
  events,
  type HeldListeners,
  type NewDelivery,
  type NewEvent,
} from '../../store/event-log.ts'
import { nowIso } from '../../store/ids.ts'
import type { Database } from '../../store/schema.ts'
import type { PlacementChanges } from '../access/placement-changes.ts'
import type { Places } from '../access/places.ts'
import type { AgentService } from '../agents/agent-service.ts'
import type { TriggerTarget } from '../triggers/trigger-service.ts'
import type { EventAttributor } from './attribution.ts'
import type { Deliverer } from './deliverer.ts'
import { type EventScopeAgent, eventOutsideScope } from './event-scope.ts'
import { sieveOf } from './listener-sieve.ts'
import { deliveryRow, eventRow, type SendableDelivery, sendable } from './records.ts'

/** Where a delivery made for a listener goes: the agent (its webhook or stream), or one of its tools. */
export type ListenerTarget = TriggerTarget

/**
 * One who may receive the events of a source: a trigger (on a webhook, or the polled trigger
 * itself), or an agent told of a Patchbay notice.
 */
export interface Listener {
  /** Stored as the delivery's trigger_id: one delivery per (event, listener). */
  triggerId: string
  /** The trigger key the pushed body names (`taskboard.card_moved`), or null (a notice). */
  triggerKey: string | null
  workspaceId: string
  agentId: string
  /** The connection the listener hears through (the agent must still be allowed it). */
  connectionId: string
  target: ListenerTarget
  /** How an event's place is held against the agent's scope (kit/define.ts, TriggerDefinition.eventScope). */
  eventScope: NonNullable<TriggerDefinition['eventScope']>
  /** Whether it fires for an event; absent, it fires for every event of its source (a poll, a notice). */
  match?: (e: NormalizedEvent) => boolean
  /**
   * The keys its trigger fires under and how an event's are read (TriggerDefinition.matchKeys):
   * `match` is asked only about events that carry one of them. Absent, it is asked about every event.
   */
  sieve?: { keys: readonly string[]; event: (e: NormalizedEvent) => readonly string[] }
}

/** Where events come from, as the recorder stores and matches them. */
export interface EventSource {
  workspaceId: string
  /** The connector the events are of (`patchbay` for Patchbay's own notices). */
  connector: string
  connectionId: string
  /** What the events are stored under: the webhook's id, `poll:<trigger id>`, `notice:<kind>`. */
  subscriptionId: string
  /** The webhook's model, `poll` or `notice`. */
  model: string
  receivedAt: string
  /** Who hears events here. */
  listeners: Listener[]
  /**
   * Whether an event no listener takes is stored all the same (an upstream's webhook delivery: it
   * is what was received); a poll keeps only what its trigger delivers.
   */
  keepUnheard: boolean
  /** With tracing on: the trace the events arrived in (the webhook's request, the poll). */
  trace?: TraceContext | null
  /**
   * Whose the connection is, as its events are stored (the end user's id, '' for the workspace's
   * own), where the source has the connection at hand (a webhook's delivery is verified with it, a
   * poll reads through it); the recorder reads it otherwise. A connection's owner never changes.
   */
  owner?: string
}

export interface RecordOptions {
  /** Written in the same commit as the events and their deliveries (an inbox row marked done, a poll's cursor). */
  inCommit?: (trx: Transaction<Database>) => Promise<void>
  /**
   * The listeners the sources were read with (a version per webhook): where the store writes a
   * group in one statement (PostgreSQL, no inCommit), it stores nothing unless they are the
   * listeners in the store then, and the webhooks whose listeners changed come back as `stale`.
   */
  listenersHeld?: HeldListeners
}

export interface Recorded {
  /** Deliveries made (a repeat made none for a listener it reached before). */
  deliveries: number
  /** Webhooks whose listeners changed since they were read (listenersHeld): nothing was stored. */
  stale?: string[]
}

/** What the recorder needs of the agents: each listener's agent as it is now. */
type RecipientAgents = Pick<AgentService, 'get' | 'cached'>
/** What the recorder needs of the connections: whose each source's connection is. */
type SourceOwners = { ownerOf(workspaceId: string, connectionId: string): Promise<string | null> }
type Recipient = EventScopeAgent & { delivery: { type: 'webhook' | 'stream' } }

/** A listener a source derives from a trigger: `match` applies the trigger's own match to its config. */
export function triggerListener(
  t: {
    id: string
    trigger_key: string
    workspace_id: string
    agent_id: string
    connection_id: string
  },
  def: Pick<TriggerDefinition, 'eventScope' | 'match' | 'matchKeys'>,
  target: ListenerTarget,
  config: unknown,
  fires: 'when-matched' | 'always',
): Listener {
  const match = def.match
  const sieved = fires === 'when-matched' && match ? def.matchKeys : undefined
  let keys: readonly string[] | undefined
  try {
    keys = sieved?.config(config)
  } catch {
    // Keys the connector cannot give for this configuration: asked about every event.
  }
  return {
    triggerId: t.id,
    triggerKey: t.trigger_key,
    workspaceId: t.workspace_id,
    agentId: t.agent_id,
    connectionId: t.connection_id,
    target,
    eventScope: def.eventScope ?? 'place',
    match: fires === 'always' ? undefined : match ? (e) => match(e, config) : () => false,
    ...(sieved && keys ? { sieve: { keys, event: sieved.event } } : {}),
  }
}

export class Recorder {
  #db: Kysely<Database>
  #deliverer: Deliverer
  #log: FastifyBaseLogger
  #placements: PlacementChanges
  #agents: RecipientAgents
  #attributor: EventAttributor
  #owners: SourceOwners
  #places: Places

  constructor(deps: {
    /** The place kinds an event's place is held against the agent's scope in. */
    places: Places
    db: Kysely<Database>
    deliverer: Deliverer
    agents: RecipientAgents
    log: FastifyBaseLogger
    /** Told of every recorded event's resources (the scope guard's places may have moved). */
    placements: PlacementChanges
    /** Reads the place of events whose source does not name it, before they are matched. */
    attributor: EventAttributor
    /** Whose each source's connection is: an event is stored once per owner. */
    owners: SourceOwners
  }) {
    this.#owners = deps.owners
    this.#places = deps.places
    this.#db = deps.db
    this.#deliverer = deps.deliverer
    this.#agents = deps.agents
    this.#log = deps.log
    this.#placements = deps.placements
    this.#attributor = deps.attributor
  }

  /**
   * Records one source's events: attributed, matched, stored with their deliveries, dispatched.
   * Answers how many deliveries were made.
   */
  record(source: EventSource, events: NormalizedEvent[], opts: RecordOptions = {}): Promise<Recorded> {
    return this.recordMany([{ source, events }], opts)
  }

  /**
   * Records several sources' events in one commit (the ingress's group commit, an inbox drain).
   * When nothing else goes in the commit, the store may write them in one statement (PostgreSQL).
   */
  recordMany(
    items: Array<{ source: EventSource; events: NormalizedEvent[] }>,
    opts: RecordOptions = {},
  ): Promise<Recorded> {
    return tracingOn() ? this.#recordTraced(items, opts) : this.#recordMany(items, opts)
  }

  /**
   * With tracing on: a span per source under the trace it arrived in, with attribution and
   * matching (timed for the whole group) under it; the deliveries made are sent in that trace.
   */
  async #recordTraced(
    items: Array<{ source: EventSource; events: NormalizedEvent[] }>,
    opts: RecordOptions,
  ): Promise<Recorded> {
    const spans = items.map(({ source, events: evs }) =>
      openSpan(
        `record ${source.connector} events`,
        {
          'patchbay.workspace.id': source.workspaceId,
          'patchbay.connector': source.connector,
          'patchbay.subscription.id': source.subscriptionId,
          'patchbay.events': evs.length,
          'patchbay.record.group': items.length,
        },
        { parent: source.trace },
      ),
    )
    const times: number[] = []
    const made = items.map(() => [] as string[])
    try {
      // A delivery belongs to the source whose listener it was made for.
      const itemOf = new Map<string, number>()
      items.forEach(({ source, events: evs }, i) => {
        for (const e of evs)
          for (const l of source.listeners) itemOf.set(`${l.triggerId}\n${source.connector}\n${e.id}`, i)
      })
      const recorded = await this.#recordMany(items, opts, {
        times,
        made: (created) => {
          for (const d of created) {
            const i = itemOf.get(`${d.trigger_id}\n${d.e_connector}\n${d.e_upstream_id}`)
            if (i !== undefined) made[i].push(d.id)
          }
          made.forEach((ids, i) => {
            const span = spans[i]
            if (span && ids.length > 0) this.#deliverer.traceOf(ids, span.context)
          })
        },
      })
      spans.forEach((span, i) => {
        if (!span) return
        const [t0, t1, t2] = times
        if (t2 !== undefined) {
          closedSpan('attribution', { 'patchbay.events': items[i].events.length }, t0, t1, span.context)
          closedSpan('matching', { 'patchbay.deliveries': made[i].length }, t1, t2, span.context)
        }
        span.set({ 'patchbay.deliveries': made[i].length })
        span.end()
      })
      return recorded
    } catch (err) {
      for (const span of spans) span?.end((err as { code?: string }).code ?? 'ERROR')
      throw err
    }
  }

  async #recordMany(
    items: Array<{ source: EventSource; events: NormalizedEvent[] }>,
    opts: RecordOptions,
    trace?: { times: number[]; made(created: SendableDelivery[]): void },
  ): Promise<Recorded> {
    trace?.times.push(Date.now())
    const { agents, fired, owners } = await this.#prepare(items)
    trace?.times.push(Date.now())
    const matched = this.#match(items, agents, fired, owners)
    trace?.times.push(Date.now())
    const inCommit = opts.inCommit
    let created: SendableDelivery[]
    if (inCommit)
      created = await this.#db.transaction().execute(async (trx) => {
        const rows = await this.#store(trx, matched)
        await inCommit(trx)
        return rows
      })
    else {
      const atOnce = await this.#storeAtOnce(matched, opts.listenersHeld)
      if (atOnce && 'stale' in atOnce) return { deliveries: 0, stale: atOnce.stale }
      // Listeners that cannot be held in the statement that stores (a store without one) are not taken on trust.
      if (!atOnce && opts.listenersHeld)
        return { deliveries: 0, stale: [...opts.listenersHeld.versions.keys()] }
      created = atOnce?.created ?? (await this.#db.transaction().execute((trx) => this.#store(trx, matched)))
    }
    // With tracing on, the deliveries' trace is known before they are sent.
    if (trace && created.length) trace.made(created)
    if (created.length) await this.#deliverer.dispatch(created)
    return { deliveries: created.length }
  }

  /**
   * What matching needs, read before the transaction: the place of events whose source does not
   * name it (looked up only for events a listener needing a place fires for), the listening
   * agents as they are now (null when gone), and whose each source's connection is ('' for the
   * workspace's own).
   */
  async #prepare(items: Array<{ source: EventSource; events: NormalizedEvent[] }>) {
    const lookups = items.flatMap(
      (i) => this.#attributor.attribute(i.source, i.events, (l, e) => this.#fires(l, e)) ?? [],
    )
    if (lookups.length > 0) await Promise.all(lookups)
    // Only the agents of listeners that fire for an event: a webhook heard by many triggers (ten
    // agents of a workspace on one board) reads one agent per event, not all of them. Read at once.
    // Each event's listeners that fire, once (matching below reads them).
    const wanted = new Map<string, string>()
    const fired = new Map<NormalizedEvent, Listener[]>()
    for (const { source, events: evs } of items) {
      const sieve = sieveOf(source.listeners)
      for (const e of evs) {
        const firing = (sieve ? sieve.candidates(e) : source.listeners).filter((l) => this.#fires(l, e))
        fired.set(e, firing)
        for (const l of firing) if (!wanted.has(l.agentId)) wanted.set(l.agentId, l.workspaceId)
      }
    }
    // Those cached at once, the rest read together.
    const agents = new Map<string, Recipient | null>()
    const unread: Array<[string, string]> = []
    for (const [agentId, workspaceId] of wanted) {
      const agent = this.#agents.cached(workspaceId, agentId)
      if (agent) agents.set(agentId, agent)
      else unread.push([agentId, workspaceId])
    }
    if (unread.length > 0)
      await Promise.all(
        unread.map(async ([agentId, workspaceId]) =>
          agents.set(agentId, (await this.#agents.get(workspaceId, agentId).catch(() => null)) ?? null),
        ),
      )
    const owners = new Map<EventSource, string>()
    for (const { source } of items)
      owners.set(
        source,
        source.owner ?? (await this.#owners.ownerOf(source.workspaceId, source.connectionId)) ?? '',
      )
    return { agents, fired, owners }
  }

  #fires(l: Listener, e: NormalizedEvent): boolean {
    if (!l.match) return true
    try {
      return l.match(e)
    } catch (err) {
      this.#log.error({ trigger: l.triggerId, err }, 'trigger match failed')
      return false
    }
  }

  /** Each event as a row to store, and the listeners (with their agents) it reaches. */
  #match(
    items: Array<{ source: EventSource; events: NormalizedEvent[] }>,
    agents: Map<string, Recipient | null>,
    fired: Map<NormalizedEvent, Listener[]>,
    owners: Map<EventSource, string>,
  ): Matched {
    const now = nowIso()
    const newEvents: NewEvent[] = []
    const firing: Matched['firing'] = []
    for (const { source, events: evs } of items) {
      const owner = owners.get(source) ?? ''
      // Every event tells where its resources lie now, delivered or not.
      this.#placements.publish(source.connector, evs)
      for (const e of evs) {
        const reached: Array<{ l: Listener; agent: Recipient }> = []
        for (const l of fired.get(e) ?? []) {
          // The agent's scope and connections as they are now, not when the trigger was made.
          const agent = agents.get(l.agentId)
          if (!agent) continue
          if (
            eventOutsideScope(
              this.#places,
              agent,
              { def: { eventScope: l.eventScope }, connectionId: l.connectionId },
              e,
            )
          )
            continue
          reached.push({ l, agent })
        }
        if (reached.length === 0 && !source.keepUnheard) continue
        const key = eventKey({
          workspace_id: source.workspaceId,
          connector: source.connector,
          owner,
          upstream_id: e.id,
        })
        firing.push({ key, reached })
        newEvents.push(
          eventRow(e, {
            workspaceId: source.workspaceId,
            connector: source.connector,
            subscriptionId: source.subscriptionId,
            connectionId: source.connectionId,
            owner,
            model: source.model,
            receivedAt: source.receivedAt,
            now,
            matched: reached.length,
          }),
        )
      }
    }
    return { now, newEvents, firing }
  }

  /** Stores matched events (those stored before are kept, their matches counted again) and their deliveries. */
  async #store(trx: Transaction<Database>, m: Matched): Promise<SendableDelivery[]> {
    const stored = await events.upsertMany(trx, m.newEvents)
    // The same change through another connection of the same owner (two webhooks on one
    // repository or board): stored once, the connection it also came through recorded on it.
    for (const e of m.newEvents) {
      const kept = stored.get(eventKey(e))
      if (kept && kept.id !== e.id && kept.connection_id !== e.connection_id)
        await events.addVia(trx, kept.id, e.connection_id)
    }
    const { created, eventOf, triggerKey, repeats } = this.#deliveriesOf(m, stored)
    const inserted = await deliveries.insertRows(trx, this.#deliverer.claimedAtInsert(created))
    const byCount = new Map<number, string[]>()
    for (const [id, n] of repeats) byCount.set(n, [...(byCount.get(n) ?? []), id])
    for (const [n, ids] of byCount) await events.setMatched(trx, ids, n)
    return inserted.map((d) => sendable(d, eventOf.get(d.event_id)!, triggerKey.get(d.trigger_id) ?? null))
  }

  /**
   * Where the store can (PostgreSQL), the events and their deliveries in one statement, with no
   * transaction round trips, taking every event to be new (as nearly all are). Events stored
   * before (a redelivery, or the same change seen through another webhook) are then stored the
   * transactional way, before the source is answered. Null where the store cannot.
   */
  async #storeAtOnce(
    m: Matched,
    listenersHeld: HeldListeners | undefined,
  ): Promise<{ created: SendableDelivery[] } | { stale: string[] } | null> {
    const asNew = new Map<string, NewEvent>()
    m.firing.forEach((f, i) => {
      if (!asNew.has(f.key)) asNew.set(f.key, m.newEvents[i])
    })
    const { created, eventOf, triggerKey } = this.#deliveriesOf(m, asNew)
    const stored = await events.insertWithDeliveries(
      this.#db,
      m.newEvents,
      this.#deliverer.claimedAtInsert(created),
      listenersHeld,
    )
    if (!stored) return null
    if (stored.stale.length > 0) return { stale: stored.stale }
    const sent = stored.deliveries.map((d) =>
      sendable(d, eventOf.get(d.event_id)!, triggerKey.get(d.trigger_id) ?? null),
    )
    if (stored.eventIds.size === m.newEvents.length) return { created: sent }
    const rest: Matched = { now: m.now, newEvents: [], firing: [] }
    m.newEvents.forEach((e, i) => {
      if (stored.eventIds.has(e.id)) return
      rest.newEvents.push(e)
      rest.firing.push(m.firing[i])
    })
    return {
      created: [...sent, ...(await this.#db.transaction().execute((trx) => this.#store(trx, rest)))],
    }
  }

  /** The deliveries of matched events, each event as `stored` has it (the row stored before, for a repeat). */
  #deliveriesOf(m: Matched, stored: Map<string, NewEvent & { repeat?: true }>) {
    const created: NewDelivery[] = []
    const eventOf = new Map<string, NewEvent>()
    const triggerKey = new Map<string, string>()
    const repeats = new Map<string, number>()
    for (const { key, reached } of m.firing) {
      const event = stored.get(key)
      if (!event) continue
      // A repeat keeps its stored row; the listeners it reaches now are counted on it again.
      if (event.repeat && reached.length) repeats.set(event.id, reached.length)
      eventOf.set(event.id, event)
      for (const { l, agent } of reached) {
        if (l.triggerKey !== null) triggerKey.set(l.triggerId, l.triggerKey)
        created.push(
          deliveryRow({
            workspaceId: l.workspaceId,
            agentId: l.agentId,
            triggerId: l.triggerId,
            eventId: event.id,
            target: l.target,
            agentDelivery: agent.delivery.type,
            now: m.now,
          }),
        )
      }
    }
    return { created, eventOf, triggerKey, repeats }
  }
}

/** Events matched to the listeners they reach, as rows to store (`firing[i]` is `newEvents[i]`'s). */
interface Matched {
  now: string
  newEvents: NewEvent[]
  firing: Array<{ key: string; reached: Array<{ l: Listener; agent: Recipient }> }>
}
