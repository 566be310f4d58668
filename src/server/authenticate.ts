// Resolves `Authorization: Bearer <key>` to a caller for every /v1 route.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Caller } from '../engine/access/caller.ts'
import type { Engine } from '../engine/engine.ts'
import { PatchbayError } from '../kit/errors.ts'

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller
  }
}

const unauthorized = (message: string) =>
  new PatchbayError(401, 'UNAUTHORIZED', message, {
    hint: 'Send Authorization: Bearer <key> with a workspace or agent key.',
  })

export function installAuthentication(app: FastifyInstance, engine: Engine): void {
  app.decorateRequest('caller', null as unknown as Caller)
  const cache = new Map<string, { caller: Caller; at: number }>()
  // A revoked key is dropped from the cache at once, so it is refused from the next request on.
  engine.keyRevocations.subscribe((keyIds) => {
    const revoked = new Set(keyIds)
    for (const [key, hit] of cache) if (revoked.has(hit.caller.keyId)) cache.delete(key)
  })
  app.addHook('onRequest', async (req: FastifyRequest) => {
    // Routes a browser reaches without a key (the OAuth callback) declare config.public.
    if ((req.routeOptions.config as { public?: boolean } | undefined)?.public) return
    // /v1 and the MCP endpoint (which acts as an agent: engine/agent-toolbox.ts).
    if (!req.url.startsWith('/v1/') && req.url !== '/v1' && !/^\/mcp(\?|$)/.test(req.url)) return
    const header = req.headers.authorization
    if (!header) throw unauthorized('This request has no API key.')
    const match = /^Bearer\s+(\S+)$/i.exec(header)
    if (!match) throw unauthorized('The Authorization header must be "Bearer <key>".')
    const key = match[1]
    // A short-lived cache keeps the hash lookup off the hot path; revocation through this
    // process clears it at once, other instances see it within a few seconds.
    const hit = cache.get(key)
    if (hit && Date.now() - hit.at < 5_000) {
      req.caller = hit.caller
      return
    }
    const row = await engine.apiKeys.findByKey(key)
    if (!row || row.revoked_at) {
      cache.delete(key)
      throw unauthorized(row ? 'This API key has been revoked.' : 'This API key is not known.')
    }
    const caller: Caller = {
      workspaceId: row.workspace_id,
      keyId: row.id,
      kind: row.kind,
      agentId: row.agent_id,
    }
    if (cache.size > 10_000) cache.clear()
    cache.set(key, { caller, at: Date.now() })
    req.caller = caller
  })
}

export function requireAdmin(req: FastifyRequest): void {
  if (req.caller.kind !== 'admin')
    throw new PatchbayError(
      403,
      'ADMIN_KEY_REQUIRED',
      'This action needs a workspace (admin) key; an agent key was given.',
      {
        hint: 'Use the workspace key printed on first start (or PATCHBAY_ADMIN_KEY).',
      },
    )
}
