// Agent keys: each acts as its agent only (its connections, its scope, its tools). Shown once.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Engine } from '../../engine/engine.ts'
import { AgentKeyView } from '../agent-schemas.ts'
import { nextCursor, pageQuery } from '../paging.ts'
import { errorResponses } from '../schemas.ts'

export const agentKeyRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    const params = z.object({ id: z.string().min(1).max(200) })
    app.post(
      '/v1/agents/:id/keys',
      {
        schema: {
          operationId: 'createAgentKey',
          tags: ['agents'],
          summary: 'Create a key that acts as this agent only; the key is in this response only',
          params,
          body: z
            .object({ name: z.string().max(200).optional().describe('A label, e.g. where the key is used.') })
            .strict()
            .default({}),
          response: {
            201: AgentKeyView.extend({
              key: z
                .string()
                .describe('The key in clear, shown once: send it as Authorization: Bearer <key>.'),
            }),
            ...errorResponses,
          },
        },
      },
      async (req, reply) => {
        return reply
          .code(201)
          .send(await engine.agents.createKey(req.caller.workspaceId, req.params.id, req.body))
      },
    )
    app.get(
      '/v1/agents/:id/keys',
      {
        schema: {
          operationId: 'listAgentKeys',
          tags: ['agents'],
          summary:
            "An agent's keys (never the keys themselves), revoked ones included, oldest first, a page at a time",
          params,
          querystring: z.object(pageQuery(200)),
          response: { 200: z.object({ keys: z.array(AgentKeyView), next: nextCursor }), ...errorResponses },
        },
      },
      async (req) => engine.agents.pageKeys(req.caller.workspaceId, req.params.id, req.query),
    )
    app.delete(
      '/v1/agents/:id/keys/:keyId',
      {
        schema: {
          operationId: 'revokeAgentKey',
          tags: ['agents'],
          summary: 'Revoke an agent key; it is refused from the next request on',
          params: params.extend({ keyId: z.string().min(1).max(200) }),
          response: { 204: z.null(), ...errorResponses },
        },
      },
      async (req, reply) => {
        await engine.agents.revokeKey(req.caller.workspaceId, req.params.id, req.params.keyId)
        return reply.code(204).send(null)
      },
    )
  }
