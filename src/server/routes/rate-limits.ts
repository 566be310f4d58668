// A connection's own rate limit: the upstream account plan's limit, which paces the connection's
// ready-made steps in place of the connector's default (contact-data plans differ).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Engine } from '../../engine/engine.ts'
import { errorResponses } from '../schemas.ts'

const View = z.object({
  connectionId: z.string(),
  requests: z.number().nullable().describe('Requests allowed per window.'),
  perMs: z.number().nullable().describe('The window in milliseconds.'),
  source: z
    .enum(['connection', 'default', 'none'])
    .describe("connection: set here; default: the configuration's or the connector's; none: not paced."),
})

export const rateLimitRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    const params = z.object({ id: z.string() })
    app.get(
      '/v1/connections/:id/rate-limit',
      {
        schema: {
          operationId: 'getRateLimit',
          tags: ['connections'],
          summary: "The rate limit that paces the connection's ready-made steps",
          params,
          response: { 200: View, ...errorResponses },
        },
      },
      async (req) => {
        await engine.agents.assertConnectionVisible(req.caller, req.params.id)
        return engine.stepServices.rateLimit(req.caller.workspaceId, req.params.id)
      },
    )
    app.put(
      '/v1/connections/:id/rate-limit',
      {
        schema: {
          operationId: 'setRateLimit',
          tags: ['connections'],
          summary: "Set the connection's rate limit to its upstream plan's (e.g. 300 requests per 60000 ms)",
          params,
          body: z.object({
            requests: z.number().int().min(1).max(1_000_000_000).describe('Requests allowed per window.'),
            perMs: z
              .number()
              .int()
              .min(1)
              .max(86_400_000)
              .describe('The window in milliseconds, e.g. 60000.'),
          }),
          response: { 200: View, ...errorResponses },
        },
      },
      async (req) => {
        return engine.stepServices.setRateLimit(req.caller.workspaceId, req.params.id, req.body)
      },
    )
    app.delete(
      '/v1/connections/:id/rate-limit',
      {
        schema: {
          operationId: 'deleteRateLimit',
          tags: ['connections'],
          summary: "Remove the connection's own rate limit (back to the default)",
          params,
          response: { 204: z.null(), ...errorResponses },
        },
      },
      async (req, reply) => {
        await engine.stepServices.clearRateLimit(req.caller.workspaceId, req.params.id)
        return reply.code(204).send(null)
      },
    )
  }
