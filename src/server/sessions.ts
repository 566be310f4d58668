// People's sessions on the HTTP side: the cookie (HttpOnly, SameSite=Lax, Secure and __Host-
// named behind https), the session it names (looked up through a short cache that every
// instance empties at once when a session ends), and CSRF protection: a request that a session
// cookie authenticates and that may change something (any method but GET, HEAD and OPTIONS) must
// carry the session's CSRF token in X-CSRF-Token, or it is refused (403 CSRF_TOKEN_INVALID,
// audited). A request with an API key (Authorization) is a key's request: its cookie is ignored.
import cookie from '@fastify/cookie'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Engine } from '../engine/engine.ts'
import { csrfTokenMatches, type SessionIdentity, type StartedSession } from '../engine/people/accounts.ts'
import type { RequestOrigin } from '../engine/people/audit-trail.ts'
import { PatchbayError } from '../kit/errors.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in person and their session, when a session cookie (and no key) came with it. */
    session: SessionIdentity | null
    /** The session cookie's token (for its CSRF token). */
    sessionToken: string | null
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])
const CACHE_MS = 5_000
/** How often a session's "last seen" time is written at most. */
const LAST_SEEN_EVERY_MS = 60_000

export interface SessionCookies {
  name: string
  secure: boolean
  /** Sets the session cookie of a new session on the answer. */
  set(reply: FastifyReply, started: StartedSession): void
  clear(reply: FastifyReply): void
}

export const originOf = (req: FastifyRequest): RequestOrigin => ({
  address: req.ip ?? null,
  userAgent: typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : null,
})

export async function installSessions(
  app: FastifyInstance,
  engine: Engine,
  opts: { secure: boolean },
): Promise<SessionCookies> {
  await app.register(cookie)
  app.decorateRequest('session', null)
  app.decorateRequest('sessionToken', null)
  // The __Host- prefix makes browsers refuse the cookie unless it is Secure, host-only and Path=/.
  const name = opts.secure ? '__Host-patchbay_session' : 'patchbay_session'
  const cookies: SessionCookies = {
    name,
    secure: opts.secure,
    set(reply, started) {
      reply.setCookie(name, started.token, {
        httpOnly: true,
        sameSite: 'lax',
        secure: opts.secure,
        path: '/',
        expires: new Date(started.session.expires_at),
      })
    },
    clear(reply) {
      reply.clearCookie(name, { httpOnly: true, sameSite: 'lax', secure: opts.secure, path: '/' })
    },
  }

  const cache = new Map<string, { identity: SessionIdentity; at: number }>()
  const lastSeen = new Map<string, number>()
  // A session ended anywhere (sign-out, sign-out everywhere, a member removed or their role
  // changed) is dropped here at once; an empty list (changes missed) drops everything.
  engine.changes.subscribe('sessions', (ids) => {
    if (ids.length === 0) return cache.clear()
    const ended = new Set(ids)
    for (const [token, hit] of cache) if (ended.has(hit.identity.session.id)) cache.delete(token)
  })

  const touch = (req: FastifyRequest, identity: SessionIdentity) => {
    const now = Date.now()
    const id = identity.session.id
    const last = lastSeen.get(id) ?? Date.parse(identity.session.last_seen_at)
    if (now - last < LAST_SEEN_EVERY_MS) return
    if (lastSeen.size > 10_000) lastSeen.clear()
    lastSeen.set(id, now)
    engine.accounts.sessions
      .touch(id, new Date(now).toISOString())
      .catch((err) => req.log.warn({ err }, 'could not record when a session was last seen'))
  }

  const resolve = async (token: string): Promise<SessionIdentity | { refused: string }> => {
    const hit = cache.get(token)
    if (hit && Date.now() - hit.at < CACHE_MS && hit.identity.session.expires_at > new Date().toISOString())
      return hit.identity
    const found = await engine.accounts.resolveSession(token)
    if ('refused' in found) {
      cache.delete(token)
      return found
    }
    if (cache.size > 10_000) cache.clear()
    cache.set(token, { identity: found, at: Date.now() })
    return found
  }

  app.addHook('onRequest', async (req: FastifyRequest, reply) => {
    if (req.is404) return
    const token = req.cookies?.[name]
    if (!token || req.headers.authorization) return
    const isPublic = req.routeOptions.config?.public === true
    const found = await resolve(token)
    if ('refused' in found) {
      // A public route (sign-in, the dashboard) answers as for anyone; the stale cookie goes.
      cookies.clear(reply)
      if (isPublic) return
      throw new PatchbayError('UNAUTHORIZED', found.refused, {
        hint: 'Sign in again (POST /v1/auth/sign-in), or send Authorization: Bearer <key>.',
      })
    }
    req.session = found
    req.sessionToken = token
    touch(req, found)
    if (SAFE_METHODS.has(req.method) || isPublic) return
    const given = req.headers['x-csrf-token']
    if (csrfTokenMatches(token, typeof given === 'string' ? given : undefined)) return
    await engine.accounts.refusedCsrf(found, `${req.method} ${req.routeOptions.url ?? ''}`, originOf(req))
    throw new PatchbayError(
      'CSRF_TOKEN_INVALID',
      given
        ? 'The X-CSRF-Token header is not the token of this session.'
        : 'A change made with a session cookie needs the X-CSRF-Token header.',
    )
  })
  return cookies
}

/** The signed-in person of a request, or 403 PERSON_REQUIRED (a key called). */
export function requirePerson(req: FastifyRequest): SessionIdentity {
  if (req.session) return req.session
  throw new PatchbayError(
    'PERSON_REQUIRED',
    'This route acts for a signed-in person; it was called with an API key.',
  )
}
