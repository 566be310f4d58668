import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Engine } from '../../engine/engine.ts'
import { ConnectionView, errorResponses } from '../schemas.ts'

const Connected = ConnectionView.extend({
  reconnected: z
    .boolean()
    .describe(
      'true: the account already had a connection of this connector and method, which now has these credentials.',
    ),
})

const credentialsBody = {
  authMethod: z.string().describe('An auth method id from the catalog, e.g. api_key_token.'),
  credentials: z
    .record(z.string(), z.unknown())
    .describe('The credentials the auth method asks for (e.g. key and token). Never returned.'),
}

export const connectionRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    const params = z.object({ id: z.string() })
    app.post(
      '/v1/connections',
      {
        schema: {
          operationId: 'createConnection',
          tags: ['connections'],
          summary:
            'Connect an account: the credentials are checked with the upstream, then sealed in the vault',
          body: z.object({
            connector: z.string().describe('taskboard, codehost, contactdata …'),
            ...credentialsBody,
            second: z
              .boolean()
              .optional()
              .describe(
                'Make a second connection even when the account already has one of this connector and method. Without it, that one is reconnected in place (200, same id).',
              ),
          }),
          response: { 200: Connected, 201: Connected, ...errorResponses },
        },
      },
      async (req, reply) => {
        const made = await engine.connections.create(req.caller.workspaceId, req.body)
        return reply.code(made.reconnected ? 200 : 201).send(made)
      },
    )
    app.get(
      '/v1/connections',
      {
        schema: {
          operationId: 'listConnections',
          tags: ['connections'],
          summary: 'List connections, optionally of one connector or one end user',
          querystring: z.object({
            connector: z.string().optional(),
            endUserId: z
              .string()
              .max(256)
              .optional()
              .describe("Only this end user's connections (an empty value: the workspace's own)."),
          }),
          response: { 200: z.object({ connections: z.array(ConnectionView) }), ...errorResponses },
        },
      },
      async (req) => ({
        // An agent key sees only the connections its agent may use.
        connections: await engine.agents.visibleConnections(
          req.caller,
          await engine.connections.list(
            req.caller.workspaceId,
            req.query.connector,
            req.query.endUserId === undefined ? undefined : req.query.endUserId || null,
          ),
        ),
      }),
    )
    app.get(
      '/v1/connections/:id',
      {
        schema: {
          operationId: 'getConnection',
          tags: ['connections'],
          summary: 'One connection',
          params,
          response: { 200: ConnectionView, ...errorResponses },
        },
      },
      async (req) => {
        await engine.agents.assertConnectionVisible(req.caller, req.params.id)
        return engine.connections.get(req.caller.workspaceId, req.params.id)
      },
    )
    app.post(
      '/v1/connections/:id/reconnect',
      {
        schema: {
          operationId: 'reconnectConnection',
          tags: ['connections'],
          summary: 'Fix a lapsed connection in place with fresh credentials for the same account (same id)',
          params,
          body: z.object(credentialsBody),
          response: { 200: ConnectionView, ...errorResponses },
        },
      },
      async (req) => {
        // Its webhooks are registered again with the fresh credentials (ConnectionService.onReplaced).
        return engine.connections.reconnect(req.caller.workspaceId, req.params.id, req.body)
      },
    )
    app.delete(
      '/v1/connections/:id',
      {
        schema: {
          operationId: 'deleteConnection',
          tags: ['connections'],
          summary:
            'Disconnect: removes the connection, its credentials, its triggers and their upstream webhooks',
          params,
          response: { 204: z.null(), ...errorResponses },
        },
      },
      async (req, reply) => {
        await engine.connections.get(req.caller.workspaceId, req.params.id)
        // Its triggers and upstream webhooks go first, while the credentials can still remove them.
        await engine.events.triggers.removeForConnection(req.params.id)
        await engine.connections.delete(req.caller.workspaceId, req.params.id)
        return reply.code(204).send(null)
      },
    )
  }
