// The rows an upstream happening becomes, built one way whether it came through a webhook (the
// pipeline) or a poll (the poller).
import type { NormalizedEvent } from '../../kit/define.ts'
import type { DeliveryRow, NewDelivery, NewEvent } from '../../store/event-log.ts'
import { newId } from '../../store/ids.ts'

export function eventRow(
  e: NormalizedEvent,
  where: {
    workspaceId: string
    connector: string
    subscriptionId: string
    connectionId: string
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
  target: { type: 'agent' } | { type: 'tool'; toolId: string }
  agentDelivery: string
  now: string
}): NewDelivery {
  const kind = d.target.type === 'tool' ? 'tool' : d.agentDelivery
  // A pull delivery is delivered once it is in the agent's stream.
  const pull = kind === 'stream'
  return {
    id: newId('dlv'),
    workspace_id: d.workspaceId,
    agent_id: d.agentId,
    event_id: d.eventId,
    trigger_id: d.triggerId,
    target: JSON.stringify(
      d.target.type === 'tool' ? { type: 'tool', toolId: d.target.toolId } : { type: kind },
    ),
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

/**
 * A delivery with what its send needs of its event and trigger: read back by a join for stored
 * ones (Deliverer.joined), or built from the rows just written (the pipeline), so a fresh
 * delivery is sent without being read again.
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
