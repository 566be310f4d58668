// MCP grants: the MCP clients a person (or an end user, through a connect session) allowed, through
// Patchbay's OAuth sign-in, to act as one of the workspace's agents (server/mcp/authorization-server.ts). Listed and revoked here; a revoked
// grant's tokens are refused from the next request on, on every instance.
//   GET    /v1/mcp-grants       → the workspace's grants in force
//   DELETE /v1/mcp-grants/{id}  → revoke one
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Engine } from '../../engine/engine.ts'
import { nextCursor, pageQuery } from '../paging.ts'
import { errorResponses } from '../schemas.ts'

export const McpGrantView = z
  .object({
    id: z.string(),
    agent: z.object({ id: z.string(), name: z.string().nullable().describe('null: the agent was deleted.') }),
    endUserId: z.string().nullable().describe('The end user the agent acts for, if it is bound to one.'),
    client: z.object({
      id: z.string().describe('The client id it registered with (dynamic client registration).'),
      name: z.string().nullable().describe('The name it registered with (client_name).'),
    }),
    grantedBy: z
      .string()
      .nullable()
      .describe('The person who allowed it; null when the end user did, through a connect session.'),
    connectSessionId: z
      .string()
      .nullable()
      .describe(
        'The connect session through which the end user (endUserId) allowed it; null when a person did.',
      ),
    resource: z.string().describe("The resource its tokens are for: this Patchbay's /mcp."),
    scope: z.string(),
    createdAt: z.string(),
    lastUsedAt: z.string().nullable().describe('Updated at most once a minute.'),
  })
  .meta({ id: 'McpGrant' })

export const mcpGrantRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      '/v1/mcp-grants',
      {
        schema: {
          operationId: 'listMcpGrants',
          tags: ['mcp'],
          summary:
            'The MCP clients allowed to act as an agent of this workspace (OAuth grants in force), newest first, a page at a time',
          querystring: z.object(pageQuery(200)),
          response: { 200: z.object({ grants: z.array(McpGrantView), next: nextCursor }), ...errorResponses },
        },
      },
      async (req) => engine.mcpGrants.page(req.caller.workspaceId, req.query),
    )
    app.delete(
      '/v1/mcp-grants/:id',
      {
        schema: {
          operationId: 'revokeMcpGrant',
          tags: ['mcp'],
          summary: "Revoke an MCP client's grant: its tokens are refused from the next request on",
          params: z.object({ id: z.string().min(1).max(200) }),
          response: { 200: McpGrantView, ...errorResponses },
        },
      },
      async (req) => {
        const grant = await engine.mcpGrants.revoke(req.caller, req.params.id)
        req.audited = { objectId: grant.id, detail: { agentId: grant.agent.id, clientId: grant.client.id } }
        return grant
      },
    )
  }
