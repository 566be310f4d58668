// The MCP endpoint: Streamable HTTP at /mcp, stateless (a fresh server and transport for each
// POST, no session ids), so any instance can answer any request. The caller is an agent key
// (Authorization: Bearer, checked like every /v1 request: a wrong or revoked key is 401 before
// anything else), or a workspace key naming the agent with ?agent=<id>.
import type { FastifyReply } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { asAgent, type Caller, roleAtLeast } from '../../engine/access/caller.ts'
import { mcpRoleOf } from '../../engine/access/policy.ts'
import type { Engine } from '../../engine/engine.ts'
import { PatchbayError } from '../../kit/errors.ts'
import { ErrorBody, errorResponses } from '../schemas.ts'
import { installProtectedResource } from './protected-resource.ts'

/**
 * The MCP SDK and the agent's server are loaded at the first MCP request, not at start: a service
 * that serves no MCP client does not pay for them (about 0.1 s of CPU on every start).
 */
let mcpModules:
  | Promise<
      [typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js'), typeof import('./mcp-server.ts')]
    >
  | undefined
const loadMcp = () =>
  (mcpModules ??= Promise.all([
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('./mcp-server.ts'),
  ]))

/** A body /mcp could not read as JSON. */
const MALFORMED = Symbol('malformed JSON')

/** The agent a request acts as: an agent key's own, or the one a workspace key names. */
export async function agentCaller(
  engine: Engine,
  caller: Caller,
  agentId: string | undefined,
): Promise<Caller> {
  if (caller.kind === 'agentKey') {
    if (agentId !== undefined && agentId !== caller.agentId)
      throw new PatchbayError(
        'AGENT_KEY_FORBIDDEN',
        `This agent key acts only as its own agent (${caller.agentId}), not as ${agentId}.`,
        { hint: "Leave the agent out, or use that agent's own key." },
      )
    return caller
  }
  if (!agentId)
    throw new PatchbayError('AGENT_REQUIRED', 'MCP acts as one agent; this workspace key names none.', {
      hint: 'Use an agent key (POST /v1/agents/{id}/keys), or name the agent: /mcp?agent=<id>.',
    })
  await engine.agents.get(caller.workspaceId, agentId)
  return asAgent(caller, agentId)
}

/**
 * Each JSON-RPC method of a message (or batch) against the policy table's MCP_POLICY: a viewer may
 * list and read, calling a tool needs member. Agent keys may call every method.
 */
export function checkMcpMethods(caller: Caller, body: unknown): void {
  if (caller.kind === 'agentKey') return
  for (const message of Array.isArray(body) ? body : [body]) {
    const method = (message as { method?: unknown } | null)?.method
    if (typeof method !== 'string') continue
    const least = mcpRoleOf(method)
    if (!roleAtLeast(caller.role, least))
      throw new PatchbayError(
        'ROLE_FORBIDDEN',
        `MCP ${method} needs the role ${least} or above in this workspace; the caller's role is ${caller.role}.`,
        { hint: `Ask an admin or owner of the workspace for the role ${least}, or for them to do it.` },
      )
  }
}

export const mcpRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    const toolbox = engine.toolbox
    // 401s carry the OAuth challenge; the metadata says where to get a token.
    installProtectedResource(app, engine, { authorizationServer: true })
    // This plugin's own JSON parser: a body that is not JSON reaches the route (as MALFORMED), to
    // be answered with JSON-RPC's parse error (-32700) instead of the REST API's MALFORMED_JSON.
    app.removeContentTypeParser('application/json')
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, text, done) => {
      try {
        done(null, JSON.parse(text as string))
      } catch {
        done(null, MALFORMED)
      }
    })
    const querystring = z.object({
      agent: z.string().min(1).max(200).optional().describe('With a workspace key: the agent to act as.'),
    })
    app.post(
      '/mcp',
      {
        schema: {
          operationId: 'callMcp',
          tags: ['mcp'],
          summary:
            "MCP (Streamable HTTP, stateless): the agent's tool steps and tools as MCP tools, its recent events as resources",
          querystring,
          body: z.unknown().describe('A JSON-RPC 2.0 message (or batch) of the MCP protocol.'),
          response: {
            200: {
              description: 'The JSON-RPC answer (MCP over Streamable HTTP, answered as JSON).',
              content: {
                'application/json': {
                  schema: z.looseObject({ jsonrpc: z.literal('2.0') }).describe('A JSON-RPC 2.0 response.'),
                },
              },
            },
            202: z.null().describe('A notification or response was accepted (nothing to answer).'),
            ...errorResponses,
            400: z
              .union([
                z
                  .object({
                    jsonrpc: z.literal('2.0'),
                    id: z.union([z.string(), z.number(), z.null()]),
                    error: z.object({
                      code: z.number().int(),
                      message: z.string(),
                      data: z.unknown().optional(),
                    }),
                  })
                  .describe(
                    'A JSON-RPC error: -32700 (the body is not JSON), -32600 (not a JSON-RPC 2.0 message), -32602 (params that do not fit the method).',
                  ),
                ErrorBody,
              ])
              .describe(
                'A JSON-RPC error for a malformed or invalid message; the API error body for a bad query.',
              ),
          },
        },
      },
      async (req, reply) => {
        checkMcpMethods(req.caller, req.body)
        const caller = await agentCaller(engine, req.caller, req.query.agent)
        const agent = await toolbox.agent(caller)
        const [{ StreamableHTTPServerTransport }, { buildMcpServer, jsonRpcError, jsonRpcRefusal }] =
          await loadMcp()
        // Malformed or invalid messages are answered in JSON-RPC's words, not the REST API's.
        const refusal =
          req.body === MALFORMED
            ? jsonRpcError(400, null, -32700, 'Parse error: the body is not valid JSON.')
            : jsonRpcRefusal(req.body)
        if (refusal) return reply.code(refusal.status).send(refusal.body)
        const server = buildMcpServer(engine, toolbox, caller, agent)
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        })
        // The transport writes the answer itself: the headers set so far (X-Request-Id) go with it.
        for (const [name, value] of Object.entries(reply.getHeaders()))
          if (value !== undefined) reply.raw.setHeader(name, value as string | number | string[])
        reply.hijack()
        reply.raw.on('close', () => {
          transport.close().catch(() => {})
          server.close().catch(() => {})
        })
        await server.connect(transport)
        await transport.handleRequest(req.raw, reply.raw, req.body)
      },
    )
    // Stateless: no server-to-client stream and no session to end.
    const notAllowed = async (_req: unknown, reply: FastifyReply) =>
      reply
        .code(405)
        .header('allow', 'POST')
        .send({
          jsonrpc: '2.0',
          error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; POST only.' },
          id: null,
        })
    app.get('/mcp', { schema: { hide: true }, config: { operation: 'callMcp' } }, notAllowed)
    app.delete('/mcp', { schema: { hide: true }, config: { operation: 'callMcp' } }, notAllowed)
  }
