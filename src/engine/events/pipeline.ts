// The inbox worker: each raw delivery is read by its connector, stored as events (once, by the
// upstream's id), matched against the triggers listening on its webhook, and turned into one
// delivery per match — a batch at a time, in one transaction, so a crash leaves either all of
// a batch or none of it, and the inbox rows it consumed are marked in the same commit.
import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { NormalizedEvent } from '../../kit/define.ts'
import { deliveries, events, inbox, type NewDelivery, type NewEvent } from '../../store/event-log.ts'
import { nowIso } from '../../store/ids.ts'
import type { Database } from '../../store/schema.ts'
import type { Registry } from '../registry.ts'
import type { AgentDirectory } from '../triggers/directories.ts'
import type { ListeningTrigger, TriggerService } from '../triggers/trigger-service.ts'
import type { Deliverer } from './deliverer.ts'

const BATCH = 500

export class Pipeline {
  #db: Kysely<Database>
  #registry: Registry
  #triggers: TriggerService
  #deliverer: Deliverer
  #log: FastifyBaseLogger
  agents: AgentDirectory | null = null

  constructor(deps: { db: Kysely<Database>; registry: Registry; triggers: TriggerService; deliverer: Deliverer; log: FastifyBaseLogger }) {
    this.#db = deps.db
    this.#registry = deps.registry
    this.#triggers = deps.triggers
    this.#deliverer = deps.deliverer
    this.#log = deps.log
  }

  /** Processes the inbox until it is empty. */
  async drain(): Promise<void> {
    for (;;) {
      const rows = await inbox.pending(this.#db, BATCH)
      if (rows.length === 0) return
      await this.#processBatch(rows)
      if (rows.length < BATCH) return
    }
  }

  async #processBatch(rows: Awaited<ReturnType<typeof inbox.pending>>): Promise<void> {
    const now = nowIso()
    const newEvents: NewEvent[] = []
    const perRow: Array<{ seq: number; subscriptionId: string; events: NormalizedEvent[] }> = []
    const failed: Array<{ seq: number; error: string }> = []
    const subs = new Map<string, Awaited<ReturnType<TriggerService['subscription']>>>()

    for (const row of rows) {
      let sub = subs.get(row.subscription_id)
      if (!subs.has(row.subscription_id)) {
        sub = await this.#triggers.subscription(row.subscription_id)
        subs.set(row.subscription_id, sub)
      }
      if (!sub) {
        failed.push({ seq: row.seq, error: 'its webhook was removed before it was processed' })
        continue
      }
      const connector = this.#registry.connector(sub.connector)
      try {
        const parsed = connector!.webhooks!.parse({ headers: JSON.parse(row.headers), rawBody: row.body, callbackUrl: '' })
        if ('ignore' in parsed) {
          perRow.push({ seq: row.seq, subscriptionId: sub.id, events: [] })
          continue
        }
        perRow.push({ seq: row.seq, subscriptionId: sub.id, events: parsed.events })
        for (const e of parsed.events) {
          newEvents.push({
            id: `evt_${randomUUID()}`,
            workspace_id: sub.workspace_id,
            connector: sub.connector,
            subscription_id: sub.id,
            connection_id: sub.connection_id,
            model: sub.model,
            upstream_id: e.id,
            type: e.type,
            refs: JSON.stringify(e.refs),
            data: JSON.stringify(e.data),
            occurred_at: e.occurredAt ?? now,
            received_at: row.received_at,
            matched: 0,
          })
        }
      } catch (err) {
        failed.push({ seq: row.seq, error: `could not be read: ${(err as Error).message}` })
      }
    }

    // Matching needs the triggers (cached) and the agents' delivery kinds before the commit.
    const listening = new Map<string, ListeningTrigger[]>()
    for (const r of perRow) if (!listening.has(r.subscriptionId)) listening.set(r.subscriptionId, await this.#triggers.listeningOn(r.subscriptionId))
    const deliveryKinds = new Map<string, string>()
    for (const list of listening.values())
      for (const t of list)
        if (t.target.type === 'agent' && !deliveryKinds.has(t.row.agent_id)) {
          const agent = await this.agents?.get(t.row.workspace_id, t.row.agent_id).catch(() => null)
          deliveryKinds.set(t.row.agent_id, agent?.delivery.type ?? 'webhook')
        }

    const created: NewDelivery[] = []
    await this.#db.transaction().execute(async (trx) => {
      const stored = await events.upsertMany(trx, newEvents)
      const matchedCount = new Map<string, number>()
      for (const r of perRow) {
        const sub = subs.get(r.subscriptionId)!
        for (const e of r.events) {
          const event = stored.get(`${sub.connector}:${e.id}`)
          if (!event) continue
          for (const t of listening.get(r.subscriptionId) ?? []) {
            let fires = false
            try {
              fires = t.def.match!(e, t.config)
            } catch (err) {
              this.#log.error({ trigger: t.row.id, err }, 'trigger match failed')
            }
            if (!fires) continue
            matchedCount.set(event.id, (matchedCount.get(event.id) ?? 0) + 1)
            const kind = t.target.type === 'tool' ? 'tool' : (deliveryKinds.get(t.row.agent_id) ?? 'webhook')
            const target = t.target.type === 'tool' ? { type: 'tool', toolId: t.target.toolId } : { type: kind }
            created.push({
              id: `dlv_${randomUUID()}`,
              workspace_id: t.row.workspace_id,
              agent_id: t.row.agent_id,
              event_id: event.id,
              trigger_id: t.row.id,
              target: JSON.stringify(target),
              // A pull delivery is delivered once it is in the agent's stream.
              status: kind === 'stream' ? 'delivered' : 'pending',
              attempts: 0,
              next_attempt_at: kind === 'stream' ? null : now,
              last_status: null,
              last_error: null,
              tool_run_id: null,
              created_at: now,
              delivered_at: kind === 'stream' ? now : null,
            })
          }
        }
      }
      await deliveries.insertMany(trx, created)
      const byCount = new Map<number, string[]>()
      for (const [id, n] of matchedCount) byCount.set(n, [...(byCount.get(n) ?? []), id])
      for (const [n, ids] of byCount) await events.setMatched(trx, ids, n)
      await inbox.mark(trx, perRow.map((r) => r.seq), 'done')
      for (const f of failed) await inbox.mark(trx, [f.seq], 'failed', f.error)
    })
    // Only deliveries this batch inserted are handed on (a repeat is ignored by the unique key).
    if (created.length) await this.#deliverer.dispatchNew(created.map((d) => d.id))
  }
}
