// Primary limits (core, search, graphql per token; a smaller one per address without a token) and
// the secondary limits (concurrent requests, content-creating requests per minute).
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Clock } from '../common/clock.ts'
import { RateWindow, type WindowState } from '../common/rate-window.ts'
import { principalOf, setPrincipal, tokenFromHeader } from './auth.ts'
import type { Ctx } from './context.ts'
import { sendError } from './http.ts'

export interface RateLimitSettings {
  core: number
  search: number
  graphql: number
  unauthenticated: number
  windowMs: number
  searchWindowMs: number
  secondaryInFlight: number
  secondaryCreatesPerMinute: number
  secondaryWindowMs: number
}

export const DEFAULT_LIMITS: RateLimitSettings = {
  core: 5000,
  search: 30,
  graphql: 5000,
  unauthenticated: 60,
  windowMs: 3_600_000,
  searchWindowMs: 60_000,
  secondaryInFlight: 100,
  secondaryCreatesPerMinute: 80,
  secondaryWindowMs: 60_000,
}

export type Resource = 'core' | 'search' | 'graphql'

const SECONDARY_MESSAGE =
  'You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to Codehost Support for help, please include the request ID.'
const LIMITS_DOCS = 'https://docs.codehost.com/rest/using-the-rest-api/rate-limits-for-the-rest-api'

export class Limits {
  settings: RateLimitSettings = { ...DEFAULT_LIMITS }
  core: RateWindow
  search: RateWindow
  graphql: RateWindow
  anonCore: RateWindow
  anonSearch: RateWindow
  creates: RateWindow
  inFlight = new Map<string, number>()
  requestSeq = 0
  /** Raw requests that arrived while their caller already had too many in flight. */
  refused = new WeakSet<IncomingMessage>()

  constructor(clock: Clock) {
    const s = this.settings
    this.core = new RateWindow(clock, s.core, s.windowMs)
    this.search = new RateWindow(clock, s.search, s.searchWindowMs)
    this.graphql = new RateWindow(clock, s.graphql, s.windowMs)
    this.anonCore = new RateWindow(clock, s.unauthenticated, s.windowMs)
    this.anonSearch = new RateWindow(clock, 10, s.searchWindowMs)
    this.creates = new RateWindow(clock, s.secondaryCreatesPerMinute, s.secondaryWindowMs)
  }

  configure(patch: Partial<RateLimitSettings>): RateLimitSettings {
    for (const [k, v] of Object.entries(patch)) {
      if (typeof v === 'number' && k in this.settings)
        (this.settings as unknown as Record<string, number>)[k] = v
    }
    const s = this.settings
    this.core.configure(s.core, s.windowMs)
    this.search.configure(s.search, s.searchWindowMs)
    this.graphql.configure(s.graphql, s.windowMs)
    this.anonCore.configure(s.unauthenticated, s.windowMs)
    this.anonSearch.configure(Math.min(10, s.search), s.searchWindowMs)
    this.creates.configure(s.secondaryCreatesPerMinute, s.secondaryWindowMs)
    return { ...s }
  }

  reset(): void {
    this.configure(DEFAULT_LIMITS)
    this.inFlight.clear()
  }

  window(resource: Resource, authenticated: boolean): RateWindow {
    if (!authenticated) return resource === 'search' ? this.anonSearch : this.anonCore
    return resource === 'search' ? this.search : resource === 'graphql' ? this.graphql : this.core
  }
}

export function resourceOf(path: string): Resource {
  if (path.startsWith('/search/')) return 'search'
  if (path === '/graphql') return 'graphql'
  return 'core'
}

function setHeaders(reply: FastifyReply, st: WindowState, resource: Resource): void {
  reply.header('x-ratelimit-limit', String(st.limit))
  reply.header('x-ratelimit-remaining', String(st.allowed ? st.remaining : 0))
  reply.header('x-ratelimit-used', String(st.used))
  reply.header('x-ratelimit-reset', String(Math.ceil(st.resetAt / 1000)))
  reply.header('x-ratelimit-resource', resource)
}

const CREATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/**
 * Counts concurrent requests at the socket level, before any hook or injected latency, so the
 * concurrency limit sees requests that are still waiting.
 */
export function trackInFlight(app: FastifyInstance, limits: Limits): void {
  app.server.prependListener('request', (req: IncomingMessage, res) => {
    const url = req.url ?? ''
    if (url.startsWith('/_sandbox') || url.startsWith('/login/')) return
    const key = req.headers.authorization ?? `ip:${req.socket.remoteAddress}`
    const current = limits.inFlight.get(key) ?? 0
    if (current >= limits.settings.secondaryInFlight) {
      limits.refused.add(req)
      return
    }
    limits.inFlight.set(key, current + 1)
    res.once('close', () => {
      const n = (limits.inFlight.get(key) ?? 1) - 1
      if (n <= 0) limits.inFlight.delete(key)
      else limits.inFlight.set(key, n)
    })
  })
}

/** The onRequest hook of the API scope: authenticate, count, refuse when over a limit. */
export function rateLimitHook(ctx: Ctx, limits: Limits) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    if (reply.sent) return
    const path = req.url.split('?')[0]
    if (path.startsWith('/_sandbox') || path.startsWith('/login/')) return
    const resource = resourceOf(path)
    reply.header('x-codehost-media-type', 'codehost.v3; format=json')
    reply.header('x-codehost-api-version-selected', '2022-11-28')
    limits.requestSeq++
    reply.header(
      'x-codehost-request-id',
      `C0DE:${limits.requestSeq.toString(16).toUpperCase().padStart(6, '0')}`,
    )
    const token = tokenFromHeader(ctx, req.headers.authorization)
    if (token === 'bad') {
      setHeaders(reply, limits.window(resource, false).peek(`ip:${req.ip}`), resource)
      return sendError(reply, 401, 'Bad credentials')
    }
    const user = token ? (ctx.store.users.get(token.userId) ?? null) : null
    setPrincipal(req, { user, token })
    if (token && token.kind !== 'fine_grained') reply.header('x-oauth-scopes', token.scopes.join(', '))
    if (token?.expiresAt)
      reply.header(
        'codehost-authentication-token-expiration',
        new Date(token.expiresAt)
          .toISOString()
          .replace('T', ' ')
          .replace(/\.\d+Z$/, ' UTC'),
      )

    const key = token ? `token:${token.id}` : `ip:${req.ip}`
    const win = limits.window(resource, token !== null)
    if (path === '/rate_limit') {
      setHeaders(reply, win.peek(key), 'core')
      return
    }
    const st = win.hit(key)
    setHeaders(reply, st, resource)
    if (!st.allowed) {
      const who = user ? `user ID ${user.id}` : req.ip
      const tail = user
        ? ''
        : " (But here's the good news: Authenticated requests get a higher rate limit. Check out the documentation for more details.)"
      return sendError(reply, 403, `API rate limit exceeded for ${who}.${tail}`, undefined, LIMITS_DOCS)
    }
    if (limits.refused.has(req.raw)) {
      reply.header('retry-after', '60')
      return sendError(reply, 403, SECONDARY_MESSAGE, undefined, `${LIMITS_DOCS}#about-secondary-rate-limits`)
    }
    if (CREATING.has(req.method)) {
      const c = limits.creates.hit(key)
      if (!c.allowed) {
        const wait = Math.max(1, Math.ceil((c.resetAt - ctx.emulator.clock.now()) / 1000))
        reply.header('retry-after', String(wait))
        return sendError(
          reply,
          403,
          SECONDARY_MESSAGE,
          undefined,
          `${LIMITS_DOCS}#about-secondary-rate-limits`,
        )
      }
    }
  }
}

/** The `GET /rate_limit` body for the caller. */
export function rateLimitBody(_ctx: Ctx, limits: Limits, req: FastifyRequest) {
  const p = principalOf(req)
  const key = p.token ? `token:${p.token.id}` : `ip:${req.ip}`
  const view = (r: Resource) => {
    const st = limits.window(r, p.token !== null).peek(key)
    return { limit: st.limit, used: st.used, remaining: st.remaining, reset: Math.ceil(st.resetAt / 1000) }
  }
  const core = view('core')
  return {
    resources: {
      core,
      search: view('search'),
      graphql: view('graphql'),
      integration_manifest: { limit: 5000, used: 0, remaining: 5000, reset: core.reset },
      code_search: { limit: 10, used: 0, remaining: 10, reset: core.reset },
    },
    rate: core,
  }
}
