// A connection's request budgets as the upstream reports them (code-host: core, search, graphql):
// what Patchbay last read from its responses' x-ratelimit-* headers, and the upstream's own view
// (GET /rate_limit, which costs nothing). The rate limit Patchbay paces a connection to is a
// different thing: /v1/connections/:id/rate-limit.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Engine } from '../../engine/engine.ts'
import type { RateBudgetState } from '../../kit/define.ts'
import { PatchbayError } from '../../kit/errors.ts'
import { errorResponses } from '../schemas.ts'

const Budget = z.object({
  limit: z.number(),
  remaining: z.number(),
  used: z.number().nullable(),
  resetAt: z.string().describe('When the window resets (ISO 8601).'),
  observedAt: z.string().optional().describe('When Patchbay last read it from a response.'),
})

const view = (b: RateBudgetState & { observedAt?: number }) => ({
  limit: b.limit,
  remaining: b.remaining,
  used: b.used ?? null,
  resetAt: new Date(b.resetAt).toISOString(),
  ...(b.observedAt ? { observedAt: new Date(b.observedAt).toISOString() } : {}),
})

export const rateLimitStatusRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      '/v1/connections/:id/rate-limit-status',
      {
        schema: {
          operationId: 'getRateLimitStatus',
          tags: ['connections'],
          summary:
            "The connection's upstream request budgets: as tracked from its responses' rate-limit headers, and as the upstream reports them now (code-host GET /rate_limit)",
          params: z.object({ id: z.string() }),
          querystring: z.object({
            upstream: z
              .enum(['true', 'false'])
              .default('true')
              .describe('false: only what was tracked, without asking the upstream.'),
          }),
          response: {
            200: z.object({
              connectionId: z.string(),
              connector: z.string(),
              supported: z.boolean().describe('Whether the connector reports request budgets at all.'),
              tracked: z
                .record(z.string(), Budget)
                .describe('Per resource (core, search, graphql), from responses.'),
              upstream: z
                .record(z.string(), Budget)
                .nullable()
                .describe("The upstream's own view, when asked."),
              upstreamError: z.object({ code: z.string(), message: z.string() }).optional(),
            }),
            ...errorResponses,
          },
        },
      },
      async (req) => {
        await engine.agents.assertConnectionVisible(req.caller, req.params.id)
        const loaded = await engine.connections.load(req.caller.workspaceId, req.params.id)
        const connector = engine.registry.connector(loaded.row.connector)!
        const support = connector.rateBudget
        const tracked = support
          ? Object.fromEntries(
              Object.entries(
                engine.rateBudgets.tracked(engine.clients.budgetKey(connector, loaded.credentials)),
              ).map(([k, b]) => [k, view(b)]),
            )
          : {}
        let upstream: Record<string, ReturnType<typeof view>> | null = null
        let upstreamError: { code: string; message: string } | undefined
        if (support?.status && req.query.upstream === 'true' && loaded.row.status === 'active') {
          const http = engine.connections.client(loaded.row.id, connector, loaded.credentials, {
            paced: false,
          })
          try {
            const got = await support.status(http)
            upstream = Object.fromEntries(Object.entries(got).map(([k, b]) => [k, view(b)]))
          } catch (err) {
            const e = err instanceof PatchbayError ? err : null
            upstreamError = {
              code: e?.code ?? 'UPSTREAM_ERROR',
              message: e?.message ?? 'The upstream could not be asked.',
            }
          }
        }
        return {
          connectionId: loaded.row.id,
          connector: connector.id,
          supported: Boolean(support),
          tracked,
          upstream,
          ...(upstreamError ? { upstreamError } : {}),
        }
      },
    )
  }
