// The JSON an agent receives for a delivery — pushed (signed), streamed, replayed, shown by
// GET /v1/deliveries/{id} and the MCP delivery resources — as ONE schema: the pushed body is
// serialised from it (deliveryBody), the OpenAPI document's `webhooks` section and the
// `DeliveryPayload` component are generated from it (server/app.ts), and the SDK's
// `DeliveryPayload` type comes from that document (npm run api:types). test/engine/notices.test.ts
// and test/engine/triggers.test.ts validate real pushes against it.
import { z } from 'zod'
import type { NormalizedEvent } from '../../kit/define.ts'

/** What an event is about, as its connector names it (kit/define.ts NormalizedEvent.refs). */
export const EventRefs = z
  .object({
    board: z.string().optional(),
    list: z.string().optional(),
    card: z.string().optional(),
    repository: z.string().optional().describe('owner/name'),
    owner: z.string().optional().describe('The account a thing lying in no repository belongs to.'),
    account: z.string().optional(),
    resource: z
      .string()
      .optional()
      .describe("The upstream resource's web address, where `card` does not name it."),
    unattributed: z.string().optional().describe('Why the place of the event could not be read.'),
  })
  .describe('What the event is about (board, list, card, repository …).')
  .meta({ id: 'EventRefs' })

export const DeliveryPayload = z
  .object({
    id: z.string().describe('The delivery id (also the webhook-id header): deduplicate by it.'),
    type: z
      .string()
      .describe(
        "The trigger's catalog id (`taskboard.new_card`), a Patchbay notice's type (`connection.lapsed`), or `event` when the trigger was deleted since.",
      ),
    timestamp: z.string().describe('When the delivery was made (ISO 8601).'),
    data: z.object({
      agentId: z.string(),
      triggerId: z.string().describe('The trigger that matched (`notice:<agent id>` for a Patchbay notice).'),
      trigger: z
        .string()
        .nullable()
        .describe("The trigger's catalog id; null for a notice or a deleted trigger."),
      event: z.object({
        id: z.string().describe("Patchbay's event id (GET /v1/events/{id})."),
        connector: z.string().describe('The connector the event is of (`patchbay` for a notice).'),
        type: z.string().describe("The upstream's event type (`updateCard`, `pull_request.closed` …)."),
        upstreamId: z.string().describe("The upstream's own id of the happening."),
        occurredAt: z.string(),
        refs: EventRefs,
        data: z.unknown().describe("The event's data, as the trigger's catalog entry describes it."),
      }),
    }),
  })
  .describe(
    'The JSON an agent receives for a delivery: pushed (signed per Standard Webhooks), streamed or replayed.',
  )
  .meta({ id: 'DeliveryPayload' })

export type DeliveryPayload = z.infer<typeof DeliveryPayload>

// The refs the schema declares are refs connectors set. An event's refs are keyed by its
// connector's place kinds (kit/define.ts), so a connector may name more (its own place kind):
// they reach the agent as they are (the body is spliced from the stored JSON, below).
type Within<A, B> = [A] extends [B] ? true : never
const _refsAgree: Within<z.infer<typeof EventRefs>, NormalizedEvent['refs']> = true
void _refsAgree

/**
 * A payload's fields, with the event's refs and data as the JSON text they are stored as: they
 * are spliced in as they are rather than parsed and written again for every delivery.
 */
export type PayloadFields = Omit<DeliveryPayload, 'data'> & {
  data: Omit<DeliveryPayload['data'], 'event'> & {
    event: Omit<DeliveryPayload['data']['event'], 'refs' | 'data'> & { refsJson: string; dataJson: string }
  }
}

/** The body an agent receives, serialised in the schema's order. */
export function deliveryBody(p: PayloadFields): string {
  const j = JSON.stringify
  const { data } = p
  const { event: e } = data
  return (
    `{"id":${j(p.id)},"type":${j(p.type)},"timestamp":${j(p.timestamp)},` +
    `"data":{"agentId":${j(data.agentId)},"triggerId":${j(data.triggerId)},"trigger":${j(data.trigger)},` +
    `"event":{"id":${j(e.id)},"connector":${j(e.connector)},"type":${j(e.type)},` +
    `"upstreamId":${j(e.upstreamId)},"occurredAt":${j(e.occurredAt)},` +
    `"refs":${e.refsJson},"data":${e.dataJson}}}}`
  )
}
