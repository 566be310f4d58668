// Polled triggers (due-date reminders, notifications): each runs on its schedule with the
// connection's paced client, keeps a cursor, and gives each event a stable id, so a repeated
// poll emits nothing twice (the events table and the deliveries' unique key both hold).
import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import { PatchbayError } from '../../kit/errors.ts'
import { deliveries, events, type NewDelivery } from '../../store/event-log.ts'
import { nowIso } from '../../store/ids.ts'
import type { Database } from '../../store/schema.ts'
import type { TriggerRow, Triggers } from '../../store/triggers.ts'
import type { ConnectionService } from '../connection-service.ts'
import type { Deliverer } from '../events/deliverer.ts'
import type { JobQueue } from '../job-queue.ts'
import type { Registry } from '../registry.ts'
import type { UpstreamClients } from '../upstream-clients.ts'
import type { AgentDirectory } from './directories.ts'

export interface PollerOptions {
  db: Kysely<Database>
  triggers: Triggers
  registry: Registry
  connections: ConnectionService
  clients: UpstreamClients
  deliverer: Deliverer
  jobs: JobQueue
  log: FastifyBaseLogger
}

export class Poller {
  agents: AgentDirectory | null = null
  #o: PollerOptions

  constructor(opts: PollerOptions) {
    this.#o = opts
    opts.jobs.work<string>('poll', { batchSize: 1, concurrency: 4 }, async ([id]) => {
      await this.poll(id)
    })
  }

  /** Schedules every polled trigger at its next poll time (on start). */
  async start(): Promise<void> {
    for (const row of await this.#o.triggers.polled()) this.schedule(row)
  }

  schedule(row: TriggerRow): void {
    const at = row.next_poll_at ? Date.parse(row.next_poll_at) : Date.now()
    this.#o.jobs.send('poll', row.id, {
      delayMs: Math.max(0, at - Date.now()),
      singletonKey: `poll:${row.id}`,
    })
  }

  /** One poll of one trigger; also what "poll now" runs. */
  async poll(triggerId: string): Promise<{ events: number } | null> {
    const row = await this.#o.db
      .selectFrom('triggers')
      .selectAll()
      .where('id', '=', triggerId)
      .executeTakeFirst()
    if (!row?.poll_interval_ms) return null
    const reg = this.#o.registry.triggers.get(row.trigger_key)
    const now = new Date()
    const next = new Date(now.getTime() + row.poll_interval_ms).toISOString()
    let emitted = 0
    try {
      if (!reg?.trigger.poll) throw new Error(`${row.trigger_key} cannot be polled`)
      const loaded = await this.#o.connections.load(row.workspace_id, row.connection_id)
      if (loaded.row.status === 'lapsed')
        throw new PatchbayError(409, 'CONNECTION_LAPSED', 'the connection has lapsed; reconnect it')
      const connector = reg.connector
      const http = this.#o.clients.create({
        connector,
        credentials: loaded.credentials,
        paced: true,
        storedConnection: true,
        onUnauthorized: (m) =>
          this.#o.connections.markLapsed(
            row.connection_id,
            `${connector.name} refused the credentials: ${m}`,
          ),
      })
      // The agent's scope goes to the poll, for polls that read beyond one board.
      const agent = await this.agents?.get(row.workspace_id, row.agent_id)
      const result = await reg.trigger.poll(
        { http, cursor: row.poll_cursor ? JSON.parse(row.poll_cursor) : null, now, scope: agent?.scope },
        JSON.parse(row.config),
      )
      const target = JSON.parse(row.target)
      const kind = target.type === 'tool' ? 'tool' : (agent?.delivery.type ?? 'webhook')
      const at = nowIso()
      const created: NewDelivery[] = []
      await this.#o.db.transaction().execute(async (trx) => {
        const stored = await events.upsertMany(
          trx,
          result.events.map((e) => ({
            id: `evt_${randomUUID()}`,
            workspace_id: row.workspace_id,
            connector: connector.id,
            subscription_id: `poll:${row.id}`,
            connection_id: row.connection_id,
            model: 'poll',
            upstream_id: e.id,
            type: e.type,
            refs: JSON.stringify(e.refs),
            data: JSON.stringify(e.data),
            occurred_at: e.occurredAt ?? at,
            received_at: at,
            matched: 1,
          })),
        )
        const already = new Set(
          (await deliveries.list(trx, row.workspace_id, { triggerId: row.id, limit: 10_000 })).map(
            (d) => d.event_id,
          ),
        )
        for (const e of result.events) {
          const event = stored.get(`${connector.id}:${e.id}`)
          if (!event || already.has(event.id)) continue
          created.push({
            id: `dlv_${randomUUID()}`,
            workspace_id: row.workspace_id,
            agent_id: row.agent_id,
            event_id: event.id,
            trigger_id: row.id,
            target: JSON.stringify(target.type === 'tool' ? target : { type: kind }),
            status: kind === 'stream' ? 'delivered' : 'pending',
            attempts: 0,
            next_attempt_at: kind === 'stream' ? null : at,
            last_status: null,
            last_error: null,
            tool_run_id: null,
            created_at: at,
            delivered_at: kind === 'stream' ? at : null,
          })
        }
        await deliveries.insertMany(trx, created)
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
      })
      emitted = created.length
      if (created.length) await this.#o.deliverer.dispatchNew(created.map((d) => d.id))
    } catch (err) {
      const message = (err as Error).message
      this.#o.log.warn({ trigger: row.id, err: message }, 'poll failed')
      await this.#o.triggers.updatePoll(row.id, {
        poll_cursor: row.poll_cursor,
        last_poll_at: nowIso(),
        next_poll_at: next,
        last_poll_error: message,
      })
    }
    this.#o.jobs.send('poll', row.id, { delayMs: row.poll_interval_ms, singletonKey: `poll:${row.id}` })
    return { events: emitted }
  }
}
