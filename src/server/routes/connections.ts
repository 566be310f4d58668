import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Engine } from '../../engine/engine.ts'
import { nextCursor, pageQuery } from '../paging.ts'
import { ConnectionView, errorResponses } from '../schemas.ts'

const Connected = ConnectionView.extend({
  reconnected: z
    .boolean()
    .describe(
      'true: the account already had a connection of this connector and method, which now has these credentials.',
    ),
})

const Disconnected = z.object({
  removed: z.object({
    connectionId: z.string(),
    triggers: z
      .array(z.object({ id: z.string(), agentId: z.string(), trigger: z.string() }))
      .describe('Its triggers, removed with their upstream webhooks.'),
  }),
  detached: z.object({
    agents: z
      .array(z.object({ id: z.string(), name: z.string() }))
      .describe(
        'Agents that used it: it is gone from their connectionIds and listed in their connectionsNeeded.',
      ),
    toolSteps: z
      .array(
        z.object({ agentId: z.string(), toolId: z.string(), name: z.string(), steps: z.array(z.number()) }),
      )
      .describe(
        'Tool steps that ran through it: their connectionId is null, connectionNeeded says which it was.',
      ),
  }),
  cleanupErrors: z.array(z.string()).describe('Upstream webhooks that could not be removed.'),
  restorable: z
    .boolean()
    .describe(
      'true: connecting the same account again offers all of this back (POST /v1/connections/{id}/restore).',
    ),
})

const Restored = z.object({
  connectionId: z.string(),
  restoredFrom: z.array(z.string()).describe('The disconnected connections whose bindings were put back.'),
  agents: z.array(z.string()).describe('Agents that use this connection again.'),
  toolSteps: z.array(z.object({ agentId: z.string(), toolId: z.string(), steps: z.array(z.number()) })),
  triggers: z
    .array(z.object({ id: z.string(), agentId: z.string(), trigger: z.string() }))
    .describe('Triggers created again on this connection.'),
  failed: z
    .array(z.object({ what: z.string(), code: z.string(), message: z.string() }))
    .describe('What could not be put back, and why.'),
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
          summary:
            'List connections, optionally of one connector or one end user, oldest first, a page at a time',
          querystring: z.object({
            connector: z.string().optional(),
            endUserId: z
              .string()
              .max(256)
              .optional()
              .describe("Only this end user's connections (an empty value: the workspace's own)."),
            ...pageQuery(200),
          }),
          response: {
            200: z.object({ connections: z.array(ConnectionView), next: nextCursor }),
            ...errorResponses,
          },
        },
      },
      async (req) => {
        const { connector, endUserId, limit, cursor } = req.query
        // An agent key sees only the connections its agent may use.
        const ids = await engine.agents.visibleConnectionIds(req.caller)
        return engine.connections.page(
          req.caller.workspaceId,
          {
            connector,
            endUserId: endUserId === undefined ? undefined : endUserId || null,
            ...(ids ? { ids } : {}),
          },
          { limit, cursor },
        )
      },
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
          body: z.object({
            ...credentialsBody,
            authMethod: credentialsBody.authMethod
              .optional()
              .describe("An auth method id from the catalog; the connection's own method when left out."),
          }),
          response: { 200: ConnectionView, ...errorResponses },
        },
      },
      async (req) => {
        // Its webhooks are registered again with the fresh credentials (the engine event connectionReplaced: triggers/webhook-subscriptions.ts).
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
            'Disconnect: refused (409 CONNECTION_IN_USE, with the list) while agents, triggers or tool steps use it, unless ?force=true; then its triggers and their upstream webhooks are removed, its agents and tool steps detached (remembered for a restore), and the answer says which',
          params,
          querystring: z.object({
            force: z
              .enum(['true', 'false'])
              .optional()
              .describe('true: disconnect even though agents, triggers or tool steps use it.'),
          }),
          response: { 200: Disconnected, ...errorResponses },
        },
      },
      async (req) => {
        return engine.connectionBindings.disconnect(req.caller.workspaceId, req.params.id, {
          force: req.query.force === 'true',
        })
      },
    )
    app.post(
      '/v1/connections/:id/restore',
      {
        schema: {
          operationId: 'restoreConnection',
          tags: ['connections'],
          summary:
            "Put what an earlier connection of the same account bound (its triggers, its agents' use of it, its tool steps) on this connection",
          params,
          body: z
            .object({
              from: z
                .string()
                .optional()
                .describe('One disconnected connection of `restorable`; without it, every one listed there.'),
            })
            .nullish(),
          response: { 200: Restored, ...errorResponses },
        },
      },
      async (req) => {
        return engine.connectionBindings.restore(req.caller.workspaceId, req.params.id, {
          from: req.body?.from,
        })
      },
    )
  }
