// From raw deliveries to deliveries for agents: each delivery's events are stored (once, by
// the upstream's id), matched against the triggers listening on its webhook, and turned into
// one delivery per match. Fresh deliveries from the ingress go through in one commit for the whole
// batch, before the upstream gets its 200, with no raw copy in the inbox: their events and
// deliveries are what is kept. Only a delivery that fails here is kept raw in the inbox (by the
// ingress); inbox rows left pending — by an older process, or by such a failure — are drained the
// same way.
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely, Transaction } from 'kysely'
import type { NormalizedEvent } from '../../kit/define.ts'
import { deliveries, events, inbox, type NewDelivery, type NewEvent } from '../../store/event-log.ts'
import { nowIso } from '../../store/ids.ts'
import type { Database } from '../../store/schema.ts'
import type { SubscriptionRow } from '../../store/subscriptions.ts'
import type { PlacementChanges } from '../access/placement-changes.ts'
import type { Registry } from '../registry.ts'
import type { AgentDirectory, AgentInfo } from '../triggers/directories.ts'
import { eventOutsideScope } from '../triggers/event-scope.ts'
import type { ListeningTrigger, TriggerService } from '../triggers/trigger-service.ts'
import type { EventAttributor } from './attribution.ts'
import type { Deliverer } from './deliverer.ts'
import { deliveryShapeProblem } from './delivery-shape.ts'
import { deliveryRow, eventRow, type SendableDelivery, sendable } from './records.ts'

const BATCH = 500
/** Tries of an inbox row that fails to process before it is set aside. */
export const INBOX_MAX_TRIES = 5

export interface ParsedDelivery {
  sub: SubscriptionRow
  events: NormalizedEvent[]
  receivedAt: string
}

interface MatchContext {
  listening: Map<string, ListeningTrigger[]>
  /** Each listening agent as it is now (its current scope and connections); null when gone. */
  agents: Map<string, AgentInfo | null>
}

export class Pipeline {
  #db: Kysely<Database>
  #registry: Registry
  #triggers: TriggerService
  #deliverer: Deliverer
  #log: FastifyBaseLogger
  #placements: PlacementChanges
  #agents: AgentDirectory
  #attributor: EventAttributor

  constructor(deps: {
    db: Kysely<Database>
    registry: Registry
    triggers: TriggerService
    deliverer: Deliverer
    agents: AgentDirectory
    log: FastifyBaseLogger
    /** Told of every stored event's cards and lists (the scope guard's places may have moved). */
    placements: PlacementChanges
    /** Reads the place of events whose delivery does not name it, before they are matched. */
    attributor: EventAttributor
  }) {
    this.#placements = deps.placements
    this.#attributor = deps.attributor
    this.#agents = deps.agents
    this.#db = deps.db
    this.#registry = deps.registry
    this.#triggers = deps.triggers
    this.#deliverer = deps.deliverer
    this.#log = deps.log
  }

  /**
   * Stores fresh deliveries' events and deliveries, in one commit. No raw row is written for them:
   * nothing reads the raw copy of a processed delivery, and its random delivery id in the inbox's
   * unique index cost a page of the write-ahead log per delivery (issue 17).
   */
  async ingest(items: ParsedDelivery[]): Promise<void> {
    const matched = this.#match(items, await this.#prepare(items))
    const created =
      (await this.#storeAtOnce(matched)) ??
      (await this.#db.transaction().execute((trx) => this.#store(trx, matched)))
    if (created.length) await this.#deliverer.dispatch(created)
  }

  /**
   * Processes inbox rows left pending, oldest first. Rows go through together; when that commit
   * fails, each goes through on its own, so one row that cannot be processed blocks none behind
   * it: it is tried again on a later drain and set aside (`failed`, with the reason) after
   * INBOX_MAX_TRIES. A row that cannot be read at all is set aside at once.
   */
  async drain(): Promise<{ retryLater: boolean }> {
    let after = 0
    let retryLater = false
    for (;;) {
      const rows = await inbox.pending(this.#db, BATCH, after)
      if (rows.length === 0) break
      after = Number(rows[rows.length - 1].seq)
      const items: Array<ParsedDelivery & { seq: number }> = []
      const ignored: number[] = []
      const unreadable: Array<{ seq: number; error: string }> = []
      for (const row of rows) {
        const sub = await this.#triggers.subscription(row.subscription_id)
        if (!sub) {
          unreadable.push({ seq: row.seq, error: 'its webhook was removed before it was processed' })
          continue
        }
        try {
          const parsed = this.#registry
            .connector(sub.connector)!
            .webhooks!.parse({ headers: JSON.parse(row.headers), rawBody: row.body, callbackUrl: '' })
          if ('ignore' in parsed) {
            ignored.push(row.seq)
            continue
          }
          const problem = deliveryShapeProblem(parsed)
          if (problem) unreadable.push({ seq: row.seq, error: `cannot be stored: ${problem}` })
          else items.push({ seq: row.seq, sub, events: parsed.events, receivedAt: row.received_at })
        } catch (err) {
          unreadable.push({ seq: row.seq, error: `could not be read: ${(err as Error).message}` })
        }
      }
      await this.#db.transaction().execute(async (trx) => {
        await inbox.mark(trx, ignored, 'done')
        for (const f of unreadable) await inbox.mark(trx, [f.seq], 'failed', f.error)
      })
      for (const f of unreadable) this.#log.warn({ inbox: f.seq, reason: f.error }, 'inbox row set aside')
      try {
        await this.#commitRows(items)
      } catch (err) {
        this.#log.warn({ err }, 'inbox rows failed together; processing them one by one')
        for (const item of items) {
          try {
            await this.#commitRows([item])
          } catch (e) {
            const reason = `could not be processed: ${(e as Error).message}`
            const outcome = await inbox.failedTry(this.#db, item.seq, reason, INBOX_MAX_TRIES)
            this.#log.error({ inbox: item.seq, err: e, outcome }, 'an inbox row could not be processed')
            if (outcome === 'retry') retryLater = true
          }
        }
      }
      if (rows.length < BATCH) break
    }
    return { retryLater }
  }

  /** Stores the rows' events and deliveries and marks the rows done, in one commit. */
  async #commitRows(items: Array<ParsedDelivery & { seq: number }>): Promise<void> {
    if (items.length === 0) return
    const match = await this.#prepare(items)
    const created = await this.#db.transaction().execute(async (trx) => {
      const ids = await this.#apply(trx, items, match)
      await inbox.mark(
        trx,
        items.map((i) => i.seq),
        'done',
      )
      return ids
    })
    if (created.length) await this.#deliverer.dispatch(created)
  }

  /**
   * What matching needs, read before the transaction: the listening triggers, their agents as
   * they are now, and the place of events whose delivery does not name it (looked up only for
   * events a listening trigger needing a place fires for).
   */
  async #prepare(items: ParsedDelivery[]): Promise<MatchContext> {
    const listening = new Map<string, ListeningTrigger[]>()
    for (const i of items)
      if (!listening.has(i.sub.id)) listening.set(i.sub.id, await this.#triggers.listeningOn(i.sub.id))
    const lookups = items.flatMap(
      (i) => this.#attributor.attribute(i.sub, i.events, listening.get(i.sub.id) ?? []) ?? [],
    )
    if (lookups.length > 0) await Promise.all(lookups)
    const agents = new Map<string, AgentInfo | null>()
    for (const list of listening.values())
      for (const t of list)
        if (!agents.has(t.row.agent_id))
          agents.set(
            t.row.agent_id,
            (await this.#agents.get(t.row.workspace_id, t.row.agent_id).catch(() => null)) ?? null,
          )
    return { listening, agents }
  }

  /**
   * Matches the events, then stores them (with how many triggers they matched) and their
   * deliveries. Returns the new deliveries, built from the rows written (nothing is read back).
   */
  #apply(trx: Transaction<Database>, items: ParsedDelivery[], match: MatchContext) {
    return this.#store(trx, this.#match(items, match))
  }

  /** Each event as a row to store, and the triggers (with their agents) it fires. */
  #match(items: ParsedDelivery[], match: MatchContext): Matched {
    const now = nowIso()
    const newEvents: NewEvent[] = []
    const firing: Matched['firing'] = []
    for (const { sub, events: evs, receivedAt } of items) {
      this.#placements.publish(sub.connector, evs)
      for (const e of evs) {
        const triggers: Array<{ t: ListeningTrigger; agent: AgentInfo }> = []
        for (const t of match.listening.get(sub.id) ?? []) {
          let fires = false
          try {
            fires = t.def.match!(e, t.config)
          } catch (err) {
            this.#log.error({ trigger: t.row.id, err }, 'trigger match failed')
          }
          if (!fires) continue
          // The agent's scope and connections as they are now, not when the trigger was made.
          const agent = match.agents.get(t.row.agent_id)
          if (!agent) continue
          if (eventOutsideScope(agent, { def: t.def, connectionId: t.row.connection_id }, e)) continue
          triggers.push({ t, agent })
        }
        firing.push({ key: `${sub.connector}:${e.id}`, triggers })
        newEvents.push(
          eventRow(e, {
            workspaceId: sub.workspace_id,
            connector: sub.connector,
            subscriptionId: sub.id,
            connectionId: sub.connection_id,
            model: sub.model,
            receivedAt,
            now,
            matched: triggers.length,
          }),
        )
      }
    }
    return { now, newEvents, firing }
  }

  /** Stores matched events (those stored before are kept, their matches counted again) and their deliveries. */
  async #store(trx: Transaction<Database>, m: Matched): Promise<SendableDelivery[]> {
    const stored = await events.upsertMany(trx, m.newEvents)
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
   * transactional way, before the upstream is answered. Null where the store cannot.
   */
  async #storeAtOnce(m: Matched): Promise<SendableDelivery[] | null> {
    const asNew = new Map<string, NewEvent>()
    m.firing.forEach((f, i) => {
      if (!asNew.has(f.key)) asNew.set(f.key, m.newEvents[i])
    })
    const { created, eventOf, triggerKey } = this.#deliveriesOf(m, asNew)
    const stored = await events.insertWithDeliveries(
      this.#db,
      m.newEvents,
      this.#deliverer.claimedAtInsert(created),
    )
    if (!stored) return null
    const sent = stored.deliveries.map((d) =>
      sendable(d, eventOf.get(d.event_id)!, triggerKey.get(d.trigger_id) ?? null),
    )
    if (stored.eventIds.size === m.newEvents.length) return sent
    const rest: Matched = { now: m.now, newEvents: [], firing: [] }
    m.newEvents.forEach((e, i) => {
      if (stored.eventIds.has(e.id)) return
      rest.newEvents.push(e)
      rest.firing.push(m.firing[i])
    })
    return [...sent, ...(await this.#db.transaction().execute((trx) => this.#store(trx, rest)))]
  }

  /** The deliveries of matched events, each event as `stored` has it (the row stored before, for a repeat). */
  #deliveriesOf(m: Matched, stored: Map<string, NewEvent & { repeat?: true }>) {
    const created: NewDelivery[] = []
    const eventOf = new Map<string, NewEvent>()
    const triggerKey = new Map<string, string>()
    const repeats = new Map<string, number>()
    for (const { key, triggers } of m.firing) {
      const event = stored.get(key)
      if (!event) continue
      // A repeat keeps its stored row; the triggers it matches now are counted on it again.
      if (event.repeat && triggers.length) repeats.set(event.id, triggers.length)
      eventOf.set(event.id, event)
      for (const { t, agent } of triggers) {
        triggerKey.set(t.row.id, t.row.trigger_key)
        created.push(
          deliveryRow({
            workspaceId: t.row.workspace_id,
            agentId: t.row.agent_id,
            triggerId: t.row.id,
            eventId: event.id,
            target: t.target,
            agentDelivery: agent.delivery.type,
            now: m.now,
          }),
        )
      }
    }
    return { created, eventOf, triggerKey, repeats }
  }
}

/** Events matched to the triggers they fire, as rows to store (`firing[i]` is `newEvents[i]`'s). */
interface Matched {
  now: string
  newEvents: NewEvent[]
  firing: Array<{ key: string; triggers: Array<{ t: ListeningTrigger; agent: AgentInfo }> }>
}
