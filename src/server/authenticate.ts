// Who is calling: default-deny authentication. Every route needs `Authorization: Bearer <key>`
// unless it declares `config: { public: true }` (the dashboard's files, the API reference, webhook
// deliveries, the sign-in callback). The decision reads the route the router matched, after it
// decoded and normalized the path, never the raw request line: `/%761/agents` is `/v1/agents`
// and needs a key exactly like it.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Caller } from '../engine/access/caller.ts'
import type { Engine } from '../engine/engine.ts'
import { PatchbayError } from '../kit/errors.ts'

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller
  }
  interface FastifyContextConfig {
    /** The route answers without an API key (it checks its callers by other means, or has none). */
    public?: boolean
    /** The route acts for a signed-in person (a session cookie), in no particular workspace. */
    person?: boolean
  }
}

/** The route config of a route anyone may reach. */
export const publicRoute = { public: true } as const

const unauthorized = (message: string) =>
  new PatchbayError('UNAUTHORIZED', message, {
    hint: 'Send Authorization: Bearer <key> with a workspace or agent key.',
  })

/** How often a key's "last used" time is written at most (per key and instance). */
const LAST_USED_EVERY_MS = 60_000
const CACHE_MS = 5_000

export function installAuthentication(app: FastifyInstance, engine: Engine): void {
  app.decorateRequest('caller', null as unknown as Caller)
  const cache = new Map<string, { caller: Caller; at: number }>()
  const lastUsedWritten = new Map<string, number>()
  // A revoked key is dropped from the cache at once, so it is refused from the next request on.
  // An empty list means "anything may have changed" (changes were missed while the channel was
  // down): every cached key is looked up again.
  engine.keyRevocations.subscribe((keyIds) => {
    if (keyIds.length === 0) {
      cache.clear()
      return
    }
    const revoked = new Set(keyIds)
    for (const [key, hit] of cache) if (revoked.has(hit.caller.keyId)) cache.delete(key)
  })

  /** Records that a key was used, at most once a minute per key: not a write per request. */
  const markUsed = (req: FastifyRequest, keyId: string, storedAt: string | null) => {
    const now = Date.now()
    const last = lastUsedWritten.get(keyId) ?? (storedAt ? Date.parse(storedAt) : 0)
    if (now - last < LAST_USED_EVERY_MS) return
    if (lastUsedWritten.size > 10_000) lastUsedWritten.clear()
    lastUsedWritten.set(keyId, now)
    engine.apiKeys
      .touch(keyId, new Date(now).toISOString())
      .catch((err) => req.log.warn({ err, keyId }, 'could not record when an API key was last used'))
  }

  /** The caller of a key not in the cache (or cached too long ago), from the store. */
  const lookUp = async (req: FastifyRequest, key: string): Promise<Caller> => {
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
    markUsed(req, row.id, row.last_used_at)
    return caller
  }

  // Callback hooks, not async ones: a cached key is answered without a promise per request.
  app.addHook('onRequest', (req: FastifyRequest, _reply, done) => {
    // No route matched: the not-found handler answers, and it needs no caller.
    if (req.is404 || req.routeOptions.config?.public) return done()
    // A person's route called with their session cookie (sessions.ts resolved it).
    if (req.session && req.routeOptions.config?.person && !req.headers.authorization) return done()
    const header = req.headers.authorization
    if (!header) return done(unauthorized('This request has no API key.'))
    const match = /^Bearer\s+(\S+)$/i.exec(header)
    if (!match) return done(unauthorized('The Authorization header must be "Bearer <key>".'))
    const key = match[1]
    // A short-lived cache keeps the hash lookup off the hot path; revocation through this
    // process clears it at once, other instances see it within a few seconds.
    const hit = cache.get(key)
    if (hit && Date.now() - hit.at < CACHE_MS) {
      req.caller = hit.caller
      markUsed(req, hit.caller.keyId, null)
      return done()
    }
    lookUp(req, key).then(
      (caller) => {
        req.caller = caller
        done()
      },
      (err: Error) => done(err),
    )
  })

  // The handler of a non-public route never runs without its caller, whatever hook order a
  // plugin brings.
  app.addHook('preHandler', (req: FastifyRequest, _reply, done) => {
    if (req.caller || req.is404 || req.routeOptions.config?.public) return done()
    if (req.session && req.routeOptions.config?.person) return done()
    done(unauthorized('This request has no API key.'))
  })
}

export function requireAdmin(req: FastifyRequest): void {
  if (req.caller.kind !== 'admin')
    throw new PatchbayError(
      'ADMIN_KEY_REQUIRED',
      'This action needs a workspace (admin) key; an agent key was given.',
      {
        hint: 'Use the workspace key printed on first start (or PATCHBAY_ADMIN_KEY).',
      },
    )
}
