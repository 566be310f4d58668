// The polled source (due-date reminders, notifications): each polled trigger runs on its
// schedule with the connection's paced client, keeps a cursor, and gives each event a stable id,
// so a repeated poll emits nothing twice (the events table and the deliveries' unique key both
// hold). What a poll finds is recorded like any other events (recorder.ts), its trigger the one
// listener, with the trigger's new cursor in the same commit.
//
// The schedule is the trigger's `next_poll_at` in the store. The sweep (one instance at a time,
// jobs/sweeps.ts) finds due polls and claims each by moving its `next_poll_at` forward by a
// lease, so each due poll runs once across all instances; a poll whose instance died is due
// again when the lease ends.

import type { FastifyBaseLogger } from 'fastify'
import { type Clock, systemClock } from '../../../kit/clock.ts'
import type { TriggerDefinition } from '../../../kit/define.ts'
import { PatchbayError } from '../../../kit/errors.ts'
import { activeContext, inSpan, tracingOn } from '../../../kit/tracing.ts'
import { isoAt } from '../../../store/ids.ts'
import type { TriggerRow, Triggers } from '../../../store/triggers.ts'
import type { AgentService } from '../../agents/agent-service.ts'
import type { ConnectionService } from '../../connections/connection-service.ts'
import type { JobQueue } from '../../jobs/job-queue.ts'
import type { Registry } from '../../registry.ts'
import { connectionWithdrawn } from '../event-scope.ts'
import { type Recorder, triggerListener } from '../recorder.ts'

/**
 * The trigger's stored cursor as its `cursor` schema reads it; one it does not read (left by an
 * older version) is dropped, so the poll is a first one.
 */
function readCursor(def: TriggerDefinition, row: TriggerRow): unknown {
  if (row.poll_cursor === null || !def.cursor) return row.poll_cursor
  const read = def.cursor.safeParse(row.poll_cursor)
  return read.success ? read.data : null
}

/** A poll that failed: what failed, and when the next one is due. */
export interface PollFailure {
  error: unknown
  nextPollAt: string
}

/** How long a claimed poll is held before another instance may run it. */
const POLL_LEASE_MS = 120_000

export class Poller {
  #triggers: Triggers
  #registry: Registry
  #connections: ConnectionService
  #agents: Pick<AgentService, 'get'>
  #recorder: Recorder
  #jobs: JobQueue
  #log: FastifyBaseLogger
  #clock: Clock

  constructor(deps: {
    triggers: Triggers
    registry: Registry
    connections: ConnectionService
    /** The agent as it is now: its scope goes to the poll. */
    agents: Pick<AgentService, 'get'>
    recorder: Recorder
    jobs: JobQueue
    log: FastifyBaseLogger
    clock?: Clock
  }) {
    this.#triggers = deps.triggers
    this.#registry = deps.registry
    this.#connections = deps.connections
    this.#agents = deps.agents
    this.#recorder = deps.recorder
    this.#jobs = deps.jobs
    this.#log = deps.log
    this.#clock = deps.clock ?? systemClock
    this.#jobs.work<string>('poll', { batchSize: 1, concurrency: 4 }, async ([id]) => {
      await this.poll(id)
    })
  }

  /** Due polls: each claimed here (no other instance runs it) and run. */
  async sweep(): Promise<number> {
    const now = this.#clock.now()
    let n = 0
    for (const row of await this.#triggers.duePolls(isoAt(now), 100)) {
      if (!(await this.#triggers.claimPoll(row, isoAt(now + POLL_LEASE_MS)))) continue
      this.#jobs.send('poll', row.id)
      n++
    }
    return n
  }

  /**
   * One poll of one trigger; also what "poll now" runs. A failed poll is recorded on the trigger
   * (its error, led by its code, and the next attempt) and returned as `failure`, so "poll now"
   * can answer with it.
   */
  async poll(triggerId: string): Promise<{ events: number; failure?: PollFailure } | null> {
    const row = await this.#triggers.byId(triggerId)
    if (!row?.poll_interval_ms) return null
    const now = new Date(this.#clock.now())
    const next = isoAt(now.getTime() + row.poll_interval_ms)
    try {
      const events = tracingOn()
        ? await inSpan(
            `poll ${row.trigger_key}`,
            {
              'patchbay.workspace.id': row.workspace_id,
              'patchbay.trigger.id': row.id,
              'patchbay.connection.id': row.connection_id,
            },
            () => this.#pollOnce(row, now, next),
            { parent: null },
          )
        : await this.#pollOnce(row, now, next)
      return { events }
    } catch (err) {
      const message = (err as Error).message
      const recorded = err instanceof PatchbayError ? `${err.code}: ${message}` : message
      this.#log.warn({ trigger: row.id, err: message }, 'poll failed')
      await this.#triggers.updatePoll(row.id, {
        poll_cursor: row.poll_cursor,
        last_poll_at: isoAt(this.#clock.now()),
        next_poll_at: next,
        last_poll_error: recorded,
      })
      return { events: 0, failure: { error: err, nextPollAt: next } }
    }
  }

  /** Polls the trigger and records what it found; returns how many deliveries it made. */
  async #pollOnce(row: TriggerRow, now: Date, next: string): Promise<number> {
    const reg = this.#registry.triggers.get(row.trigger_key)
    if (!reg?.trigger.poll) throw new Error(`${row.trigger_key} cannot be polled`)
    const loaded = await this.#connections.load(row.workspace_id, row.connection_id)
    if (loaded.row.status === 'lapsed')
      throw new PatchbayError('CONNECTION_LAPSED', 'the connection has lapsed; reconnect it')
    const connector = reg.connector
    const http = this.#connections.client(row.connection_id, connector, loaded.credentials, { paced: true })
    // The agent's scope goes to the poll, for polls that read beyond one place; the recorder
    // decides with the agent as it is then which events it gets.
    const agent = await this.#agents.get(row.workspace_id, row.agent_id)
    const withdrawn = connectionWithdrawn(agent, row.connection_id)
    if (withdrawn) throw new PatchbayError('CONNECTION_NOT_ALLOWED', withdrawn)
    const config = row.config
    const polled = await reg.trigger.poll(
      { http, cursor: readCursor(reg.trigger, row), now, scope: agent.scope },
      config,
    )
    const at = isoAt(this.#clock.now())
    const recorded = await this.#recorder.record(
      {
        workspaceId: row.workspace_id,
        connector: connector.id,
        connectionId: row.connection_id,
        subscriptionId: `poll:${row.id}`,
        model: 'poll',
        receivedAt: at,
        owner: loaded.row.end_user_id ?? '',
        listeners: [triggerListener(row, reg.trigger, row.target, config, 'always')],
        keepUnheard: false,
        trace: activeContext(),
      },
      polled.events,
      {
        inCommit: (trx) =>
          this.#triggers.updatePoll(
            row.id,
            {
              poll_cursor: polled.cursor ?? null,
              last_poll_at: at,
              next_poll_at: next,
              last_poll_error: null,
            },
            trx,
          ),
      },
    )
    return recorded.deliveries
  }
}
