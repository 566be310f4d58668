// The JSON an agent receives for a delivery — pushed (signed), streamed, replayed, shown by
// GET /v1/deliveries/{id} and the MCP delivery resources — as ONE schema: the pushed body is
// serialised from it (deliveryBody), the OpenAPI document's `webhooks` section and the
// `DeliveryPayload` component are generated from it (server/app.ts), and the SDK's
// `DeliveryPayload` type comes from that document (npm run api:types). test/engine/notices.test.ts
// and test/engine/triggers.test.ts validate real pushes against it. The keys of an event's `refs`
// come from the connectors list: each connector's place kinds and the refs it declares.
import { z } from 'zod'
import { connectors as shipped } from '../../connectors/index.ts'
import type { ConnectorDefinition, NormalizedEvent } from '../../kit/define.ts'
import { either } from '../access/places.ts'

/** What an event is about, as its connector names it (kit/define.ts NormalizedEvent.refs). */
export type EventRefs = NormalizedEvent['refs']

type RefsOf = Pick<ConnectorDefinition, 'places' | 'eventRefs'>

/**
 * The refs an event may carry, in the payload's order: each connector's place kinds (each
 * followed by its group) and the other refs it declares (`eventRefs`), then those of every
 * connector (`account`, `resource`, `unattributed`).
 */
function eventRefsSchema(connectors: readonly RefsOf[]): z.ZodType<EventRefs> {
  const named: Array<[string, string | undefined]> = []
  for (const c of connectors) {
    for (const p of c.places ?? []) {
      named.push([p.kind, p.ref])
      if (p.group) named.push([p.group.kind, p.group.ref])
    }
    for (const r of c.eventRefs ?? []) named.push([r.name, r.description])
  }
  const optional = (description: string | undefined) =>
    description === undefined ? z.string().optional() : z.string().optional().describe(description)
  const resources = connectors.flatMap((c) =>
    (c.eventRefs ?? []).filter((r) => r.resource).map((r) => `\`${r.name}\``),
  )
  return z
    .object({
      ...Object.fromEntries(named.map(([name, description]) => [name, optional(description)])),
      account: z.string().optional(),
      resource: z
        .string()
        .optional()
        .describe(
          resources.length > 0
            ? `The upstream resource's web address, where ${either(resources)} does not name it.`
            : "The upstream resource's web address.",
        ),
      unattributed: z.string().optional().describe('Why the place of the event could not be read.'),
    })
    .describe(
      `What the event is about (${named
        .slice(0, 4)
        .map(([name]) => name)
        .join(', ')} …).`,
    )
    .meta({ id: 'EventRefs' }) as unknown as z.ZodType<EventRefs>
}

function buildDeliveryPayload(refs: z.ZodType<EventRefs>) {
  return z
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
        triggerId: z
          .string()
          .describe('The trigger that matched (`notice:<agent id>` for a Patchbay notice).'),
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
          refs,
          data: z.unknown().describe("The event's data, as the trigger's catalog entry describes it."),
        }),
      }),
    })
    .describe(
      'The JSON an agent receives for a delivery: pushed (signed per Standard Webhooks), streamed or replayed.',
    )
    .meta({ id: 'DeliveryPayload' })
}

// Made once per list of connectors: the API document's components (registry ids) are the
// schemas made last, so a process that starts many services makes each list's schema once.
const made: Array<{ connectors: readonly RefsOf[]; schema: ReturnType<typeof buildDeliveryPayload> }> = []

/** The payload's schema for a list of connectors (their place kinds and refs name `refs`'s keys). */
export function deliveryPayloadSchema(
  connectors: readonly RefsOf[],
): ReturnType<typeof buildDeliveryPayload> {
  const found = made.find(
    (m) => m.connectors.length === connectors.length && m.connectors.every((c, i) => c === connectors[i]),
  )
  if (found) return found.schema
  const schema = buildDeliveryPayload(eventRefsSchema(connectors))
  made.push({ connectors: [...connectors], schema })
  return schema
}

/** The payload's schema for the connectors Patchbay ships (made as this module loads, as the other components are). */
export const DeliveryPayload = deliveryPayloadSchema(shipped)

export type DeliveryPayload = z.infer<typeof DeliveryPayload>

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
