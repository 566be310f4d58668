// What was received and delivered, as the API, the MCP resources and the agents' streams read it:
// events and deliveries newest first, upstream deliveries set aside in the inbox, one event with its deliveries, one delivery with its
// attempts, the JSON each delivery's agent receives, and an agent's deliveries after a seq in seq
// order (a stream catching up). One home for these reads, so the server never queries the
// store's event log itself.
import type { Kysely } from 'kysely'
import { PatchbayError } from '../../kit/errors.ts'
import {
  type DeliveryFilter,
  type DeliveryRow,
  deliveries,
  type EventFilter,
  type EventRow,
  events,
} from '../../store/event-log.ts'
import type { Page, PageRequest } from '../../store/paging.ts'
import type { ParkedInbox, ParkedInboxRow } from '../../store/parked-inbox.ts'
import type { Database } from '../../store/schema.ts'
import type { Deliverer } from './deliverer.ts'
import type { DeliveryPayload } from './payload.ts'

export type { DeliveryFilter, DeliveryRow, EventFilter, EventRow, ParkedInboxRow }
/** A page of a list the API pages; `beforeSeq` is the deprecated way, kept for one release. */
export type SeqPageRequest = PageRequest & { beforeSeq?: number }
export type DeliveryAttemptRow = Awaited<ReturnType<typeof deliveries.attempts>>[number]

export class EventHistory {
  #db: Kysely<Database>
  #deliverer: Deliverer
  #parked: ParkedInbox

  constructor(deps: { db: Kysely<Database>; deliverer: Deliverer; parked: ParkedInbox }) {
    this.#db = deps.db
    this.#deliverer = deps.deliverer
    this.#parked = deps.parked
  }

  /** Upstream deliveries set aside in the inbox (with why), newest first, a page at a time. */
  parkedInbox(workspaceId: string, page: SeqPageRequest): Promise<Page<ParkedInboxRow>> {
    return this.#parked.list(workspaceId, page)
  }

  /** Events received, newest first, a page at a time. */
  listEvents(workspaceId: string, filter: EventFilter & SeqPageRequest): Promise<Page<EventRow>> {
    return events.page(this.#db, workspaceId, filter)
  }

  /** One event and the deliveries it made (EVENT_NOT_FOUND when there is none). */
  async event(workspaceId: string, id: string): Promise<{ event: EventRow; deliveries: DeliveryRow[] }> {
    const event = await events.get(this.#db, workspaceId, id)
    if (!event)
      throw new PatchbayError('EVENT_NOT_FOUND', `There is no event "${id}".`, {
        hint: 'List events with GET /v1/events.',
      })
    return { event, deliveries: await deliveries.list(this.#db, workspaceId, { eventId: id, limit: 500 }) }
  }

  /** Deliveries, newest first, a page at a time. */
  listDeliveries(workspaceId: string, filter: DeliveryFilter & SeqPageRequest): Promise<Page<DeliveryRow>> {
    return deliveries.page(this.#db, workspaceId, filter)
  }

  /** Deliveries that pass the filter after `afterSeq`, oldest first (a scan: a replay job's). */
  deliveriesAfter(
    workspaceId: string,
    filter: DeliveryFilter & { afterSeq: number; limit: number },
  ): Promise<DeliveryRow[]> {
    return deliveries.list(this.#db, workspaceId, { ...filter, ascending: true })
  }

  /** One delivery, or undefined. */
  findDelivery(workspaceId: string, id: string): Promise<DeliveryRow | undefined> {
    return deliveries.get(this.#db, workspaceId, id)
  }

  /** One delivery (DELIVERY_NOT_FOUND when there is none). */
  async delivery(workspaceId: string, id: string): Promise<DeliveryRow> {
    const row = await this.findDelivery(workspaceId, id)
    if (!row)
      throw new PatchbayError('DELIVERY_NOT_FOUND', `There is no delivery "${id}".`, {
        hint: 'List deliveries with GET /v1/deliveries.',
      })
    return row
  }

  /** A delivery's attempts, first first. */
  attempts(deliveryId: string): Promise<DeliveryAttemptRow[]> {
    return deliveries.attempts(this.#db, deliveryId)
  }

  /** The JSON each delivery's agent receives (pushed, streamed or replayed alike), by delivery id. */
  async payloads(rows: Pick<DeliveryRow, 'id'>[]): Promise<Map<string, string>> {
    const joined = await this.#deliverer.joined(rows.map((r) => r.id))
    return new Map(joined.map((j) => [j.id, this.#deliverer.body(j)]))
  }

  /** The same payloads as values, where an object is wanted (the API's and MCP's view of a delivery). */
  async payloadValues(rows: Pick<DeliveryRow, 'id'>[]): Promise<Map<string, DeliveryPayload>> {
    const joined = await this.#deliverer.joined(rows.map((r) => r.id))
    return new Map(joined.map((j) => [j.id, this.#deliverer.payload(j)]))
  }

  /**
   * An agent's deliveries after `afterSeq`, in seq order, each with what a stream sends (the
   * payload of a stream delivery; null for the agent's other deliveries, which a stream skips), and
   * `readTo`: the seq through which every delivery of the agent has now been read, the place to read
   * on from. A read that finds less than `limit` has read the agent's deliveries through the
   * workspace's newest one, so the next read starts there rather than at the agent's last delivery:
   * the agents' deliveries are found in the workspace's (migration 0017), and a quiet agent's
   * stream in a busy workspace read past every other agent's deliveries since its own last one at
   * each wake-up. The newest seq is read first; seqs become visible in order on both stores (one
   * writer; the lock deliveries are inserted under), so none at or below it appears later.
   */
  async after(
    workspaceId: string,
    agentId: string,
    afterSeq: number,
    limit: number,
  ): Promise<{ rows: Array<{ seq: number; body: string | null }>; readTo: number }> {
    const newest = await deliveries.newestSeq(this.#db, workspaceId)
    if (newest <= afterSeq) return { rows: [], readTo: afterSeq }
    const rows = await deliveries.list(this.#db, workspaceId, {
      agentId,
      afterSeq,
      throughSeq: newest,
      limit,
      ascending: true,
    })
    const bodies = await this.payloads(rows.filter((r) => r.target.type === 'stream'))
    return {
      rows: rows.map((r) => ({ seq: Number(r.seq), body: bodies.get(r.id) ?? null })),
      readTo: rows.length < limit ? newest : Number(rows[rows.length - 1].seq),
    }
  }
}
