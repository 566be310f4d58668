// What the API shows of a trigger: its definition's name and how it is delivered, its
// configuration and target, its upstream webhook (instant) or its schedule (polled).
import { triggerMechanism } from '../../kit/define.ts'
import type { SubscriptionRow } from '../../store/subscriptions.ts'
import type { TriggerRow } from '../../store/triggers.ts'
import type { Registry } from '../registry.ts'

export function triggerView(registry: Registry, row: TriggerRow, sub: SubscriptionRow | undefined) {
  const reg = registry.triggers.get(row.trigger_key)
  const config = row.config
  const delivery = reg ? triggerMechanism(reg.trigger, config) : null
  return {
    id: row.id,
    agentId: row.agent_id,
    trigger: row.trigger_key,
    name: reg?.trigger.name ?? row.trigger_key,
    instant: delivery?.kind === 'webhook',
    delivery,
    connectionId: row.connection_id,
    config,
    target: row.target,
    webhook: sub
      ? {
          id: sub.id,
          model: sub.model,
          upstreamHookId: sub.upstream_hook_id,
          status: sub.status,
          lastError: sub.last_error,
        }
      : null,
    poll: row.poll_interval_ms
      ? {
          intervalMs: row.poll_interval_ms,
          lastPollAt: row.last_poll_at,
          nextPollAt: row.next_poll_at,
          lastError: row.last_poll_error,
        }
      : null,
    createdAt: row.created_at,
  }
}
