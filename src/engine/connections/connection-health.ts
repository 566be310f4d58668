// A connection's health, told the truth about within a minute and at a bounded cost.
//
// - Checked: a connection that has triggers is asked upstream about its account (the connector's
//   cheapest account lookup) every `everyMs` (25 s by default, so a lapse is seen within a
//   minute), paced within its own budget (its paced client). The sweep that looks for due checks
//   is held by one instance at a time (jobs/sweeps.ts), and each check is claimed in its row
//   (`next_check_at` moved forward only if it is still as read), so N instances make one check.
//   A connection whose steps or polls proved it alive within the interval is not asked (alive_at,
//   written at most every ALIVE_WRITE_MS per instance from its clients' answers).
// - A refused credential (401: revoked, expired, account gone) marks it `lapsed` with the reason
//   and time (ConnectionService.markLapsed, from any caller that meets the 401: a check, a step, a
//   poll) and pauses its triggers (`paused`, with why) in the same commit; the instance whose
//   update made the change tells the agents that hold it: a signed `connection.lapsed` notice in
//   their delivery stream, through the one recorder (events/notices.ts) — and the operator of each
//   trigger paused (`trigger.paused` to the workspace's notification URL, end-users/operator-notices.ts).
// - An upstream that cannot be reached is no lapse: the check says so (check_error), is tried
//   again sooner, and the connection stays active.
// - Reconnecting (new credentials, in place) resumes its triggers (in the commit that stores the
//   credentials), registers its webhooks again (the engine event connectionReplaced) and sends
//   `connection.reconnected` (and the operator `trigger.resumed` for each trigger resumed).
import type { FastifyBaseLogger } from 'fastify'
import { type Clock, systemClock } from '../../kit/clock.ts'
import { PatchbayError } from '../../kit/errors.ts'
import type { Agents } from '../../store/agents.ts'
import type { ConnectionRow, Connections } from '../../store/connections.ts'
import { isoAt } from '../../store/ids.ts'
import type { TriggerRow } from '../../store/triggers.ts'
import type { Changes } from '../changes/changes.ts'
import type { EngineEventMap, EngineEvents } from '../engine-events.ts'
import { noticeSource } from '../events/notices.ts'
import type { Recorder } from '../events/recorder.ts'
import type { Registry } from '../registry.ts'
import type { ConnectionService } from './connection-service.ts'

/** How often a connection with triggers is checked upstream by default. */
export const DEFAULT_CONNECTION_CHECK_MS = 25_000
/** An unreachable upstream is asked again this much sooner than the interval (at least 5 s). */
const RETRY_DIVISOR = 3
/** How long a claimed check is held before another instance may run it. */
const CHECK_LEASE_MS = 60_000

/** Who is told of each trigger a lapse paused or a reconnect resumed (the operator's notices). */
export interface TriggerLifecycle {
  triggerChanged(
    type: 'trigger.paused' | 'trigger.resumed',
    trigger: { id: string; agentId: string },
    connection: ConnectionRow,
    reason: string | null,
  ): void
}

export class ConnectionHealth {
  #repo: Connections
  #agents: Agents
  #connections: ConnectionService
  #registry: Registry
  #recorder: Recorder
  #changes: Changes
  #log: FastifyBaseLogger
  #clock: Clock
  #everyMs: number
  #triggerLifecycle: TriggerLifecycle | undefined
  #running = new Set<Promise<void>>()
  /**
   * When this instance last received a verified webhook delivery through each connection whose
   * connector's webhooks prove its credentials (WebhookSupport.provesCredentials).
   */
  #heard = new Map<string, number>()

  constructor(deps: {
    repo: Connections
    agents: Agents
    connections: ConnectionService
    registry: Registry
    recorder: Recorder
    changes: Changes
    log: FastifyBaseLogger
    clock?: Clock
    everyMs?: number
    /** Lapses and reconnects, told after their commits: the agents hear of them from here. */
    bus: EngineEvents
    /** Told of each trigger paused or resumed here. */
    triggerLifecycle?: TriggerLifecycle
  }) {
    this.#triggerLifecycle = deps.triggerLifecycle
    this.#repo = deps.repo
    this.#agents = deps.agents
    this.#connections = deps.connections
    this.#registry = deps.registry
    this.#recorder = deps.recorder
    this.#changes = deps.changes
    this.#log = deps.log
    this.#clock = deps.clock ?? systemClock
    this.#everyMs = deps.everyMs ?? DEFAULT_CONNECTION_CHECK_MS
    // Whoever meets the refusal (a check, a step, a poll, a reconcile) lapses it; the instance
    // whose update made the change tells the rest.
    deps.bus.on('connectionLapsed', (lapse) => this.#lapsed(lapse))
    deps.bus.on('connectionReconnected', (e) => this.#reconnected(e.connectionId, e.resumed))
  }

  /**
   * A verified webhook delivery came through the connection, whose upstream would have removed the
   * webhook with revoked credentials: no need to ask the upstream about it while they keep coming.
   * (Issue 22: a thousand connections with triggers cost forty upstream requests and a hundred and
   * twenty statements a second in checks, though their deliveries showed them alive.)
   */
  heard(connectionId: string): void {
    // Re-set, the entry moves to the end: the first in the map is the longest unheard. At most
    // once in a tenth of the check interval (a second by default): a busy connection's deliveries
    // would each re-set it, and a mark that much older still keeps its check from being due.
    const now = this.#clock.now()
    const last = this.#heard.get(connectionId)
    if (last !== undefined && now - last < Math.min(1_000, this.#everyMs / 10)) return
    this.#heard.delete(connectionId)
    this.#heard.set(connectionId, now)
    if (this.#heard.size > 100_000) this.#heard.delete(this.#heard.keys().next().value!)
  }

  /**
   * Due checks: those heard from within the interval moved on together (one statement, nothing
   * asked upstream); the others each claimed (no other instance runs it) and run. Answers how many
   * were claimed or moved on.
   */
  async sweep(): Promise<number> {
    const now = this.#clock.now()
    let n = 0
    const heard: string[] = []
    let lastHeard = 0
    for (const due of await this.#repo.dueChecks(isoAt(now), 50)) {
      const at = this.#heard.get(due.id)
      if (at !== undefined && at > now - this.#everyMs) {
        heard.push(due.id)
        lastHeard = Math.max(lastHeard, at)
        continue
      }
      if (!(await this.#repo.claimCheck(due, isoAt(now + CHECK_LEASE_MS)))) continue
      n++
      const run = this.#check(due.id).catch((err) =>
        this.#log.error({ err, connection: due.id }, 'checking a connection failed'),
      )
      this.#running.add(run)
      void run.finally(() => this.#running.delete(run))
    }
    if (heard.length > 0) {
      await this.#repo.markHeard(heard, isoAt(lastHeard), isoAt(now + this.#everyMs))
      n += heard.length
    }
    return n
  }

  /** Waits for the checks under way (stopping). */
  async idle(): Promise<void> {
    await Promise.all(this.#running)
  }

  async #check(id: string): Promise<void> {
    const row = await this.#repo.getById(id)
    if (row?.status !== 'active') return
    const now = this.#clock.now()
    const next = isoAt(now + this.#everyMs)
    // Proved alive by its own steps or polls within the interval: nothing to ask.
    if (row.alive_at && Date.parse(row.alive_at) > now - this.#everyMs) {
      await this.#repo.markChecked(id, { next_check_at: next })
      return
    }
    const connector = this.#registry.connector(row.connector)
    if (!connector) return
    const loaded = await this.#connections.load(row.workspace_id, id)
    // Its own paced client: the check spends the connection's budget like a step, and a 401 lapses it.
    const http = this.#connections.client(id, connector, loaded.credentials, { paced: true })
    try {
      await (connector.accountCheck ?? connector.identify)(http, loaded.credentials)
      await this.#repo.markChecked(id, {
        next_check_at: next,
        checked_at: isoAt(this.#clock.now()),
        check_error: null,
        alive_at: isoAt(this.#clock.now()),
      })
    } catch (err) {
      // Refused: markLapsed has run (the client's onUnauthorized); the lapse is told there.
      if (err instanceof PatchbayError && err.code === 'CONNECTION_LAPSED') return
      const message = err instanceof Error ? err.message : String(err)
      const retry = Math.max(5_000, Math.round(this.#everyMs / RETRY_DIVISOR))
      await this.#repo.markChecked(id, {
        next_check_at: isoAt(this.#clock.now() + retry),
        checked_at: isoAt(this.#clock.now()),
        check_error: `${connector.name} could not be asked about the account (${message.replace(/\.$/, '')}); not a lapse: tried again at ${isoAt(this.#clock.now() + retry)}`,
      })
      this.#changes.publish('connections', [id])
    }
  }

  /**
   * The connection lapsed (this instance made the change, pausing its triggers in the same
   * commit): tell the other instances of the triggers, and its agents.
   */
  async #lapsed({ connectionId: id, paused, ...lapse }: EngineEventMap['connectionLapsed']): Promise<void> {
    this.#publishTriggers(paused)
    const row = await this.#repo.getById(id)
    if (!row) return
    for (const t of paused)
      this.#triggerLifecycle?.triggerChanged(
        'trigger.paused',
        { id: t.id, agentId: t.agent_id },
        row,
        t.paused_reason ?? lapse.reason,
      )
    await this.#notify(row, 'connection.lapsed', lapse.at, {
      reason: lapse.reason,
      pausedTriggers: paused.map((t) => t.id),
    })
  }

  /** The connection was reconnected from lapsed (its triggers resumed with it): tell its agents. */
  async #reconnected(id: string, resumed: TriggerRow[]): Promise<void> {
    this.#publishTriggers(resumed)
    const row = await this.#repo.getById(id)
    if (!row) return
    for (const t of resumed)
      this.#triggerLifecycle?.triggerChanged(
        'trigger.resumed',
        { id: t.id, agentId: t.agent_id },
        row,
        `connection ${id} (${row.account_name}) was reconnected`,
      )
    await this.#notify(row, 'connection.reconnected', isoAt(this.#clock.now()), {
      resumedTriggers: resumed.map((t) => t.id),
    })
  }

  #publishTriggers(rows: Array<{ subscription_id: string | null }>): void {
    const subs = [...new Set(rows.flatMap((r) => (r.subscription_id ? [r.subscription_id] : [])))]
    if (subs.length) this.#changes.publish('triggers', subs)
  }

  /** A signed notice to every agent that holds the connection (webhook push or stream). */
  async #notify(
    row: { id: string; workspace_id: string; connector: string; account_name: string },
    type: 'connection.lapsed' | 'connection.reconnected',
    at: string,
    extra: Record<string, unknown>,
  ): Promise<void> {
    const agentIds = (await this.#agents.list(row.workspace_id, { connectionId: row.id })).map((a) => a.id)
    if (agentIds.length === 0) return
    await this.#recorder.record(
      noticeSource({
        workspaceId: row.workspace_id,
        connectionId: row.id,
        type,
        agentIds,
        receivedAt: isoAt(this.#clock.now()),
      }),
      [
        {
          id: `${type}:${row.id}:${at}`,
          type,
          occurredAt: at,
          refs: {},
          data: {
            connectionId: row.id,
            connector: row.connector,
            accountName: row.account_name,
            at,
            ...extra,
          },
        },
      ],
    )
  }
}
