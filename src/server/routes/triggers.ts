import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Engine } from '../../engine/engine.ts'
import type { PollFailure } from '../../engine/events/sources/poller.ts'
import { PatchbayError } from '../../kit/errors.ts'
import { requireOwnAgent } from '../authorize.ts'
import { nextCursor, pageQuery } from '../paging.ts'
import { errorResponses, TriggerMechanism } from '../schemas.ts'

const TriggerView = z
  .object({
    id: z.string(),
    agentId: z.string(),
    trigger: z.string().describe('Catalog id, e.g. taskboard.card_moved.'),
    name: z.string(),
    instant: z
      .boolean()
      .describe('Whether an upstream webhook delivers it as it happens (else it is polled).'),
    delivery: TriggerMechanism.nullable().describe('How the upstream delivers this trigger, and why.'),
    connectionId: z.string(),
    status: z
      .enum(['active', 'paused'])
      .describe('paused: its connection lapsed; reconnecting the connection resumes it.'),
    paused: z
      .object({ at: z.string(), reason: z.string() })
      .nullable()
      .describe('Since when and why it is paused; null while active.'),
    config: z.record(z.string(), z.unknown()),
    target: z
      .looseObject({
        type: z.enum(['agent', 'tool']),
        toolId: z.string().optional().describe('For a tool target: the tool each event runs.'),
      })
      .describe("What an event starts: the agent (its webhook or stream) or one of the agent's tools."),
    webhook: z
      .object({
        id: z.string(),
        model: z.string(),
        upstreamHookId: z.string().nullable(),
        status: z.string(),
        lastError: z.string().nullable(),
      })
      .nullable()
      .describe('The upstream webhook the trigger listens through (instant triggers).'),
    poll: z
      .object({
        intervalMs: z.number(),
        lastPollAt: z.string().nullable(),
        nextPollAt: z.string().nullable(),
        lastError: z.string().nullable(),
      })
      .nullable()
      .describe('The schedule (polled triggers).'),
    createdAt: z.string(),
  })
  .meta({ id: 'Trigger' })

export const triggerRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    const t = engine.events.triggers
    app.post(
      '/v1/agents/:agentId/triggers',
      {
        schema: {
          operationId: 'createTrigger',
          tags: ['triggers'],
          summary:
            'Subscribe an agent to an upstream event kind; an instant trigger registers the upstream webhook itself',
          params: z.object({ agentId: z.string() }),
          body: z.object({
            trigger: z.string().describe('A trigger id from the catalog, e.g. taskboard.card_moved.'),
            connectionId: z.string().describe("One of the agent's connections."),
            config: z
              .record(z.string(), z.unknown())
              .default({})
              .describe("The trigger's configuration (board, repository, filters) per its configSchema."),
            target: z
              .discriminatedUnion('type', [
                z.object({ type: z.literal('agent') }),
                z.object({ type: z.literal('tool'), toolId: z.string() }),
              ])
              .optional()
              .describe(
                'Where events go: the agent (its webhook or stream, the default) or one of its tools.',
              ),
            pollIntervalMs: z
              .number()
              .int()
              .positive()
              .optional()
              .describe('Polled triggers: how often to poll (default 60000).'),
          }),
          response: { 201: TriggerView, ...errorResponses },
        },
      },
      async (req, reply) => {
        return reply.code(201).send(await t.create(req.caller.workspaceId, req.params.agentId, req.body))
      },
    )
    app.get(
      '/v1/agents/:agentId/triggers',
      {
        schema: {
          operationId: 'listTriggers',
          tags: ['triggers'],
          summary: "An agent's triggers, oldest first, a page at a time",
          params: z.object({ agentId: z.string() }),
          querystring: z.object(pageQuery(200)),
          response: {
            200: z.object({ triggers: z.array(TriggerView), next: nextCursor }),
            ...errorResponses,
          },
        },
      },
      async (req) => {
        requireOwnAgent(req.caller, req.params.agentId)
        // An agent of another workspace is not found here, as every other object of it.
        await engine.agents.get(req.caller.workspaceId, req.params.agentId)
        return t.page(req.caller.workspaceId, req.params.agentId, req.query)
      },
    )
    app.get(
      '/v1/triggers/:id',
      {
        schema: {
          operationId: 'getTrigger',
          tags: ['triggers'],
          summary: 'One trigger with its webhook or poll state',
          params: z.object({ id: z.string() }),
          response: { 200: TriggerView, ...errorResponses },
        },
      },
      async (req) => {
        const view = await t.get(req.caller.workspaceId, req.params.id)
        requireOwnAgent(req.caller, view.agentId)
        return view
      },
    )
    app.delete(
      '/v1/triggers/:id',
      {
        schema: {
          operationId: 'deleteTrigger',
          tags: ['triggers'],
          summary:
            'Delete a trigger; the upstream webhook goes when its last trigger does (a refused cleanup is reported, never blocking)',
          params: z.object({ id: z.string() }),
          response: {
            200: z.object({
              deleted: z.literal(true),
              cleanup: z.object({ ok: z.boolean(), error: z.string().optional() }),
            }),
            ...errorResponses,
          },
        },
      },
      async (req) => {
        return t.delete(req.caller.workspaceId, req.params.id)
      },
    )
    app.get(
      '/v1/triggers/:id/diagnose',
      {
        schema: {
          operationId: 'diagnoseTrigger',
          tags: ['triggers'],
          summary:
            'Why a trigger does not fire: the connection, the board, the event type, the polling interval — and what to do',
          params: z.object({ id: z.string() }),
          response: {
            200: z
              .object({
                triggerId: z.string(),
                healthy: z.boolean(),
                checks: z.array(
                  z.object({
                    cause: z.string(),
                    label: z
                      .string()
                      .describe('What the check looks at, in words: Connection, Event types …'),
                    status: z.enum(['ok', 'problem', 'info']),
                    message: z.string(),
                    fix: z.string().optional(),
                  }),
                ),
              })
              .meta({ id: 'Diagnosis' }),
            ...errorResponses,
          },
        },
      },
      async (req) => {
        return engine.events.diagnose(req.caller.workspaceId, req.params.id)
      },
    )
    app.post(
      '/v1/triggers/:id/poll',
      {
        schema: {
          operationId: 'pollTrigger',
          tags: ['triggers'],
          summary: 'Poll a polled trigger now',
          description:
            'Answers how many events the poll delivered; a poll that failed answers with the failure’s own code and status (the upstream’s: UPSTREAM_ERROR, UPSTREAM_FORBIDDEN, RATE_LIMITED …), also recorded on the trigger (poll.lastError, poll.nextPollAt).',
          params: z.object({ id: z.string() }),
          response: { 200: z.object({ events: z.number() }), ...errorResponses },
        },
      },
      async (req) => {
        await t.requireRow(req.caller.workspaceId, req.params.id)
        const polled = await engine.events.poller.poll(req.params.id)
        if (polled?.failure) throw pollFailed(req.params.id, polled.failure)
        return { events: polled?.events ?? 0 }
      },
    )
  }

/**
 * A failed manual poll, answered with the failure's own code and status (an upstream's 5xx is
 * UPSTREAM_ERROR 502, a refused token UPSTREAM_FORBIDDEN …), saying when the next poll is due.
 */
function pollFailed(triggerId: string, failure: PollFailure): unknown {
  const err = failure.error
  if (!(err instanceof PatchbayError)) return err
  return new PatchbayError(
    err.code,
    `The poll of trigger ${triggerId} failed: ${err.message.replace(/\.+$/, '')}. The next poll is due at ${failure.nextPollAt}; GET /v1/triggers/${triggerId} shows the last failure.`,
    {
      status: err.status as never,
      hint: err.hint,
      retryAfterMs: err.retryAfterMs,
      upstream: err.upstream,
      details: err.details,
    },
  )
}
