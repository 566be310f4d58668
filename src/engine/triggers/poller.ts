// Polled triggers (due-date reminders, notifications): each runs on its schedule with the
// connection's paced client, keeps a cursor, and gives each event a stable id, so a repeated
// poll emits nothing twice (the events table and the deliveries' unique key both hold).
//
// The schedule is the trigger's `next_poll_at` in the store. The sweep (one instance at a time,
// jobs/sweeps.ts) finds due polls and claims each by moving its `next_poll_at` forward by a
// lease, so each due poll runs once across all instances; a poll whose instance died is due
// again when the lease ends.
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import { type Clock, systemClock } from '../../kit/clock.ts'
import { PatchbayError } from '../../kit/errors.ts'
import { deliveries, events } from '../../store/event-log.ts'
import { isoAt } from '../../store/ids.ts'
import type { Database } from '../../store/schema.ts'
import type { Triggers } from '../../store/triggers.ts'
import type { PlacementChanges } from '../access/placement-changes.ts'
import type { ConnectionService } from '../connections/connection-service.ts'
import type { Deliverer } from '../events/deliverer.ts'
import { deliveryRow, eventRow } from '../events/records.ts'
import type { JobQueue } from '../jobs/job-queue.ts'
import type { Registry } from '../registry.ts'
import type { AgentDirectory } from './directories.ts'
import { connectionWithdrawn, eventOutsideScope } from './event-scope.ts'

export interface PollerOptions {
  db: Kysely<Database>
  triggers: Triggers
  registry: Registry
  connections: ConnectionService
  deliverer: Deliverer
  jobs: JobQueue
  agents: AgentDirectory
  log: FastifyBaseLogger
  clock?: Clock
  /** Told of every polled event's cards and lists (the scope guard's places may have moved). */
  placements: PlacementChanges
}

/** A poll that failed: what failed, and when the next one is due. */
export interface PollFailure {
  error: unknown
  nextPollAt: string
}

/** How long a claimed poll is held before another instance may run it. */
const POLL_LEASE_MS = 120_000

export class Poller {
  #o: PollerOptions
  #clock: Clock

  constructor(opts: PollerOptions) {
    this.#o = opts
    this.#clock = opts.clock ?? systemClock
    opts.jobs.work<string>('poll', { batchSize: 1, concurrency: 4 }, async ([id]) => {
      await this.poll(id)
    })
  }

  /** Due polls: each claimed here (no other instance runs it) and run. */
  async sweep(): Promise<number> {
    const now = this.#clock.now()
    const due = await this.#o.db
      .selectFrom('triggers')
      .select(['id', 'next_poll_at'])
      .where('poll_interval_ms', 'is not', null)
      .where((eb) => eb.or([eb('next_poll_at', '<=', isoAt(now)), eb('next_poll_at', 'is', null)]))
      .orderBy('next_poll_at')
      .limit(100)
      .execute()
    let n = 0
    for (const row of due) {
      const claimed = await this.#o.db
        .updateTable('triggers')
        .set({ next_poll_at: isoAt(now + POLL_LEASE_MS) })
        .where('id', '=', row.id)
        .where('next_poll_at', row.next_poll_at === null ? 'is' : '=', row.next_poll_at)
        .executeTakeFirst()
      if (Number(claimed.numUpdatedRows) === 0) continue
      this.#o.jobs.send('poll', row.id)
      n++
    }
    return n
  }

  /**
   * One poll of one trigger; also what "poll now" runs. A failed poll is recorded on the trigger
   * (its error and the next attempt) and returned as `failure`, so "poll now" can answer with it.
   */
  async poll(triggerId: string): Promise<{ events: number; failure?: PollFailure } | null> {
    const row = await this.#o.db
      .selectFrom('triggers')
      .selectAll()
      .where('id', '=', triggerId)
      .executeTakeFirst()
    if (!row?.poll_interval_ms) return null
    const reg = this.#o.registry.triggers.get(row.trigger_key)
    const now = new Date(this.#clock.now())
    const next = isoAt(now.getTime() + row.poll_interval_ms)
    let emitted = 0
    try {
      if (!reg?.trigger.poll) throw new Error(`${row.trigger_key} cannot be polled`)
      const loaded = await this.#o.connections.load(row.workspace_id, row.connection_id)
      if (loaded.row.status === 'lapsed')
        throw new PatchbayError('CONNECTION_LAPSED', 'the connection has lapsed; reconnect it')
      const connector = reg.connector
      const http = this.#o.connections.client(row.connection_id, connector, loaded.credentials, {
        paced: true,
      })
      // The agent's scope goes to the poll, for polls that read beyond one board; the agent as it
      // is now also decides which events it gets (a narrowed scope or a connection taken away).
      const agent = await this.#o.agents.get(row.workspace_id, row.agent_id)
      const withdrawn = connectionWithdrawn(agent, row.connection_id)
      if (withdrawn) throw new PatchbayError('CONNECTION_NOT_ALLOWED', withdrawn)
      const polled = await reg.trigger.poll(
        { http, cursor: row.poll_cursor ? JSON.parse(row.poll_cursor) : null, now, scope: agent.scope },
        JSON.parse(row.config),
      )
      // Every event polled tells where its card lies now; only those in scope are delivered.
      this.#o.placements.publish(connector.id, polled.events)
      const trigger = { def: reg.trigger, connectionId: row.connection_id }
      const result = { ...polled, events: polled.events.filter((e) => !eventOutsideScope(agent, trigger, e)) }
      const target = JSON.parse(row.target)
      const at = isoAt(this.#clock.now())
      const created = await this.#o.db.transaction().execute(async (trx) => {
        const stored = await events.upsertMany(
          trx,
          result.events.map((e) =>
            eventRow(e, {
              workspaceId: row.workspace_id,
              connector: connector.id,
              subscriptionId: `poll:${row.id}`,
              connectionId: row.connection_id,
              model: 'poll',
              receivedAt: at,
              now: at,
              matched: 1,
            }),
          ),
        )
        const rows = result.events.flatMap((e) => {
          const event = stored.get(`${connector.id}:${e.id}`)
          if (!event) return []
          return [
            deliveryRow({
              workspaceId: row.workspace_id,
              agentId: row.agent_id,
              triggerId: row.id,
              eventId: event.id,
              target,
              agentDelivery: agent.delivery.type,
              now: at,
            }),
          ]
        })
        // An event this trigger already delivered is left out by the (event, trigger) unique key.
        const inserted = await deliveries.insertMany(trx, rows)
        await trx
          .updateTable('triggers')
          .set({
            poll_cursor: JSON.stringify(result.cursor ?? null),
            last_poll_at: at,
            next_poll_at: next,
            last_poll_error: null,
          })
          .where('id', '=', row.id)
          .execute()
        return inserted
      })
      emitted = created.length
      if (created.length) await this.#o.deliverer.dispatchNew(created)
    } catch (err) {
      const message = (err as Error).message
      // The code leads the recorded error, so the trigger's state says what kind of failure it was.
      const recorded = err instanceof PatchbayError ? `${err.code}: ${message}` : message
      this.#o.log.warn({ trigger: row.id, err: message }, 'poll failed')
      await this.#o.triggers.updatePoll(row.id, {
        poll_cursor: row.poll_cursor,
        last_poll_at: isoAt(this.#clock.now()),
        next_poll_at: next,
        last_poll_error: recorded,
      })
      return { events: 0, failure: { error: err, nextPollAt: next } }
    }
    return { events: emitted }
  }
}
