// How the API and MCP describe an event and a delivery: one view each (GET /v1/events,
// /v1/deliveries, the MCP delivery resources), from the rows the event history reads.
import { z } from 'zod'
import type { DeliveryRow, EventRow } from '../engine/events/history.ts'

export const EventView = z
  .object({
    id: z.string(),
    seq: z.number().describe('Order of arrival; pages and streams resume after a seq.'),
    connector: z.string(),
    type: z.string().describe('The upstream event kind, e.g. card.moved.'),
    upstreamId: z.string(),
    connectionId: z.string().describe('The connection it first came through.'),
    connectionIds: z
      .array(z.string())
      .describe(
        'Every connection it came through (two webhooks of one owner on one repository or board): stored once per owner.',
      ),
    endUserId: z
      .string()
      .nullable()
      .describe(
        "Whose it is: the end user whose connection heard it, null for the workspace's own. The same upstream change heard by two end users is two events.",
      ),
    model: z.string().describe('The watched upstream thing (board, repository …).'),
    refs: z.record(z.string(), z.unknown()).describe('What the event is about (board, card, repository …).'),
    data: z.unknown().describe("The event's data as the triggers describe it."),
    matchedTriggers: z.number(),
    occurredAt: z.string(),
    receivedAt: z.string(),
  })
  .meta({ id: 'Event' })

export const DeliveryView = z
  .object({
    id: z.string(),
    seq: z.number(),
    agentId: z.string(),
    eventId: z.string(),
    triggerId: z.string(),
    target: z
      .looseObject({
        type: z.enum(['webhook', 'stream', 'tool']),
        toolId: z.string().optional().describe('For a tool target: the tool the event runs.'),
      })
      .describe("Where it goes: the agent's webhook or stream, or one of its tools."),
    status: z.enum(['pending', 'delivered', 'failed', 'dead']),
    attempts: z.number(),
    nextAttemptAt: z.string().nullable(),
    lastStatus: z.number().nullable(),
    lastError: z.string().nullable(),
    toolRunId: z.string().nullable(),
    createdAt: z.string(),
    deliveredAt: z.string().nullable(),
  })
  .meta({ id: 'Delivery' })

export const eventView = (e: EventRow): z.infer<typeof EventView> => ({
  id: e.id,
  seq: Number(e.seq),
  connector: e.connector,
  type: e.type,
  upstreamId: e.upstream_id,
  connectionId: e.connection_id,
  connectionIds: [e.connection_id, ...e.via],
  endUserId: e.owner || null,
  model: e.model,
  refs: e.refs,
  data: e.data,
  matchedTriggers: e.matched,
  occurredAt: e.occurred_at,
  receivedAt: e.received_at,
})

export const deliveryView = (d: DeliveryRow): z.infer<typeof DeliveryView> => ({
  id: d.id,
  seq: Number(d.seq),
  agentId: d.agent_id,
  eventId: d.event_id,
  triggerId: d.trigger_id,
  target: d.target,
  status: d.status,
  attempts: d.attempts,
  nextAttemptAt: d.next_attempt_at,
  lastStatus: d.last_status,
  lastError: d.last_error,
  toolRunId: d.tool_run_id,
  createdAt: d.created_at,
  deliveredAt: d.delivered_at,
})
