// Lifecycle notices to the operator: what happens to the connections of a workspace (made,
// reconnected, lapsed, deleted) and to its triggers (paused, resumed) is POSTed to the workspace's
// notification URL, signed with the Standard Webhooks scheme and the workspace's own notification
// secret. Each notice is a row (visible in GET /v1/notices), sent at once and retried on the
// deliveries' schedule by whichever instance claims it when due; a replay sends it again.
import type { FastifyBaseLogger } from 'fastify'
import { type Dispatcher, request } from 'undici'
import { PatchbayError } from '../../kit/errors.ts'
import type { ConnectionRow } from '../../store/connections.ts'
import {
  type EndUsers,
  noticeBody,
  type OperatorNoticeRow,
  type OperatorNoticeRows,
} from '../../store/end-users.ts'
import { newId, nowIso } from '../../store/ids.ts'
import type { ConnectionLifecycle, ConnectionLifecycleEvent } from '../connections/connection-service.ts'
import { DEFAULT_RETRY_SCHEDULE_MS } from '../events/deliverer.ts'
import { signDelivery } from '../events/standard-webhooks.ts'
import type { EndUserSettings } from './end-user-settings.ts'

export const NOTICE_TYPES = [
  'connection.created',
  'connection.reconnected',
  'connection.lapsed',
  'connection.deleted',
  'trigger.paused',
  'trigger.resumed',
] as const
export type NoticeType = (typeof NOTICE_TYPES)[number]

/** The body POSTed (and shown by GET /v1/notices). */
export interface NoticeBody {
  /** The notice's id (also the `webhook-id` header): the same on every retry and replay. */
  id: string
  type: NoticeType
  timestamp: string
  data: {
    endUserId: string | null
    endUser: { id: string; displayName: string | null; email: string | null } | null
    connectionId: string
    connector: string
    accountName: string
    accountId: string
    status: 'active' | 'lapsed'
    /** Why (a lapse's, a pause's or a deletion's reason); null when there is nothing to say. */
    reason: string | null
    /** trigger.* only. */
    triggerId?: string
    agentId?: string
  }
}

export interface NoticeView {
  id: string
  type: string
  status: 'pending' | 'delivered' | 'failed'
  attempts: number
  nextAttemptAt: string | null
  lastStatus: number | null
  lastError: string | null
  createdAt: string
  deliveredAt: string | null
  body: NoticeBody
}

const SWEEP_MS = 1000
const LEASE_MS = 30_000

export class OperatorNotices implements ConnectionLifecycle {
  #rows: OperatorNoticeRows
  #settings: EndUserSettings
  #endUsers: EndUsers
  #dispatcher: Dispatcher
  #log: FastifyBaseLogger
  #timeoutMs: number
  readonly retryScheduleMs: number[]
  #timer: NodeJS.Timeout | undefined
  #sending = new Set<Promise<unknown>>()

  constructor(deps: {
    rows: OperatorNoticeRows
    settings: EndUserSettings
    endUsers: EndUsers
    /** The push dispatcher (egress-guarded, like deliveries). */
    dispatcher: Dispatcher
    log: FastifyBaseLogger
    retryScheduleMs?: number[]
    timeoutMs?: number
  }) {
    this.#rows = deps.rows
    this.#settings = deps.settings
    this.#endUsers = deps.endUsers
    this.#dispatcher = deps.dispatcher
    this.#log = deps.log
    this.retryScheduleMs = deps.retryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS
    this.#timeoutMs = deps.timeoutMs ?? 10_000
    // Due retries are claimed by one instance each; the timer does not hold the process open.
    this.#timer = setInterval(() => this.#track(this.sweep()), SWEEP_MS)
    this.#timer.unref()
  }

  connectionChanged(type: ConnectionLifecycleEvent, row: ConnectionRow, reason: string | null): void {
    this.#track(
      this.notify(row.workspace_id, type, {
        connectionId: row.id,
        connector: row.connector,
        accountName: row.account_name,
        accountId: row.account_id,
        status: row.status,
        reason,
        endUserId: row.end_user_id ?? null,
      }),
    )
  }

  /** trigger.paused / trigger.resumed, for whoever pauses triggers (with the trigger's connection). */
  triggerChanged(
    type: 'trigger.paused' | 'trigger.resumed',
    trigger: { id: string; agentId: string },
    connection: ConnectionRow,
    reason: string | null,
  ): void {
    this.#track(
      this.notify(connection.workspace_id, type, {
        connectionId: connection.id,
        connector: connection.connector,
        accountName: connection.account_name,
        accountId: connection.account_id,
        status: connection.status,
        reason,
        endUserId: connection.end_user_id ?? null,
        triggerId: trigger.id,
        agentId: trigger.agentId,
      }),
    )
  }

  /** Records the notice and sends it, when the workspace has a notification URL (else nothing). */
  async notify(
    workspaceId: string,
    type: NoticeType,
    data: Omit<NoticeBody['data'], 'endUser'>,
  ): Promise<OperatorNoticeRow | undefined> {
    const settings = await this.#settings.get(workspaceId)
    if (!settings.notificationUrl) return undefined
    const endUser = data.endUserId ? await this.#endUsers.get(workspaceId, data.endUserId) : undefined
    const id = newId('ntc')
    const body: NoticeBody = {
      id,
      type,
      timestamp: nowIso(),
      data: {
        ...data,
        endUser: endUser
          ? { id: endUser.id, displayName: endUser.display_name, email: endUser.email }
          : data.endUserId
            ? { id: data.endUserId, displayName: null, email: null }
            : null,
      },
    }
    const row = await this.#rows.insert({
      id,
      workspace_id: workspaceId,
      type,
      payload: JSON.stringify(body),
    })
    await this.#attemptClaimed(row)
    return row
  }

  async list(
    workspaceId: string,
    q: { cursor?: string; limit: number; type?: string; status?: string },
  ): Promise<{ notices: NoticeView[]; next: string | null }> {
    const page = await this.#rows.page(workspaceId, q, q)
    return { notices: page.items.map(noticeView), next: page.next }
  }

  async get(workspaceId: string, id: string): Promise<NoticeView> {
    const row = await this.#rows.get(workspaceId, id)
    if (!row) throw noticeNotFound(id)
    return noticeView(row)
  }

  /** Sends the notice again (same id and body), whatever became of it before. */
  async replay(workspaceId: string, id: string): Promise<NoticeView> {
    if (!(await this.#rows.requeue(workspaceId, id))) throw noticeNotFound(id)
    const row = (await this.#rows.get(workspaceId, id))!
    await this.#attemptClaimed(row)
    return this.get(workspaceId, id)
  }

  /** Sends the due retries this instance claims. */
  async sweep(): Promise<void> {
    const now = nowIso()
    for (const row of await this.#rows.due(now, 50)) await this.#attemptClaimed(row)
  }

  async close(): Promise<void> {
    clearInterval(this.#timer)
    this.#timer = undefined
    await Promise.allSettled([...this.#sending])
  }

  #track(p: Promise<unknown>) {
    const tracked = p
      .catch((err) => this.#log.error({ err }, 'sending a lifecycle notice failed'))
      .finally(() => this.#sending.delete(tracked))
    this.#sending.add(tracked)
  }

  async #attemptClaimed(row: OperatorNoticeRow): Promise<void> {
    if (!(await this.#rows.claim(row.id, nowIso(), new Date(Date.now() + LEASE_MS).toISOString()))) return
    let status: number | null = null
    let error: string | null = null
    try {
      const settings = await this.#settings.get(row.workspace_id)
      if (!settings.notificationUrl || !settings.notificationSecret)
        throw new Error('the workspace has no notification URL now')
      const headers = signDelivery(
        settings.notificationSecret,
        row.id,
        Math.floor(Date.now() / 1000),
        row.payload,
      )
      const res = await request(settings.notificationUrl, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'Patchbay-Webhooks/1' },
        body: row.payload,
        dispatcher: this.#dispatcher,
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
      })
      status = res.statusCode
      await res.body.dump()
      if (status < 200 || status >= 300) error = `the notification URL answered ${status}`
    } catch (err) {
      error = (err as Error).message
    }
    if (!error) {
      await this.#rows.settle(row.id, {
        status: 'delivered',
        next_attempt_at: null,
        last_status: status,
        last_error: null,
        delivered_at: nowIso(),
      })
      return
    }
    const delay = this.retryScheduleMs[row.attempts]
    await this.#rows.settle(row.id, {
      status: delay === undefined ? 'failed' : 'pending',
      next_attempt_at: delay === undefined ? null : new Date(Date.now() + delay).toISOString(),
      last_status: status,
      last_error: error,
    })
  }
}

function noticeView(row: OperatorNoticeRow): NoticeView {
  return {
    id: row.id,
    type: row.type,
    status: row.status,
    attempts: Number(row.attempts),
    nextAttemptAt: row.next_attempt_at,
    lastStatus: row.last_status,
    lastError: row.last_error,
    createdAt: row.created_at,
    deliveredAt: row.delivered_at,
    body: noticeBody(row) as NoticeBody,
  }
}

const noticeNotFound = (id: string) =>
  new PatchbayError('NOTICE_NOT_FOUND', `There is no notice "${id}" in this workspace.`, {
    hint: 'List notices with GET /v1/notices.',
  })
