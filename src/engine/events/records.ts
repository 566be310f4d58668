// The rows an event becomes, built one way for every source (the recorder).
import type { NormalizedEvent } from '../../kit/define.ts'
import type {
  DeliveryRow,
  DeliveryTarget,
  NewDelivery,
  NewEvent,
  SendableDelivery,
} from '../../store/event-log.ts'
import { newId } from '../../store/ids.ts'
import type { TriggerTarget } from '../../store/triggers.ts'

export function eventRow(
  e: NormalizedEvent,
  where: {
    workspaceId: string
    connector: string
    subscriptionId: string
    connectionId: string
    /** The connection's end user, '' for the workspace's own (part of the event's identity). */
    owner: string
    model: string
    receivedAt: string
    now: string
    matched: number
  },
): NewEvent {
  return {
    id: newId('evt'),
    workspace_id: where.workspaceId,
    connector: where.connector,
    subscription_id: where.subscriptionId,
    connection_id: where.connectionId,
    model: where.model,
    owner: where.owner,
    upstream_id: e.id,
    type: e.type,
    refs: JSON.stringify(e.refs),
    data: JSON.stringify(e.data),
    occurred_at: e.occurredAt ?? where.now,
    received_at: where.receivedAt,
    matched: where.matched,
  }
}

/**
 * One event on its way to one agent. `target` is the trigger's: the agent (then `agentDelivery`,
 * its webhook or stream, decides) or one of its tools.
 */
export function deliveryRow(d: {
  workspaceId: string
  agentId: string
  triggerId: string
  eventId: string
  target: TriggerTarget
  /** The agent's delivery kind: `webhook` or `stream`. */
  agentDelivery: 'webhook' | 'stream'
  now: string
}): NewDelivery {
  const target: DeliveryTarget =
    d.target.type === 'tool' ? { type: 'tool', toolId: d.target.toolId } : { type: d.agentDelivery }
  // A pull delivery is delivered once it is in the agent's stream.
  const pull = target.type === 'stream'
  return {
    id: newId('dlv'),
    workspace_id: d.workspaceId,
    agent_id: d.agentId,
    event_id: d.eventId,
    trigger_id: d.triggerId,
    target,
    status: pull ? 'delivered' : 'pending',
    attempts: 0,
    next_attempt_at: pull ? null : d.now,
    last_status: null,
    last_error: null,
    tool_run_id: null,
    created_at: d.now,
    delivered_at: pull ? d.now : null,
    claimed_until: null,
  }
}

export type { SendableDelivery }

/** A delivery just written, with what its body needs of its event and trigger (no read back). */
export function sendable(
  delivery: DeliveryRow,
  event: NewEvent,
  triggerKey: string | null,
): SendableDelivery {
  return {
    ...delivery,
    e_type: event.type,
    e_upstream_id: event.upstream_id,
    e_occurred_at: event.occurred_at,
    e_refs: event.refs,
    e_data: event.data,
    e_connector: event.connector,
    t_key: triggerKey,
  }
}
