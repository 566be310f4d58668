// The event path's durable tables: inbox → events → deliveries (+ their attempts). Each
// method takes the database or a transaction, so the recorder can do a batch in one commit.
// Their JSON columns are read here, once: a delivery's target, an event's refs and data, an inbox
// row's headers. An event's refs and data are also kept as their JSON text where a delivery's
// body splices them in (SendableDelivery), rather than parsed and written again per delivery.
import { type AliasedRawBuilder, type Kysely, PostgresAdapter, type Selectable, sql } from 'kysely'
import type { NormalizedEvent } from '../kit/define.ts'
import { bySeq, encodeCursor, keyset, type PageKey, type PageRequest, pageOf } from './paging.ts'
import { prepared } from './prepared-statements.ts'
import type { Database, DeliveriesTable, DeliveryAttemptsTable, EventsTable, InboxTable } from './schema.ts'
import { RowBatchInsert } from './sqlite-row-batches.ts'
import { listenerVersionsOf } from './triggers.ts'

type Db = Kysely<Database>
/** A raw upstream delivery kept in the inbox, its headers read. */
export type InboxRow = Omit<InboxTable, 'seq' | 'attempts' | 'headers'> & {
  seq: number
  attempts: number
  headers: Record<string, string>
}
export type NewInboxRow = Omit<InboxTable, 'seq' | 'attempts'>
/** What an event is about (kit/define.ts NormalizedEvent.refs). */
export type EventRefs = NormalizedEvent['refs']
/** An event as the API reads it: its refs, data and the other connections it came through (via) read. */
export type EventRow = Omit<EventsTable, 'seq' | 'refs' | 'data' | 'via' | 'listed'> & {
  seq: number
  refs: EventRefs
  data: unknown
  via: string[]
}
/** An event as it is written: refs and data as JSON text. */
export type NewEvent = Omit<EventsTable, 'seq' | 'listed'>
/** An event as written or found stored (a repeat), refs and data as JSON text. */
export type StoredEvent = NewEvent & { seq: number; repeat?: true }
/** Where a delivery goes: the agent's webhook (a push) or stream (pulled), or one of its tools. */
export type DeliveryTarget = { type: 'webhook' } | { type: 'stream' } | { type: 'tool'; toolId: string }
export type NewDelivery = Omit<DeliveriesTable, 'seq' | 'target' | 'listed'> & { target: DeliveryTarget }
export type DeliveryRow = NewDelivery & { seq: number }

/**
 * The listeners a group of events was matched with: per webhook, the version of its listeners they
 * were read at (undefined for a webhook not stored; Triggers.forSubscription, migration 0022). Every
 * webhook of the group is held: its deliveries' triggers are then not read one by one.
 */
export interface HeldListeners {
  versions: Map<string, number | undefined>
}
const NO_LISTENERS_HELD: HeldListeners = { versions: new Map() }

/**
 * A delivery with what its body needs of its event and trigger: read with a join for stored ones
 * (deliveries.sendable), or built from the rows just written (the recorder), so a fresh delivery
 * is sent without being read again. `e_refs` and `e_data` are the event's JSON text.
 */
export type SendableDelivery = DeliveryRow & {
  e_type: string
  e_upstream_id: string
  e_occurred_at: string
  e_refs: string
  e_data: string
  e_connector: string
  t_key: string | null
}

/**
 * Whether rows are stored unlisted, to enter the workspace index in batches (migration 0018): on
 * SQLite. PostgreSQL logs changes, not whole pages, and stores them listed.
 */
const storedUnlisted = (db: Db) => !(db.getExecutor().adapter instanceof PostgresAdapter)

/**
 * A workspace's events, deliveries or delivery attempts, to select from: its listed rows by the
 * workspace index and its unlisted ones (the newest, before the store lists them: migrations 0018
 * and 0020) by the unlisted index, in one statement, so both parts are one snapshot and a row
 * listed meanwhile is read once. SQLite takes a query's conditions, order and limit into both parts
 * (a merge of two index reads: the plan is checked in test/store/listed-later.test.ts). Every read
 * of a workspace's rows goes here. `columns`, when given, are the only ones read (and the only ones
 * the query may name): a count over the two parts reads whole rows otherwise, an event's data and
 * all. `alias` names the rows in the query (the table's name by default).
 */
export function ofWorkspace(
  db: Db,
  table: 'events',
  workspaceId: string,
  columns?: ReadonlyArray<keyof EventsTable & string>,
): AliasedRawBuilder<Selectable<EventsTable>, 'events'>
export function ofWorkspace(
  db: Db,
  table: 'deliveries',
  workspaceId: string,
  columns?: ReadonlyArray<keyof DeliveriesTable & string>,
): AliasedRawBuilder<Selectable<DeliveriesTable>, 'deliveries'>
export function ofWorkspace(
  db: Db,
  table: 'delivery_attempts',
  workspaceId: string,
  columns?: ReadonlyArray<keyof DeliveryAttemptsTable & string>,
  alias?: string,
): AliasedRawBuilder<Selectable<DeliveryAttemptsTable>, string>
export function ofWorkspace(
  db: Db,
  table: 'events' | 'deliveries' | 'delivery_attempts',
  workspaceId: string,
  columns?: ReadonlyArray<string>,
  alias: string = table,
): unknown {
  const picked = columns ? sql.join(columns.map((c) => sql.ref(c))) : sql`*`
  // The 1 and the 0 are written into the statement: a partial index serves a query whose
  // conditions imply its own, which a bound parameter would not show the planner.
  const listed = sql<
    Selectable<EventsTable>
  >`select ${picked} from ${sql.table(table)} where listed = 1 and workspace_id = ${workspaceId}`
  // PostgreSQL stores every row listed: the listed part is all there is. (It planned the union of
  // both as each part read whole and then sorted, not as a merge.)
  if (!storedUnlisted(db)) return sql`(${listed})`.as(alias)
  // The unlisted part is read by its own index, always: it holds a few seconds of rows, each
  // entry with its workspace (migration 0021), tested there. Left to choose, SQLite read a
  // statistics window's unlisted part by the time index instead (every workspace's rows of that
  // hour).
  const unlisted = sql`select ${picked} from ${sql.table(table)} indexed by ${sql.id(`${table}_unlisted`)} where listed = 0 and workspace_id = ${workspaceId}`
  return sql`(${listed} union all ${unlisted})`.as(alias)
}

type StoredDelivery = Omit<DeliveriesTable, 'seq' | 'listed'> & { seq: number | string; listed?: number }
const readDelivery = <R extends StoredDelivery>({
  listed: _,
  ...r
}: R): Omit<R, 'target' | 'seq' | 'listed'> & DeliveryRow =>
  ({ ...r, seq: Number(r.seq), target: JSON.parse(r.target) }) as Omit<R, 'target' | 'seq' | 'listed'> &
    DeliveryRow
const readEvent = ({
  listed: _,
  ...r
}: Omit<EventsTable, 'seq' | 'listed'> & { seq: number | string; listed?: number }): EventRow => ({
  ...r,
  seq: Number(r.seq),
  refs: JSON.parse(r.refs),
  data: JSON.parse(r.data),
  via: r.via ? JSON.parse(r.via) : [],
})
/** The event of a sendable delivery, its refs and data read (a tool run's input, the loop guard's refs). */
export function sendableEvent(d: SendableDelivery) {
  return {
    id: d.event_id,
    connector: d.e_connector,
    type: d.e_type,
    upstreamId: d.e_upstream_id,
    occurredAt: d.e_occurred_at,
    refs: JSON.parse(d.e_refs) as EventRefs,
    data: JSON.parse(d.e_data) as unknown,
  }
}
/** The columns of deliveries as written. */
const writeDelivery = (r: NewDelivery) => ({ ...r, target: JSON.stringify(r.target) })

/** A row of the attempt log as written: its delivery's workspace named. */
export type NewAttempt = Omit<DeliveryAttemptsTable, 'workspace_id' | 'listed'> & { workspace_id: string }

/** SQLite's insert of deliveries (sqlite-row-batches.ts), stored unlisted (migration 0018). */
const DELIVERIES_INSERT = new RowBatchInsert<ReturnType<typeof writeDelivery>, { id: string; seq: number }>({
  table: 'deliveries',
  columns: {
    id: true,
    workspace_id: true,
    agent_id: true,
    event_id: true,
    trigger_id: true,
    target: true,
    status: true,
    attempts: true,
    next_attempt_at: true,
    last_status: true,
    last_error: true,
    tool_run_id: true,
    created_at: true,
    delivered_at: true,
    claimed_until: true,
  },
  fixed: { listed: 0 },
  conflictDoNothing: ['event_id', 'trigger_id'],
  returning: ['id', 'seq'],
})

/** SQLite's insert of attempts (sqlite-row-batches.ts), stored unlisted (migration 0020). */
const ATTEMPTS_INSERT = new RowBatchInsert<NewAttempt>({
  table: 'delivery_attempts',
  columns: {
    delivery_id: true,
    attempt: true,
    at: true,
    status: true,
    error: true,
    duration_ms: true,
    workspace_id: true,
  },
  fixed: { listed: 0 },
  conflictDoNothing: ['delivery_id', 'attempt'],
})

/** An attempt's outcome, to be written by its claim holder (deliveries.settleMany). */
export interface SettledAttempt {
  id: string
  /** Its row in the attempt log. */
  attempt: NewAttempt
  update: {
    status: 'pending' | 'delivered' | 'dead'
    last_status: number | null
    last_error: string | null
    delivered_at?: string | null
    next_attempt_at: string | null
  }
}

/** The advisory lock that orders delivery commits on PostgreSQL (any fixed number of ours). */
const DELIVERY_ORDER_LOCK = 7_254_001

/** An inbox row whose headers cannot be read: the drain sets it aside with the reason. */
export type UnreadableInboxRow = Omit<InboxRow, 'headers'> & { headers: null; unreadable: string }

export const inbox = {
  /** Stores raw deliveries; a delivery id already stored for the subscription is ignored. */
  async insertMany(db: Db, rows: Array<NewInboxRow>) {
    if (rows.length === 0) return
    await db
      .insertInto('inbox')
      .values(rows)
      .onConflict((oc) => oc.columns(['subscription_id', 'delivery_id']).doNothing())
      .execute()
  },
  /** Pending rows after `afterSeq`, oldest first. */
  async pending(db: Db, limit: number, afterSeq = 0): Promise<Array<InboxRow | UnreadableInboxRow>> {
    const rows = await db
      .selectFrom('inbox')
      .selectAll()
      .where('status', '=', 'pending')
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(limit)
      .execute()
    return rows.map((r) => {
      const row = { ...r, seq: Number(r.seq), attempts: Number(r.attempts) }
      try {
        return { ...row, headers: JSON.parse(r.headers) as Record<string, string> }
      } catch (err) {
        return { ...row, headers: null, unreadable: (err as Error).message }
      }
    })
  },
  /** Counts a failed try of a row; at `maxTries` it is set aside as failed, with the reason. */
  async failedTry(db: Db, seq: number, error: string, maxTries: number): Promise<'retry' | 'failed'> {
    const row = await db.selectFrom('inbox').select('attempts').where('seq', '=', seq).executeTakeFirst()
    const attempts = Number(row?.attempts ?? 0) + 1
    const status = attempts >= maxTries ? 'failed' : 'pending'
    await db.updateTable('inbox').set({ attempts, error, status }).where('seq', '=', seq).execute()
    return status === 'failed' ? 'failed' : 'retry'
  },
  async mark(db: Db, seqs: number[], status: InboxTable['status'], error: string | null = null) {
    if (seqs.length === 0) return
    await db.updateTable('inbox').set({ status, error }).where('seq', 'in', seqs).execute()
  },
}

/**
 * What makes an event one (migration 0015's unique index, led by the upstream id since 0017): its
 * upstream id, connector, owner (the end user of the connection it came through, '' for the
 * workspace's own) and workspace. The same upstream change seen by two end users is two events; by
 * two connections of one owner, one.
 */
const EVENT_IDENTITY = ['upstream_id', 'connector', 'owner', 'workspace_id'] as const

/**
 * An event's identity, as a map key (events.upsertMany, the recorder): a batch may hold events of
 * several workspaces (the ingress's group commit), so the workspace is part of it.
 */
export const eventKey = (e: {
  workspace_id: string
  connector: string
  owner: string
  upstream_id: string
}): string => JSON.stringify([e.workspace_id, e.connector, e.owner, e.upstream_id])

/** SQLite's insert of events (sqlite-row-batches.ts), stored unlisted (migration 0018). */
const EVENTS_INSERT = new RowBatchInsert<NewEvent, { id: string; seq: number }>({
  table: 'events',
  columns: {
    id: true,
    workspace_id: true,
    connector: true,
    subscription_id: true,
    connection_id: true,
    model: true,
    owner: true,
    upstream_id: true,
    type: true,
    refs: true,
    data: true,
    occurred_at: true,
    received_at: true,
    matched: true,
    via: true,
  },
  fixed: { listed: 0 },
  conflictDoNothing: EVENT_IDENTITY,
  returning: ['id', 'seq'],
})

export const events = {
  /** Lists `connectionId` among the connections the event also came through (once). */
  async addVia(db: Db, eventId: string, connectionId: string): Promise<void> {
    const row = await db
      .selectFrom('events')
      .select(['connection_id', 'via'])
      .where('id', '=', eventId)
      .executeTakeFirst()
    if (!row || row.connection_id === connectionId) return
    const via = row.via ? (JSON.parse(row.via) as string[]) : []
    if (via.includes(connectionId)) return
    await db
      .updateTable('events')
      .set({ via: JSON.stringify([...via, connectionId]) })
      .where('id', '=', eventId)
      .execute()
  },
  /**
   * Inserts events not stored yet; returns the stored event for each eventKey (the row given, with
   * its seq, when it is new; the row stored before when it is a repeat: the same owner's change
   * seen again, or through another of that owner's connections).
   */
  async upsertMany(db: Db, rows: NewEvent[]): Promise<Map<string, StoredEvent>> {
    const out = new Map<string, StoredEvent>()
    if (rows.length === 0) return out
    const inserted = storedUnlisted(db)
      ? await EVENTS_INSERT.run(db, rows)
      : await db
          .insertInto('events')
          .values(rows.map((r) => ({ ...r, listed: 1 })))
          .onConflict((oc) => oc.columns(EVENT_IDENTITY).doNothing())
          .returning(['id', 'seq'])
          .execute()
    const seqOf = new Map(inserted.map((r) => [r.id, Number(r.seq)]))
    for (const r of rows) {
      const seq = seqOf.get(r.id)
      if (seq !== undefined) out.set(eventKey(r), { ...r, seq })
    }
    // Events stored before (a redelivery, or the same change seen through another webhook).
    const missing = rows.filter((r) => !out.has(eventKey(r)))
    for (const r of missing) {
      const stored = await db
        .selectFrom('events')
        .selectAll()
        .where('workspace_id', '=', r.workspace_id)
        .where('connector', '=', r.connector)
        .where('owner', '=', r.owner)
        .where('upstream_id', '=', r.upstream_id)
        .executeTakeFirst()
      if (stored) out.set(eventKey(stored), { ...stored, seq: Number(stored.seq), repeat: true })
    }
    return out
  },
  /**
   * PostgreSQL, outside a transaction: inserts events not stored yet and, in the same statement,
   * the deliveries of those it inserted (deliveries of events stored before are left out: the
   * caller stores them the transactional way). One round trip and one commit, no BEGIN/COMMIT;
   * the lock that orders delivery commits is taken as in insertRows. Returns the ids of the
   * events inserted and the deliveries inserted (with their seq); null on SQLite or in a
   * transaction (use upsertMany and deliveries.insertRows there).
   *
   * `listeners`: the listeners the events were matched with, as a version per webhook (see
   * Triggers.listenerVersions). The statement stores nothing unless those are the webhooks'
   * listeners in the store as it runs, and names the webhooks whose listeners changed (`stale`):
   * a trigger created on another instance is then heard, without a round trip of its own.
   */
  async insertWithDeliveries(
    db: Db,
    rows: NewEvent[],
    deliveryRows: NewDelivery[],
    listeners: HeldListeners = NO_LISTENERS_HELD,
  ): Promise<{ eventIds: Set<string>; deliveries: DeliveryRow[]; stale: string[] } | null> {
    if (!(db.getExecutor().adapter instanceof PostgresAdapter) || db.isTransaction) return null
    if (rows.length === 0) return { eventIds: new Set(), deliveries: [], stale: [] }
    const held = [...listeners.versions]
    const ev = <K extends keyof NewEvent>(k: K) => rows.map((e) => e[k])
    const written_ = deliveryRows.map(writeDelivery)
    const col = <K extends keyof ReturnType<typeof writeDelivery>>(k: K) => written_.map((r) => r[k])
    const { rows: written } = await sql<{
      kind: 'event' | 'delivery' | 'stale'
      id: string
      seq: string | null
    }>`${prepared('events_with_deliveries')}
      WITH held AS (
        SELECT * FROM unnest(${held.map(([sub]) => sub)}::text[], ${held.map(([, v]) => v ?? null)}::int[])
          AS h(subscription_id, version)
      ), listening AS (
        ${listenerVersionsOf(sql`ARRAY(SELECT subscription_id FROM held)`)}
      ), stale AS (
        SELECT held.subscription_id FROM held LEFT JOIN listening USING (subscription_id)
        WHERE held.version IS DISTINCT FROM listening.version
      ), ev AS (
        INSERT INTO events (id, workspace_id, connector, subscription_id, connection_id, model,
          owner, upstream_id, type, refs, data, occurred_at, received_at, matched)
        SELECT * FROM unnest(
          ${ev('id')}::text[], ${ev('workspace_id')}::text[], ${ev('connector')}::text[],
          ${ev('subscription_id')}::text[], ${ev('connection_id')}::text[], ${ev('model')}::text[],
          ${ev('owner')}::text[], ${ev('upstream_id')}::text[], ${ev('type')}::text[],
          ${ev('refs')}::text[], ${ev('data')}::text[], ${ev('occurred_at')}::text[],
          ${ev('received_at')}::text[], ${ev('matched')}::int[])
        WHERE NOT EXISTS (SELECT 1 FROM stale)
        ON CONFLICT (upstream_id, connector, owner, workspace_id) DO NOTHING
        RETURNING id, seq
      ), dl AS (
        INSERT INTO deliveries (id, workspace_id, agent_id, event_id, trigger_id, target, status,
          attempts, next_attempt_at, last_status, last_error, tool_run_id, created_at, delivered_at,
          claimed_until)
        SELECT * FROM unnest(
          ${col('id')}::text[], ${col('workspace_id')}::text[], ${col('agent_id')}::text[],
          ${col('event_id')}::text[], ${col('trigger_id')}::text[], ${col('target')}::text[],
          ${col('status')}::text[], ${col('attempts')}::int[], ${col('next_attempt_at')}::text[],
          ${col('last_status')}::int[], ${col('last_error')}::text[], ${col('tool_run_id')}::text[],
          ${col('created_at')}::text[], ${col('delivered_at')}::text[], ${col('claimed_until')}::text[])
          AS v(id, workspace_id, agent_id, event_id, trigger_id, target, status, attempts,
            next_attempt_at, last_status, last_error, tool_run_id, created_at, delivered_at, claimed_until)
        WHERE (SELECT true FROM (SELECT pg_advisory_xact_lock(${DELIVERY_ORDER_LOCK})) AS ordered)
          AND v.event_id IN (SELECT id FROM ev)
          -- With the webhooks' listeners held, a deleted trigger has moved its webhook's version:
          -- nothing is stored, and its trigger need not be read (a row a delivery).
          AND (${held.length > 0}::boolean OR ${TRIGGER_STILL_THERE})
        ON CONFLICT (event_id, trigger_id) DO NOTHING
        RETURNING id, seq
      )
      SELECT 'event' AS kind, id, seq FROM ev
      UNION ALL
      SELECT 'delivery' AS kind, id, seq FROM dl
      UNION ALL
      SELECT 'stale' AS kind, subscription_id AS id, NULL AS seq FROM stale`.execute(db)
    const eventIds = new Set<string>()
    const seqOf = new Map<string, number>()
    const stale: string[] = []
    for (const w of written)
      if (w.kind === 'event') eventIds.add(w.id)
      else if (w.kind === 'stale') stale.push(w.id)
      else seqOf.set(w.id, Number(w.seq))
    return {
      stale,
      eventIds,
      deliveries: deliveryRows.flatMap((r) => {
        const seq = seqOf.get(r.id)
        return seq === undefined ? [] : [{ ...r, seq }]
      }),
    }
  },
  async setMatched(db: Db, ids: string[], matched: number) {
    if (ids.length) await db.updateTable('events').set({ matched }).where('id', 'in', ids).execute()
  },
  async get(db: Db, workspaceId: string, id: string): Promise<EventRow | undefined> {
    const row = await db
      .selectFrom('events')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst()
    return row && readEvent(row)
  },
  /** The newest events that pass the filter (at most `limit`). */
  async list(db: Db, workspaceId: string, f: EventFilter & { limit: number }) {
    return (
      await filteredEvents(db, workspaceId, f)
        .orderBy('received_at', 'desc')
        .orderBy('seq', 'desc')
        .limit(f.limit)
        .execute()
    ).map(readEvent)
  },
  /**
   * Newest first, a page at a time (keyset on received_at then seq: the order of the workspace's
   * index, migration 0017). `beforeSeq`, the deprecated way to page (kept for one release), names
   * the last event of the previous page: the page goes on after it in the same order. (Taken as
   * "stored earlier", seq < beforeSeq, it skipped an event stored after that one but received
   * before it, as one kept raw and processed later is.) An event no longer there pages by seq.
   */
  async page(db: Db, workspaceId: string, f: EventFilter & PageRequest & { beforeSeq?: number }) {
    let q = filteredEvents(db, workspaceId, f)
    let cursor = f.cursor
    if (f.beforeSeq && !cursor) {
      const last = await db
        .selectFrom('events')
        .select('received_at')
        .where('seq', '=', f.beforeSeq)
        .where('workspace_id', '=', workspaceId)
        .executeTakeFirst()
      if (last) cursor = encodeCursor(BY_RECEIVED.of({ received_at: last.received_at, seq: f.beforeSeq }))
      else q = q.where('seq', '<', f.beforeSeq)
    }
    const request = { ...f, cursor }
    const { items, next } = pageOf(await keyset(q, BY_RECEIVED, request).execute(), BY_RECEIVED, request)
    return { items: items.map(readEvent), next }
  },
}

/** Which events a list shows. */
export interface EventFilter {
  /** Whose: an end user's id, '' for the workspace's own (the events' owner). */
  owner?: string
  connector?: string
  type?: string
  subscriptionId?: string
  connectionId?: string
}
function filteredEvents(db: Db, workspaceId: string, f: EventFilter) {
  let q = db.selectFrom(ofWorkspace(db, 'events', workspaceId)).selectAll()
  if (f.owner !== undefined) q = q.where('owner', '=', f.owner)
  if (f.connector) q = q.where('connector', '=', f.connector)
  if (f.type) q = q.where('type', '=', f.type)
  if (f.subscriptionId) q = q.where('subscription_id', '=', f.subscriptionId)
  if (f.connectionId) q = q.where('connection_id', '=', f.connectionId)
  return q
}

/** Which deliveries a list shows. */
export interface DeliveryFilter {
  agentId?: string
  status?: string
  eventId?: string
  triggerId?: string
}
function filteredDeliveries(db: Db, workspaceId: string, f: DeliveryFilter) {
  let q = db.selectFrom(ofWorkspace(db, 'deliveries', workspaceId)).selectAll()
  if (f.agentId) q = q.where('agent_id', '=', f.agentId)
  if (f.status) q = q.where('status', '=', f.status as DeliveriesTable['status'])
  if (f.eventId) q = q.where('event_id', '=', f.eventId)
  if (f.triggerId) q = q.where('trigger_id', '=', f.triggerId)
  return q
}
const BY_SEQ = bySeq<{ seq: number | string }>()
const BY_RECEIVED: PageKey<{ received_at: string; seq: number | string }> = {
  columns: [{ ref: 'received_at' }, { ref: 'seq', int: true }],
  of: (r) => [r.received_at, Number(r.seq)],
}

export const deliveries = {
  /**
   * Inserts deliveries; a repeat (same event and trigger) is ignored. Returns the new ones' ids.
   * Called in a transaction: on PostgreSQL a transaction lock makes transactions that store
   * deliveries commit one after another, so seqs become visible in order and a stream reading
   * "after seq N" never misses a lower seq committed later (SQLite has one writer anyway).
   */
  async insertMany(db: Db, rows: NewDelivery[]): Promise<string[]> {
    return (await deliveries.insertRows(db, rows)).map((r) => r.id)
  },
  /** As insertMany, returning the rows inserted (with their seq). */
  async insertRows(db: Db, rows: NewDelivery[]): Promise<DeliveryRow[]> {
    if (rows.length === 0) return []
    const inserted =
      db.getExecutor().adapter instanceof PostgresAdapter
        ? await insertDeliveriesInOrder(db, rows)
        : await DELIVERIES_INSERT.run(db, rows.map(writeDelivery))
    const seqOf = new Map(inserted.map((r) => [r.id, Number(r.seq)]))
    return rows.flatMap((r) => {
      const seq = seqOf.get(r.id)
      return seq === undefined ? [] : [{ ...r, seq }]
    })
  },
  async byIds(db: Db, ids: string[]): Promise<DeliveryRow[]> {
    if (ids.length === 0) return []
    return (await db.selectFrom('deliveries').selectAll().where('id', 'in', ids).execute()).map(readDelivery)
  },
  /** Deliveries with what their body needs of their event and trigger (SendableDelivery). */
  async sendable(db: Db, ids: string[]): Promise<SendableDelivery[]> {
    if (ids.length === 0) return []
    const rows = await db
      .selectFrom('deliveries as d')
      .innerJoin('events as e', 'e.id', 'd.event_id')
      .leftJoin('triggers as t', 't.id', 'd.trigger_id')
      .selectAll('d')
      .select([
        'e.type as e_type',
        'e.upstream_id as e_upstream_id',
        'e.occurred_at as e_occurred_at',
        'e.refs as e_refs',
        'e.data as e_data',
        'e.connector as e_connector',
        't.trigger_key as t_key',
      ])
      .where('d.id', 'in', ids)
      .execute()
    return rows.map(readDelivery)
  },
  async get(db: Db, workspaceId: string, id: string): Promise<DeliveryRow | undefined> {
    const row = await db
      .selectFrom('deliveries')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst()
    return row && readDelivery(row)
  },
  /** Pending deliveries whose next attempt is due. */
  async due(db: Db, nowIso: string, limit: number): Promise<DeliveryRow[]> {
    return (
      await db
        .selectFrom('deliveries')
        .selectAll()
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', nowIso)
        .orderBy('next_attempt_at')
        .limit(limit)
        .execute()
    ).map(readDelivery)
  },
  /**
   * Claims deliveries that are pending and due: each claimed one takes its next attempt number
   * and a lease (also its next attempt time, so another instance takes it over when the holder
   * dies). A tool delivery is claimed only once per attempt (`once`): an expired claim of one is
   * never taken over (its run may have acted upstream). Returns what was claimed.
   */
  async claim(
    db: Db,
    ids: string[],
    at: { now: string; leaseUntil: string; once?: boolean },
  ): Promise<Array<{ id: string; attempts: number }>> {
    if (ids.length === 0) return []
    let q = db
      .updateTable('deliveries')
      .set((eb) => ({
        attempts: eb('attempts', '+', 1),
        claimed_until: at.leaseUntil,
        next_attempt_at: at.leaseUntil,
      }))
      .where('id', 'in', ids)
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', at.now)
    if (at.once) q = q.where('claimed_until', 'is', null)
    return (await q.returning(['id', 'attempts']).execute()).map((r) => ({
      id: r.id,
      attempts: Number(r.attempts),
    }))
  },
  /**
   * Extends claims that are still as they were taken (the same attempt and lease: nobody took
   * them over meanwhile) to `leaseUntil`. Returns the ids extended.
   */
  async renew(
    db: Db,
    held: Array<{ id: string; attempts: number; claimedUntil: string }>,
    leaseUntil: string,
  ) {
    const renewed: string[] = []
    for (const group of byClaim(held)) {
      const rows = await db
        .updateTable('deliveries')
        .set({ claimed_until: leaseUntil, next_attempt_at: leaseUntil })
        .where('id', 'in', group.ids)
        .where('status', '=', 'pending')
        .where('attempts', '=', group.attempts)
        .where('claimed_until', '=', group.claimedUntil)
        .returning('id')
        .execute()
      renewed.push(...rows.map((r) => r.id))
    }
    return renewed
  },
  /**
   * Gives back claims still as they were taken, attempt unused: the deliveries are due at `now`
   * for any instance, as if never claimed.
   */
  async release(db: Db, held: Array<{ id: string; attempts: number; claimedUntil: string }>, now: string) {
    for (const group of byClaim(held))
      await db
        .updateTable('deliveries')
        .set((eb) => ({ attempts: eb('attempts', '-', 1), claimed_until: null, next_attempt_at: now }))
        .where('id', 'in', group.ids)
        .where('status', '=', 'pending')
        .where('attempts', '=', group.attempts)
        .where('claimed_until', '=', group.claimedUntil)
        .execute()
  },
  /**
   * Writes the outcome of a claimed attempt, only while the claim is still this attempt's (a
   * holder whose lease was taken over writes nothing). Returns whether it was written.
   */
  async settle(
    db: Db,
    ids: string[],
    attempt: number,
    values: Partial<Omit<DeliveriesTable, 'seq' | 'id' | 'attempts' | 'claimed_until' | 'target' | 'listed'>>,
  ): Promise<string[]> {
    if (ids.length === 0) return []
    const rows = await db
      .updateTable('deliveries')
      .set({ ...values, claimed_until: null })
      .where('id', 'in', ids)
      .where('attempts', '=', attempt)
      .where('status', '=', 'pending')
      .where('claimed_until', 'is not', null)
      .returning('id')
      .execute()
    return rows.map((r) => r.id)
  },
  /**
   * Writes the outcomes of claimed attempts and their log rows, each only while its claim is
   * still that attempt's (as `settle`). On PostgreSQL one statement for the whole batch (one
   * round trip, no transaction of its own); on SQLite one transaction, successes sharing a
   * statement per attempt number and answer.
   */
  async settleMany(db: Db, outcomes: SettledAttempt[]): Promise<void> {
    if (outcomes.length === 0) return
    if (db.getExecutor().adapter instanceof PostgresAdapter) {
      const col = <T>(f: (o: SettledAttempt) => T) => outcomes.map(f)
      await sql`
        WITH v AS (
          SELECT * FROM unnest(
            ${col((o) => o.id)}::text[], ${col((o) => o.attempt.attempt)}::int[],
            ${col((o) => o.update.status)}::text[], ${col((o) => o.update.last_status)}::int[],
            ${col((o) => o.update.last_error)}::text[], ${col((o) => o.update.delivered_at ?? null)}::text[],
            ${col((o) => o.update.next_attempt_at)}::text[], ${col((o) => o.attempt.at)}::text[],
            ${col((o) => o.attempt.status)}::int[], ${col((o) => o.attempt.error)}::text[],
            ${col((o) => o.attempt.duration_ms)}::int[]
          ) AS v(id, attempt, status, last_status, last_error, delivered_at, next_attempt_at,
                 at, attempt_status, attempt_error, duration_ms)
        ), settled AS (
          UPDATE deliveries d
          SET status = v.status, last_status = v.last_status, last_error = v.last_error,
              delivered_at = COALESCE(v.delivered_at, d.delivered_at),
              next_attempt_at = v.next_attempt_at, claimed_until = NULL
          FROM v
          WHERE d.id = v.id AND d.attempts = v.attempt AND d.status = 'pending' AND d.claimed_until IS NOT NULL
          RETURNING d.id, d.workspace_id
        )
        INSERT INTO delivery_attempts (delivery_id, attempt, at, status, error, duration_ms, workspace_id)
        SELECT v.id, v.attempt, v.at, v.attempt_status, v.attempt_error, v.duration_ms, settled.workspace_id
        FROM v JOIN settled ON settled.id = v.id
        ON CONFLICT (delivery_id, attempt) DO NOTHING`.execute(db)
      return
    }
    await db.transaction().execute(async (trx) => {
      const settle = async (ids: string[], attempt: number, values: SettledAttempt['update']) => {
        const mine = new Set(await deliveries.settle(trx, ids, attempt, values))
        await deliveries.addAttempts(
          trx,
          outcomes.filter((o) => mine.has(o.id) && o.attempt.attempt === attempt).map((o) => o.attempt),
        )
      }
      // Successes of a batch share one statement per attempt number; failures each carry their own schedule.
      const delivered = new Map<
        string,
        { update: SettledAttempt['update']; attempt: number; ids: string[] }
      >()
      for (const o of outcomes) {
        if (o.update.status === 'delivered') {
          const key = `${o.update.last_status}|${o.attempt.attempt}`
          const group = delivered.get(key) ?? { update: o.update, attempt: o.attempt.attempt, ids: [] }
          group.ids.push(o.id)
          delivered.set(key, group)
        } else await settle([o.id], o.attempt.attempt, o.update)
      }
      for (const group of delivered.values()) await settle(group.ids, group.attempt, group.update)
    })
  },
  async update(
    db: Db,
    id: string,
    values: Partial<Omit<DeliveriesTable, 'seq' | 'id' | 'target' | 'listed'>>,
  ) {
    await db.updateTable('deliveries').set(values).where('id', '=', id).execute()
  },
  /**
   * Newest first, a page at a time (keyset on seq). `beforeSeq` (the deliveries made earlier) is
   * the deprecated way to page, kept for one release.
   */
  async page(db: Db, workspaceId: string, f: DeliveryFilter & PageRequest & { beforeSeq?: number }) {
    let q = filteredDeliveries(db, workspaceId, f)
    if (f.beforeSeq) q = q.where('seq', '<', f.beforeSeq)
    const { items, next } = pageOf(await keyset(q, BY_SEQ, f).execute(), BY_SEQ, f)
    return { items: items.map(readDelivery), next }
  },
  /**
   * Those that pass the filter, newest first (or, `ascending`, the first after `afterSeq`); with
   * `throughSeq`, none after it.
   */
  async list(
    db: Db,
    workspaceId: string,
    f: DeliveryFilter & { afterSeq?: number; throughSeq?: number; limit: number; ascending?: boolean },
  ) {
    let q = filteredDeliveries(db, workspaceId, f)
    if (f.afterSeq !== undefined) q = q.where('seq', '>', f.afterSeq)
    if (f.throughSeq !== undefined) q = q.where('seq', '<=', f.throughSeq)
    return (
      await q
        .orderBy('seq', f.ascending ? 'asc' : 'desc')
        .limit(f.limit)
        .execute()
    ).map(readDelivery)
  },
  /** The seq of the workspace's newest delivery (0 when it has none). */
  async newestSeq(db: Db, workspaceId: string): Promise<number> {
    const row = await db
      .selectFrom(ofWorkspace(db, 'deliveries', workspaceId))
      .select('seq')
      .orderBy('seq', 'desc')
      .limit(1)
      .executeTakeFirst()
    return row ? Number(row.seq) : 0
  },
  /** Stored unlisted on SQLite, as events and deliveries are (migration 0020). */
  async addAttempts(db: Db, rows: NewAttempt[]) {
    if (rows.length === 0) return
    if (storedUnlisted(db)) await ATTEMPTS_INSERT.run(db, rows)
    else
      await db
        .insertInto('delivery_attempts')
        .values(rows.map((r) => ({ ...r, listed: 1 })))
        .onConflict((oc) => oc.columns(['delivery_id', 'attempt']).doNothing())
        .execute()
  },
  async attempts(db: Db, deliveryId: string) {
    return db
      .selectFrom('delivery_attempts')
      .select(['delivery_id', 'attempt', 'at', 'status', 'error', 'duration_ms'])
      .where('delivery_id', '=', deliveryId)
      .orderBy('attempt')
      .execute()
  },
}

/** Claims grouped by attempt and lease, for one statement each (claims taken together share both). */
function byClaim(held: Array<{ id: string; attempts: number; claimedUntil: string }>) {
  const groups = new Map<string, { attempts: number; claimedUntil: string; ids: string[] }>()
  for (const h of held) {
    const key = `${h.attempts}|${h.claimedUntil}`
    const group = groups.get(key) ?? { attempts: h.attempts, claimedUntil: h.claimedUntil, ids: [] }
    group.ids.push(h.id)
    groups.set(key, group)
  }
  return groups.values()
}

/**
 * PostgreSQL: a delivery for a trigger is inserted only while its trigger is still there, read by
 * the insert itself. Instances match events against the triggers they cached, and a trigger
 * deleted through another instance reaches their caches a few milliseconds after its DELETE has
 * answered; the insert's own snapshot is taken after that answer, so an event received then gets
 * no delivery for the deleted trigger on any instance. (Deliveries of Patchbay's notices name no
 * trigger.) On SQLite there is one process, whose cache is dropped before the DELETE answers.
 */
const TRIGGER_STILL_THERE = sql`(left(v.trigger_id, 4) <> 'trg_' OR EXISTS (SELECT 1 FROM triggers t WHERE t.id = v.trigger_id))`

/**
 * PostgreSQL: the deliveries' insert takes the lock that orders delivery commits itself, before it
 * draws any seq (the lock is the statement's one-time filter, evaluated before its first row), so
 * the lock costs no round trip of its own. One array per column rather than a parameter per value.
 */
async function insertDeliveriesInOrder(db: Db, given: NewDelivery[]) {
  const rows = given.map(writeDelivery)
  const col = <K extends keyof ReturnType<typeof writeDelivery>>(k: K) => rows.map((r) => r[k])
  const { rows: inserted } = await sql<{ id: string; seq: string }>`${prepared('deliveries_in_order')}
    INSERT INTO deliveries (id, workspace_id, agent_id, event_id, trigger_id, target, status, attempts,
      next_attempt_at, last_status, last_error, tool_run_id, created_at, delivered_at, claimed_until)
    SELECT * FROM unnest(
      ${col('id')}::text[], ${col('workspace_id')}::text[], ${col('agent_id')}::text[],
      ${col('event_id')}::text[], ${col('trigger_id')}::text[], ${col('target')}::text[],
      ${col('status')}::text[], ${col('attempts')}::int[], ${col('next_attempt_at')}::text[],
      ${col('last_status')}::int[], ${col('last_error')}::text[], ${col('tool_run_id')}::text[],
      ${col('created_at')}::text[], ${col('delivered_at')}::text[], ${col('claimed_until')}::text[])
      AS v(id, workspace_id, agent_id, event_id, trigger_id, target, status, attempts,
        next_attempt_at, last_status, last_error, tool_run_id, created_at, delivered_at, claimed_until)
    WHERE (SELECT true FROM (SELECT pg_advisory_xact_lock(${DELIVERY_ORDER_LOCK})) AS ordered)
      AND ${TRIGGER_STILL_THERE}
    ON CONFLICT (event_id, trigger_id) DO NOTHING
    RETURNING id, seq`.execute(db)
  return inserted
}
