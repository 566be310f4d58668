// POST /v1/connectors/:connector/token-url: the address of the upstream page where a user
// approves a token for their API key (the task-board's {auth_url}/1/authorize?…), for connecting
// with an API key plus token.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Engine } from '../../engine/engine.ts'
import { errorResponses } from '../schemas.ts'

export const tokenPageRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    app.post(
      '/v1/connectors/:connector/token-url',
      {
        schema: {
          operationId: 'createTokenUrl',
          tags: ['connections'],
          summary:
            'The address where a user approves a token for their API key (open it logged in, approve, copy the token)',
          params: z.object({ connector: z.string().describe('taskboard') }),
          body: z
            .record(z.string(), z.unknown())
            .describe(
              'taskboard: {"key", "name"?, "expiration"?: 1hour|1day|30days|never, "scope"?: "read,write"}',
            ),
          response: {
            200: z.object({ url: z.string().describe('Open this while logged in to the upstream.') }),
            ...errorResponses,
          },
        },
      },
      async (req) => engine.pages.tokenPageUrl(req.params.connector, req.body),
    )
  }
