// "Why doesn't my trigger fire?" — the four causes the spec names, checked against the
// connection, the upstream webhook and the events that did arrive, each with what to do.
import type { Kysely } from 'kysely'
import { type NormalizedEvent, type TriggerDefinition, triggerMechanism } from '../../kit/define.ts'
import { PatchbayError } from '../../kit/errors.ts'
import { events } from '../../store/event-log.ts'
import type { Database } from '../../store/schema.ts'
import type { TriggerRow } from '../../store/triggers.ts'
import type { ConnectionService } from '../connections/connection-service.ts'
import type { Registry } from '../registry.ts'
import type { TriggerService } from './trigger-service.ts'

export interface DiagnosisCheck {
  cause: 'delivery' | 'connection_lapsed' | 'wrong_board' | 'event_type_mismatch' | 'polling_interval'
  /** What the check looks at, for people ("Connection", not "connection_lapsed" next to "ok"). */
  label?: string
  status: 'ok' | 'problem' | 'info'
  message: string
  fix?: string
}

/** Each check's name as a person reads it next to its status. */
const LABELS: Record<DiagnosisCheck['cause'], string> = {
  delivery: 'Delivery to the agent',
  connection_lapsed: 'Connection',
  wrong_board: 'Watched board or repository',
  event_type_mismatch: 'Event types',
  polling_interval: 'Polling',
}

const RECENT = 200

export async function diagnoseTrigger(
  deps: {
    db: Kysely<Database>
    registry: Registry
    connections: ConnectionService
    triggers: TriggerService
  },
  row: TriggerRow,
): Promise<{ triggerId: string; healthy: boolean; checks: Array<DiagnosisCheck & { label: string }> }> {
  const checks: DiagnosisCheck[] = []
  const reg = deps.registry.triggers.get(row.trigger_key)!
  const config = row.config
  let loaded = await deps.connections.load(row.workspace_id, row.connection_id).catch(() => null)
  const mechanism = triggerMechanism(reg.trigger, config)
  checks.push({
    cause: 'delivery',
    status: 'info',
    message: `${mechanism.kind === 'webhook' ? 'Instant' : 'Polled'}: delivered by ${mechanism.upstream}${mechanism.reason ? ` (${mechanism.reason})` : ''}.`,
  })

  // The webhook is probed upstream first: a 401 to the probe lapses the connection, and the
  // connection's check below reports what the probe found, not only what was stored.
  let probe: (DiagnosisCheck & { refused?: boolean }) | null = null
  if (mechanism.kind === 'webhook') {
    const wanted = reg.trigger.watch!(config, { id: loaded?.row.account_id ?? '' }).model
    const sub = row.subscription_id ? await deps.triggers.subscription(row.subscription_id) : undefined
    probe = await checkWatchedModel(deps, sub, wanted, loaded)
    if (probe.refused)
      loaded = await deps.connections.load(row.workspace_id, row.connection_id).catch(() => null)
  }

  if (!loaded) {
    checks.push({
      cause: 'connection_lapsed',
      status: 'problem',
      message: `The trigger's connection ${row.connection_id} no longer exists.`,
      fix: 'Delete the trigger and create it again on a current connection.',
    })
  } else if (loaded.row.status === 'lapsed') {
    checks.push({
      cause: 'connection_lapsed',
      status: 'problem',
      message: `The connection ${loaded.row.account_name} has lapsed: ${loaded.row.status_reason ?? 'the upstream refused its credentials'}.`,
      fix: `Reconnect it: the Reconnect button on the Connections page, or POST /v1/connections/${loaded.row.id}/reconnect (its webhooks are registered again).`,
    })
  } else {
    checks.push({
      cause: 'connection_lapsed',
      status: 'ok',
      message: `The connection ${loaded.row.account_name} is active.`,
    })
  }

  if (mechanism.kind === 'webhook') {
    const wanted = reg.trigger.watch!(config, { id: loaded?.row.account_id ?? '' }).model
    const sub = row.subscription_id ? await deps.triggers.subscription(row.subscription_id) : undefined
    const { refused: _, ...boardCheck } = probe!
    checks.push(boardCheck)

    if (sub) {
      const recent = await events.list(deps.db, row.workspace_id, {
        connectionId: row.connection_id,
        limit: RECENT,
      })
      const elsewhere = recent.filter((e) => e.model !== wanted)
      if (elsewhere.length > 0 && !recent.some((e) => e.subscription_id === sub.id)) {
        const models = [...new Set(elsewhere.map((e) => e.model))].slice(0, 3).join(', ')
        checks.push({
          cause: 'wrong_board',
          status: 'problem',
          message: `Events arrive on this connection for ${models}, but none for ${wanted}, the one this trigger watches.`,
          fix: 'If the changes you expect happen elsewhere, configure the trigger for that board (or repository).',
        })
      }
      const onModel = recent.filter((e) => e.subscription_id === sub.id)
      const mismatched = onModel.filter((e) => !reg.trigger.match!(toEvent(e), config))
      if (mismatched.length > 0) {
        // Each other trigger that would have fired; the one the latest change would have fired comes
        // first, since that is usually the change the user just made and expected to see.
        const others = new Map<string, { count: number; newest: number }>()
        // Triggers that fire for any event at all (an activity feed with no filter) say nothing
        // about which one was meant; a made-up event type tells them apart.
        const probe: NormalizedEvent = { id: '', type: 'patchbay:probe', occurredAt: '', refs: {}, data: {} }
        const candidates = reg.connector.triggers.filter(
          (t) => t.key !== reg.trigger.key && t.instant && t.match && !safeMatch(t.match, probe, config),
        )
        mismatched.forEach((e, index) => {
          for (const t of candidates)
            if (safeMatch(t.match!, toEvent(e), config)) {
              const o = others.get(t.name) ?? { count: 0, newest: index }
              others.set(t.name, { count: o.count + 1, newest: o.newest })
            }
        })
        if (others.size > 0) {
          const best = [...others.entries()]
            .sort((a, b) => a[1].newest - b[1].newest || b[1].count - a[1].count)
            .map(([name, o]) => [name, o.count] as const)
          const example = mismatched[0]
          checks.push({
            cause: 'event_type_mismatch',
            status: onModel.length === mismatched.length ? 'problem' : 'info',
            message: `${mismatched.length} of the last ${onModel.length} events on ${wanted} did not fire ${reg.trigger.name} (e.g. ${example.type} at ${example.occurred_at}); they would fire ${best.map(([n, c]) => `${n} (${c})`).join(', ')}.`,
            fix: `If those are the changes you want, use ${best[0][0]} instead of ${reg.trigger.name}.`,
          })
        } else {
          checks.push({
            cause: 'event_type_mismatch',
            status: 'ok',
            message: `Recent events on ${wanted} match the trigger or no trigger of this connector.`,
          })
        }
      } else {
        checks.push({
          cause: 'event_type_mismatch',
          status: onModel.length ? 'ok' : 'info',
          message: onModel.length
            ? `The last ${onModel.length} events on ${wanted} all fired the trigger.`
            : `No events have arrived for ${wanted} yet.`,
        })
      }
    }
  } else {
    const next = row.next_poll_at ? Date.parse(row.next_poll_at) : null
    const waiting = next !== null && next > Date.now()
    checks.push({
      cause: 'polling_interval',
      status: row.last_poll_error ? 'problem' : 'info',
      message: row.last_poll_error
        ? `The last poll (${row.last_poll_at}) failed: ${row.last_poll_error}.`
        : `Polled every ${row.poll_interval_ms} ms; last poll ${row.last_poll_at ?? 'not yet'}, next poll ${row.next_poll_at ?? 'now'}${waiting ? ' — the interval has not elapsed yet' : ''}.`,
      fix: row.last_poll_error
        ? 'Fix the cause above; the next poll retries by itself.'
        : waiting
          ? 'Wait for the next poll, or shorten pollIntervalMs.'
          : undefined,
    })
  }
  return {
    triggerId: row.id,
    healthy: !checks.some((c) => c.status === 'problem'),
    checks: checks.map((c) => ({ ...c, label: LABELS[c.cause] })),
  }
}

async function checkWatchedModel(
  deps: { registry: Registry; connections: ConnectionService; triggers: TriggerService },
  sub: Awaited<ReturnType<TriggerService['subscription']>>,
  wanted: string,
  loaded: Awaited<ReturnType<ConnectionService['load']>> | null,
): Promise<DiagnosisCheck & { refused?: boolean }> {
  if (!sub)
    return {
      cause: 'wrong_board',
      status: 'problem',
      message: 'The trigger has no upstream webhook.',
      fix: 'Delete the trigger and create it again.',
    }
  if (sub.status === 'missing')
    return {
      cause: 'wrong_board',
      status: 'problem',
      message: `The upstream webhook is missing: ${sub.last_error}.`,
      fix: `Reconnect the connection: POST /v1/connections/${sub.connection_id}/reconnect.`,
    }
  if (sub.status !== 'active')
    return {
      cause: 'wrong_board',
      status: 'problem',
      message: `The upstream webhook is in error: ${sub.last_error}.`,
      fix: 'Reconnect the connection, or restart Patchbay to register it again.',
    }
  if (sub.model !== wanted)
    return {
      cause: 'wrong_board',
      status: 'problem',
      message: `The webhook watches ${sub.model}, but the trigger is configured for ${wanted}.`,
      fix: 'Delete the trigger and create it again.',
    }
  if (!loaded || loaded.row.status === 'lapsed')
    return {
      cause: 'wrong_board',
      status: 'info',
      message: `The webhook is meant to watch ${wanted}; it cannot be checked upstream while the connection is not active.`,
    }
  const connector = deps.registry.connector(sub.connector)!
  try {
    // The connection's own client: a 401 here is the upstream refusing its credentials, which
    // lapses it (and the upstream has removed the webhooks made with them).
    const http = deps.connections.client(sub.connection_id, connector, loaded.credentials, { paced: true })
    const upstream = (await connector.webhooks!.list(http, sub.model)).find(
      (h) => h.id === sub.upstream_hook_id,
    )
    if (!upstream)
      return {
        cause: 'wrong_board',
        status: 'problem',
        message: `The upstream webhook ${sub.upstream_hook_id} no longer exists upstream.`,
        fix: 'Restart Patchbay or reconnect the connection: webhooks are reconciled and registered again.',
      }
    if (upstream.model !== wanted)
      return {
        cause: 'wrong_board',
        status: 'problem',
        message: `Upstream, the webhook watches ${upstream.model}, not the configured ${wanted}.`,
        fix: 'Delete the trigger and create it again for the right board.',
      }
    return {
      cause: 'wrong_board',
      status: 'ok',
      message: `The upstream webhook watches ${wanted}, the configured one.`,
    }
  } catch (err) {
    if (err instanceof PatchbayError && err.code === 'CONNECTION_LAPSED') {
      await deps.triggers.webhooks.markMissing(sub.id, sub.connection_id)
      return {
        cause: 'wrong_board',
        status: 'problem',
        refused: true,
        message: `Checking the webhook upstream was refused with 401: the connection's credentials were revoked or have expired, and the upstream removes the webhooks made with them. The connection is now lapsed and the webhook missing (${(err as Error).message}).`,
        fix: `Reconnect it: POST /v1/connections/${sub.connection_id}/reconnect (its webhooks are registered again).`,
      }
    }
    return {
      cause: 'wrong_board',
      status: 'info',
      message: `The upstream webhook could not be checked: ${(err as Error).message}`,
    }
  }
}

function toEvent(e: {
  upstream_id: string
  type: string
  occurred_at: string
  refs: NormalizedEvent['refs']
  data: unknown
}): NormalizedEvent {
  return { id: e.upstream_id, type: e.type, occurredAt: e.occurred_at, refs: e.refs, data: e.data }
}

function safeMatch(
  match: NonNullable<TriggerDefinition['match']>,
  e: NormalizedEvent,
  config: unknown,
): boolean {
  try {
    return match(e, config)
  } catch {
    return false
  }
}
