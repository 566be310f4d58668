// Events (stored once), deliveries (an event on its way to an agent), replay, and each agent's
// Server-Sent Events stream that resumes from Last-Event-ID.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Engine } from '../../engine/engine.ts'
import type { ParkedInboxRow } from '../../engine/events/history.ts'
import { deliveryPayloadSchema } from '../../engine/events/payload.ts'
import { requireOwnAgent } from '../authorize.ts'
import { DeliveryView, deliveryView, EventView, eventView } from '../event-views.ts'
import { deprecatedPaging, nextCursor, pageQuery } from '../paging.ts'
import { errorResponses } from '../schemas.ts'

const DeliveryAttempt = z
  .object({
    attempt: z.number(),
    at: z.string(),
    status: z.number().nullable().describe("The receiver's HTTP status, if it answered."),
    error: z.string().nullable(),
    durationMs: z.number(),
  })
  .meta({ id: 'DeliveryAttempt' })

const ParkedInboxView = z
  .object({
    seq: z.number().describe('Its place in the inbox; POST /v1/inbox/{seq}/retry processes it again.'),
    webhookId: z.string().describe('The webhook it came in on.'),
    connector: z.string(),
    deliveryId: z.string().describe("The upstream's delivery (or action) id."),
    receivedAt: z.string(),
    attempts: z.number().describe('Times processing it failed.'),
    error: z.string().nullable().describe('Why it was set aside.'),
  })
  .meta({ id: 'ParkedInboxRow' })

const parkedView = (r: ParkedInboxRow): z.infer<typeof ParkedInboxView> => ({
  seq: r.seq,
  webhookId: r.subscription_id,
  connector: r.connector,
  deliveryId: r.delivery_id,
  receivedAt: r.received_at,
  attempts: r.attempts,
  error: r.error,
})

const page = {
  ...pageQuery(500),
  before: z.coerce
    .number()
    .int()
    .positive()
    .optional()
    .meta({ deprecated: true })
    .describe('Deprecated (use cursor): the seq of the last item of the previous page.'),
}

export const eventRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    const history = engine.events.history

    app.get(
      '/v1/events',
      {
        schema: {
          operationId: 'listEvents',
          tags: ['events'],
          summary: 'Events received from upstreams, newest first',
          querystring: z.object({
            connector: z.string().optional(),
            type: z.string().optional(),
            connectionId: z.string().optional(),
            endUserId: z
              .string()
              .max(256)
              .optional()
              .describe("Only this end user's events (an empty value: the workspace's own)."),
            ...page,
          }),
          response: {
            200: z.object({ events: z.array(EventView), next: nextCursor }),
            ...errorResponses,
          },
        },
      },
      async (req, reply) => {
        const q = req.query
        const { items, next } = await history.listEvents(req.caller.workspaceId, {
          connector: q.connector,
          type: q.type,
          connectionId: q.connectionId,
          owner: q.endUserId,
          beforeSeq: q.before,
          cursor: q.cursor,
          limit: q.limit,
        })
        deprecatedPaging(reply, q.before !== undefined)
        return { events: items.map(eventView), next }
      },
    )
    app.get(
      '/v1/events/:id',
      {
        schema: {
          operationId: 'getEvent',
          tags: ['events'],
          summary: 'One event with its deliveries',
          params: z.object({ id: z.string() }),
          response: {
            200: EventView.extend({ deliveries: z.array(DeliveryView) }).meta({ id: 'EventWithDeliveries' }),
            ...errorResponses,
          },
        },
      },
      async (req) => {
        const { event: e, deliveries: ds } = await history.event(req.caller.workspaceId, req.params.id)
        return { ...eventView(e), deliveries: ds.map(deliveryView) }
      },
    )
    app.get(
      '/v1/deliveries',
      {
        schema: {
          operationId: 'listDeliveries',
          tags: ['events'],
          summary: 'Deliveries, newest first (an agent key sees its own)',
          querystring: z.object({
            agentId: z.string().optional(),
            status: z.enum(['pending', 'delivered', 'failed', 'dead']).optional(),
            eventId: z.string().optional(),
            triggerId: z.string().optional(),
            ...page,
          }),
          response: {
            200: z.object({ deliveries: z.array(DeliveryView), next: nextCursor }),
            ...errorResponses,
          },
        },
      },
      async (req, reply) => {
        const q = req.query
        const agentId = req.caller.kind === 'agentKey' ? req.caller.agentId! : q.agentId
        const { items, next } = await history.listDeliveries(req.caller.workspaceId, {
          agentId,
          status: q.status,
          eventId: q.eventId,
          triggerId: q.triggerId,
          beforeSeq: q.before,
          cursor: q.cursor,
          limit: q.limit,
        })
        deprecatedPaging(reply, q.before !== undefined)
        return { deliveries: items.map(deliveryView), next }
      },
    )
    app.get(
      '/v1/deliveries/:id',
      {
        schema: {
          operationId: 'getDelivery',
          tags: ['events'],
          summary: 'One delivery with its attempts and the payload the agent receives',
          params: z.object({ id: z.string() }),
          response: {
            200: DeliveryView.extend({
              attempts: z.array(DeliveryAttempt),
              // What the agent receives (the signed webhook body, or the stream message).
              payload: deliveryPayloadSchema(engine.registry.connectors),
            }).meta({ id: 'DeliveryWithAttempts' }),
            ...errorResponses,
          },
        },
      },
      async (req) => {
        const d = await history.delivery(req.caller.workspaceId, req.params.id)
        requireOwnAgent(req.caller, d.agent_id)
        const payloads = await history.payloadValues([d])
        return {
          ...deliveryView(d),
          attempts: (await history.attempts(d.id)).map((a) => ({
            attempt: a.attempt,
            at: a.at,
            status: a.status,
            error: a.error,
            durationMs: a.duration_ms,
          })),
          payload: payloads.get(d.id)!,
        }
      },
    )
    app.post(
      '/v1/deliveries/:id/replay',
      {
        schema: {
          operationId: 'replayDelivery',
          tags: ['events'],
          summary: 'Send a delivery again (same id, so receivers can deduplicate)',
          params: z.object({ id: z.string() }),
          response: { 202: DeliveryView, ...errorResponses },
        },
      },
      async (req, reply) => {
        const row = await engine.events.deliverer.replay(req.caller.workspaceId, req.params.id)
        return reply.code(202).send(deliveryView(row))
      },
    )

    app.get(
      '/v1/inbox',
      {
        schema: {
          operationId: 'listParkedInbox',
          tags: ['events'],
          summary:
            'Upstream deliveries set aside in the inbox (acknowledged, not processed), with why, newest first',
          querystring: z.object({ ...page }),
          response: {
            200: z.object({ parked: z.array(ParkedInboxView), next: nextCursor }),
            ...errorResponses,
          },
        },
      },
      async (req, reply) => {
        const { items, next } = await history.parkedInbox(req.caller.workspaceId, {
          limit: req.query.limit,
          cursor: req.query.cursor,
          beforeSeq: req.query.before,
        })
        deprecatedPaging(reply, req.query.before !== undefined)
        return { parked: items.map(parkedView), next }
      },
    )
    app.post(
      '/v1/inbox/:seq/retry',
      {
        schema: {
          operationId: 'retryParkedInbox',
          tags: ['events'],
          summary: 'Process an upstream delivery set aside in the inbox again (its tries start over)',
          params: z.object({ seq: z.coerce.number().int().positive() }),
          response: {
            202: z.object({ seq: z.number(), status: z.literal('pending') }),
            ...errorResponses,
          },
        },
      },
      async (req, reply) => {
        await engine.events.ingress.retryParked(req.caller.workspaceId, req.params.seq)
        return reply.code(202).send({ seq: req.params.seq, status: 'pending' as const })
      },
    )

    app.get(
      '/v1/delivery-backlog',
      {
        schema: {
          operationId: 'getDeliveryBacklog',
          tags: ['events'],
          summary: 'How far delivery to agents lags on the instance that answers (backpressure)',
          response: {
            200: z
              .object({
                backlog: z
                  .number()
                  .describe('Deliveries handed to this instance to send (or run) and not yet settled.'),
                oldestAgeMs: z
                  .number()
                  .describe('How long the oldest of them has waited, in milliseconds (0 when none).'),
                limit: z
                  .number()
                  .describe('PATCHBAY_DELIVERY_BACKLOG_LIMIT: at this backlog the ingress answers 503.'),
                holdingBack: z
                  .boolean()
                  .describe(
                    'Whether the ingress now answers upstreams that redeliver with 503 and Retry-After.',
                  ),
              })
              .meta({ id: 'DeliveryBacklog' }),
            ...errorResponses,
          },
        },
      },
      async (_req) => {
        return engine.events.ingress.backlog()
      },
    )

    app.get(
      '/v1/agents/:agentId/stream',
      {
        schema: {
          operationId: 'streamAgentEvents',
          tags: ['events'],
          summary: "The agent's event stream (Server-Sent Events); resumes after Last-Event-ID",
          params: z.object({ agentId: z.string() }),
          querystring: z.object({
            lastEventId: z.coerce
              .number()
              .int()
              .min(0)
              .optional()
              .describe('Same as the Last-Event-ID header.'),
          }),
          response: {
            200: {
              description:
                'Server-Sent Events: each `event: delivery` has `id: <seq>` and `data:` the delivery payload (as GET /v1/deliveries/{id} shows it).',
              content: { 'text/event-stream': { schema: z.string() } },
            },
            ...errorResponses,
          },
        },
      },
      async (req, reply) => {
        requireOwnAgent(req.caller, req.params.agentId)
        const agentId = req.params.agentId
        const agent = await engine.agents.get(req.caller.workspaceId, agentId)
        const header = req.headers['last-event-id']
        const last =
          Number(typeof header === 'string' && header !== '' ? header : (req.query.lastEventId ?? 0)) || 0

        reply.hijack()
        const res = reply.raw
        res.writeHead(200, {
          'content-type': 'text/event-stream',
          'cache-control': 'no-cache',
          connection: 'keep-alive',
          'x-accel-buffering': 'no',
        })
        res.write(`: stream of agent ${agent.id}\nretry: 2000\n\n`)
        // The engine reads the store in seq order, from `last` on, and again whenever any instance
        // stores deliveries for this agent.
        const stream = engine.events.streams.open({
          workspaceId: req.caller.workspaceId,
          agentId,
          afterSeq: last,
          send: (seq, body) => res.write(`id: ${seq}\nevent: delivery\ndata: ${body}\n\n`),
          onClose: () => res.end(),
        })
        const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), 15_000)
        req.raw.on('close', () => {
          stream.close()
          clearInterval(heartbeat)
        })
        await stream.caughtUp
      },
    )
  }
