// People's sessions on the HTTP side: the cookie (HttpOnly, SameSite=Lax, Secure and __Host-
// named behind https), the session it names (looked up through a short cache that every
// instance empties at once when a session ends), and CSRF protection: a request that a session
// cookie authenticates and that may change something (any method but GET, HEAD and OPTIONS) must
// carry the session's CSRF token in X-CSRF-Token, or it is refused (403 CSRF_TOKEN_INVALID,
// audited). A request with an API key (Authorization) is the key's: its cookie is not read.
//
// The session is one of authentication's PersonAuthenticators (server/authenticate.ts): it says
// who the person is; authentication picks the workspace and the role.
import cookie from '@fastify/cookie'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Engine } from '../engine/engine.ts'
import { csrfTokenMatches, type SessionIdentity, type StartedSession } from '../engine/people/accounts.ts'
import type { RequestOrigin } from '../engine/people/audit-trail.ts'
import { PatchbayError } from '../kit/errors.ts'
import type { PersonAuthenticator, PersonIdentity } from './authenticate.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in person's account and session, when a session cookie authenticated the request. */
    session: SessionIdentity | null
    /** The session cookie's token (for its CSRF token). */
    sessionToken: string | null
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])
const CACHE_MS = 5_000
/** How often a session's "last seen" time is written at most. */
const LAST_SEEN_EVERY_MS = 60_000

export interface Sessions {
  /** The cookie's name: `__Host-patchbay_session` behind https, else `patchbay_session`. */
  name: string
  secure: boolean
  /** Sets the session cookie of a new session on the answer. */
  set(reply: FastifyReply, started: StartedSession): void
  clear(reply: FastifyReply): void
  /** Recognises the session cookie for authentication. */
  authenticator: PersonAuthenticator
}

export const originOf = (req: FastifyRequest): RequestOrigin => ({
  address: req.ip ?? null,
  userAgent: typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : null,
})

interface Cached {
  identity: SessionIdentity
  person: PersonIdentity
  at: number
}

export async function installSessions(
  app: FastifyInstance,
  engine: Engine,
  opts: { secure: boolean },
): Promise<Sessions> {
  await app.register(cookie)
  app.decorateRequest('session', null)
  app.decorateRequest('sessionToken', null)
  // The __Host- prefix makes browsers refuse the cookie unless it is Secure, host-only and Path=/.
  const name = opts.secure ? '__Host-patchbay_session' : 'patchbay_session'
  const attributes = { httpOnly: true, sameSite: 'lax', secure: opts.secure, path: '/' } as const

  const cache = new Map<string, Cached>()
  const lastSeen = new Map<string, number>()
  // A session ended anywhere (sign-out, sign-out everywhere, a member removed or their role
  // changed) is dropped here at once; an empty list (changes missed) drops everything.
  // Endings heard: a look-up begun before one is not cached after it (it may have read the
  // session before it ended).
  let endings = 0
  engine.changes.subscribe('sessions', (ids) => {
    endings++
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

  /** Accepts a resolved session for the request, or refuses a change without its CSRF token. */
  const admit = (req: FastifyRequest, token: string, hit: Cached): PersonIdentity => {
    req.session = hit.identity
    req.sessionToken = token
    touch(req, hit.identity)
    if (SAFE_METHODS.has(req.method)) return hit.person
    const given = req.headers['x-csrf-token']
    if (csrfTokenMatches(token, typeof given === 'string' ? given : undefined)) return hit.person
    engine.accounts
      .refusedCsrf(hit.identity, `${req.method} ${req.routeOptions.url ?? ''}`, originOf(req))
      .catch((err) => req.log.warn({ err }, 'could not audit a refused CSRF token'))
    throw new PatchbayError(
      'CSRF_TOKEN_INVALID',
      given
        ? 'The X-CSRF-Token header is not the token of this session.'
        : 'A change made with a session cookie needs the X-CSRF-Token header.',
    )
  }

  const authenticator: PersonAuthenticator = {
    authenticate(req, bearer) {
      // A key's request: the cookie is not the credential.
      if (bearer !== null) return undefined
      const token = req.cookies?.[name]
      if (!token) return undefined
      const hit = cache.get(token)
      if (hit && Date.now() - hit.at < CACHE_MS && hit.identity.session.expires_at > new Date().toISOString())
        return admit(req, token, hit)
      const heard = endings
      return engine.accounts.resolveSession(token).then((found) => {
        if ('refused' in found) {
          cache.delete(token)
          throw new PatchbayError('UNAUTHORIZED', found.refused, {
            hint: 'Sign in again (POST /v1/auth/sign-in), or send Authorization: Bearer <key>.',
          })
        }
        const fresh: Cached = {
          identity: found,
          person: { personId: found.person.id, sessionId: found.session.id, keyId: null },
          at: Date.now(),
        }
        if (heard === endings) {
          if (cache.size > 10_000) cache.clear()
          cache.set(token, fresh)
        }
        return admit(req, token, fresh)
      })
    },
  }

  // A refused cookie goes: the browser stops sending a session that is not valid here.
  app.addHook('onSend', (req, reply, _payload, done) => {
    if (reply.statusCode === 401 && req.cookies?.[name] && !req.headers.authorization)
      reply.clearCookie(name, attributes)
    done()
  })

  return {
    name,
    secure: opts.secure,
    set(reply, started) {
      reply.setCookie(name, started.token, { ...attributes, expires: new Date(started.session.expires_at) })
    },
    clear(reply) {
      reply.clearCookie(name, attributes)
    },
    authenticator,
  }
}

/** The signed-in person's account and session, or 403 PERSON_REQUIRED (a key called). */
export function requirePerson(req: FastifyRequest): SessionIdentity {
  if (req.session) return req.session
  throw new PatchbayError(
    'PERSON_REQUIRED',
    'This route acts for a person signed in with a session; it was called with an API key.',
    { hint: 'Sign in with POST /v1/auth/sign-in and call it with the session cookie.' },
  )
}
