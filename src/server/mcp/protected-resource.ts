// /mcp as an OAuth protected resource (the MCP authorization specification; RFC 9728): a request
// without valid credentials is answered 401 with a `WWW-Authenticate: Bearer` challenge that names
// the resource's metadata document, where an MCP client learns which authorization server to ask
// for a token (Patchbay itself, server/mcp/authorization-server.ts). The body stays Patchbay's own
// error, so a client that shows it tells the person what was wrong.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import type { Engine } from '../../engine/engine.ts'

/** The path of /mcp's protected resource metadata (RFC 9728 §3.1: the well-known suffix, then the resource's path). */
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp'

/** The one scope an MCP access token carries: acting as the granted agent through /mcp. */
export const MCP_SCOPE = 'mcp'

/** The resource identifier (RFC 8707) of this Patchbay's /mcp: the address clients add it by. */
export const mcpResource = (engine: Engine): string => `${engine.publicUrl}/mcp`

export const ProtectedResourceMetadata = z.object({
  resource: z.string(),
  authorization_servers: z.array(z.string()).optional(),
  scopes_supported: z.array(z.string()),
  bearer_methods_supported: z.array(z.string()),
  resource_name: z.string(),
  resource_documentation: z.string(),
})

/** The metadata document of /mcp. */
export function protectedResourceMetadata(
  engine: Engine,
  opts: { authorizationServer: boolean },
): z.infer<typeof ProtectedResourceMetadata> {
  return {
    resource: mcpResource(engine),
    ...(opts.authorizationServer ? { authorization_servers: [engine.publicUrl] } : {}),
    scopes_supported: [MCP_SCOPE],
    bearer_methods_supported: ['header'],
    resource_name: 'Patchbay',
    resource_documentation: `${engine.publicUrl}/docs`,
  }
}

/** The challenge of a 401 from /mcp (RFC 6750 §3; `invalid_token` when a token was sent and refused). */
export function mcpChallenge(engine: Engine, req: FastifyRequest): string {
  const params = [`resource_metadata="${engine.publicUrl}${RESOURCE_METADATA_PATH}"`]
  if (req.headers.authorization) params.push('error="invalid_token"')
  params.push(`scope="${MCP_SCOPE}"`)
  return `Bearer ${params.join(', ')}`
}

/**
 * The metadata routes (the path-inserted one for /mcp, and the root one, which names the same
 * resource: Patchbay has one protected resource) and the challenge on /mcp's 401s. Called inside
 * the MCP routes' plugin, so the challenge is added to its answers only.
 */
export function installProtectedResource(
  app: FastifyInstance,
  engine: Engine,
  opts: { authorizationServer: boolean },
): void {
  app.addHook('onSend', (req: FastifyRequest, reply: FastifyReply, payload, done) => {
    if (reply.statusCode === 401 && req.routeOptions.url === '/mcp')
      reply.header('www-authenticate', mcpChallenge(engine, req))
    done(null, payload)
  })
  for (const url of [RESOURCE_METADATA_PATH, '/.well-known/oauth-protected-resource'])
    app.get(
      url,
      {
        schema: { hide: true, response: { 200: ProtectedResourceMetadata } },
        config: { operation: 'getMcpResourceMetadata' },
      },
      async (_req, reply) => {
        reply.header('access-control-allow-origin', '*')
        reply.header('cache-control', 'public, max-age=300')
        return protectedResourceMetadata(engine, opts)
      },
    )
}
