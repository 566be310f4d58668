// ctx.http: the only way out of a connector. It applies the connection's credentials, paces
// ready-made steps, retries what is safe to retry, and turns every failure into the error model,
// with every credential scrubbed from what it reports.
import { type Dispatcher, request, errors as undiciErrors } from 'undici'
import { type Clock, systemClock } from './clock.ts'
import type { ConnectorDefinition, Credentials, OutgoingRequest } from './define.ts'
import { type EgressGuard, egressRefused, findEgressRefusal } from './egress.ts'
import { PatchbayError } from './errors.ts'
import type { Answered } from './pacer.ts'
import { redactSecrets, secretValues } from './redact.ts'
import { isIdempotent, parseRetryAfter, type RetryPolicy, retryDelayMs, shouldRetry } from './retry-policy.ts'
import { openSpan, tracingOn } from './tracing.ts'
import { PATCHBAY_USER_AGENT } from './version.ts'

export type QueryValue = string | number | boolean | null | undefined | ReadonlyArray<string | number>

export interface UpstreamRequest {
  method: string
  path: string
  query?: Record<string, QueryValue>
  body?: unknown
  headers?: Record<string, string>
  /** Overrides the method's default for retries (e.g. a POST that is safe to repeat). */
  idempotent?: boolean
  /**
   * A 3xx (304 included) is the answer, handed back as it is (API Call steps show it). Otherwise
   * it is UPSTREAM_REDIRECT: redirects are never followed.
   */
  passRedirects?: boolean
}

export interface UpstreamResponse<T = unknown> {
  status: number
  headers: Record<string, string>
  data: T
}

export interface Http {
  request<T = unknown>(req: UpstreamRequest): Promise<UpstreamResponse<T>>
  get<T = unknown>(path: string, query?: UpstreamRequest['query']): Promise<T>
  post<T = unknown>(path: string, body?: unknown, query?: UpstreamRequest['query']): Promise<T>
  put<T = unknown>(path: string, body?: unknown, query?: UpstreamRequest['query']): Promise<T>
  patch<T = unknown>(path: string, body?: unknown, query?: UpstreamRequest['query']): Promise<T>
  delete<T = unknown>(path: string, query?: UpstreamRequest['query']): Promise<T>
}

export interface UpstreamClientOptions {
  connector: ConnectorDefinition
  baseUrl: string
  credentials: Credentials
  dispatcher: Dispatcher
  timeoutMs: number
  retry: RetryPolicy
  /**
   * Waits for a slot in the credential's budget; absent for unpaced (API Call) requests. What it
   * gives, when anything, is called once the request is answered or has failed (pacer.ts).
   */
  pace?: (req: { method: string; path: string }) => Promise<Answered | undefined>
  /**
   * Before the pacing: holds a ready-made request back until a spent rate budget resets (or
   * refuses it); a request held here takes no place in the pacer's window meanwhile.
   */
  gate?: (req: { method: string; path: string }) => Promise<void>
  /** Called on a 401: the engine marks the connection lapsed. */
  onUnauthorized?: (message: string) => Promise<void> | void
  /** Whether the credentials belong to a stored connection (a 401 then means it lapsed). */
  storedConnection: boolean
  /** Sees every response's headers (rate-limit tracking). */
  onResponse?: (status: number, headers: Record<string, string>) => void
  /** The time waits between retries are measured in (the system's by default). */
  clock?: Clock
}

export interface UpstreamStats {
  attempts: number
  /** Answers 429 (rate limited) among them. */
  rateLimited: number
  /** Each request sent (the first MAX_RECORDED), for the run's timeline. */
  requests: UpstreamRequestRecord[]
}

/** One request as a run's timeline shows it: no query, no header, no body, identifiers as {id}. */
export interface UpstreamRequestRecord {
  method: string
  /** The path with identifiers replaced by {id}. */
  route: string
  /** When it started waiting to be sent (epoch ms). */
  at: number
  /** Held back for a spent rate budget's reset. */
  budgetWaitMs: number
  /** Waited for a slot in the pacing budget. */
  pacingWaitMs: number
  /** From sent to answered or failed. */
  durationMs: number
  /** The upstream's status; null when it did not answer. */
  status: number | null
}
const MAX_RECORDED = 50

/**
 * A path as a route: segments that look like identifiers (numbers, hex, UUIDs, long tokens with
 * digits) become {id}; a leading version number (`/1/cards`) stays.
 */
export function routeTemplate(path: string): string {
  return path
    .split('?', 1)[0]
    .split('/')
    .map((seg, i) =>
      (/^\d+$/.test(seg) && !(i === 1 && seg.length <= 2)) ||
      /^[0-9a-f]{12,}$/i.test(seg) ||
      /^[0-9a-f-]{32,36}$/i.test(seg) ||
      (seg.length >= 16 && /\d/.test(seg) && /^[\w-]+$/.test(seg))
        ? '{id}'
        : seg,
    )
    .join('/')
}
const round1 = (ms: number) => Math.round(ms * 10) / 10

/**
 * One keep-alive pool shared by every outgoing call of the process, every connection through the
 * egress guard: up to `connections` at once to each origin (the rest wait in line).
 */
export function createDispatcher(egress: EgressGuard, connections = 128): Dispatcher {
  return egress.dispatcher({
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 600_000,
    connections,
    pipelining: 1,
  })
}

const EXCERPT_LIMIT = 500

export class UpstreamClient implements Http {
  readonly stats: UpstreamStats = { attempts: 0, rateLimited: 0, requests: [] }
  #o: UpstreamClientOptions
  /** What is scrubbed from what the client reports: worked out at the first report (an error's). */
  #secrets: string[] | null = null
  /** The first request before and after the connector's authorize, to learn its secrets from. */
  #first: { before: { headers: Record<string, string>; query: string }; sent: OutgoingRequest } | null = null
  #origin: string
  #host: string
  #basePath: string

  constructor(opts: UpstreamClientOptions) {
    this.#o = opts
    // A client is made per step run: the base address is parsed once per address.
    const base = parsedBase(opts.baseUrl)
    this.#origin = base.origin
    this.#host = base.host
    this.#basePath = base.basePath
  }

  /** Waits between retries in the client's clock (tests drive it by hand). */
  #sleep(ms: number): Promise<void> {
    return (this.#o.clock ?? systemClock).sleep(ms)
  }

  get = <T>(path: string, query?: UpstreamRequest['query']) =>
    this.request<T>({ method: 'GET', path, query }).then((r) => r.data)
  post = <T>(path: string, body?: unknown, query?: UpstreamRequest['query']) =>
    this.request<T>({ method: 'POST', path, body, query }).then((r) => r.data)
  put = <T>(path: string, body?: unknown, query?: UpstreamRequest['query']) =>
    this.request<T>({ method: 'PUT', path, body, query }).then((r) => r.data)
  patch = <T>(path: string, body?: unknown, query?: UpstreamRequest['query']) =>
    this.request<T>({ method: 'PATCH', path, body, query }).then((r) => r.data)
  delete = <T>(path: string, query?: UpstreamRequest['query']) =>
    this.request<T>({ method: 'DELETE', path, query }).then((r) => r.data)

  async request<T = unknown>(req: UpstreamRequest): Promise<UpstreamResponse<T>> {
    const method = req.method.toUpperCase()
    const outgoing: OutgoingRequest = {
      method,
      path: req.path,
      query: toSearchParams(req.query),
      headers: { accept: 'application/json', ...lowerKeys(req.headers) },
    }
    // Every upstream request names its client (the code host refuses one without): the
    // connector's own name if it gives one, else Patchbay's; a caller's own value (an API Call's
    // header) is kept when it says something.
    if (!outgoing.headers['user-agent']?.trim())
      outgoing.headers['user-agent'] = this.#o.connector.userAgent ?? PATCHBAY_USER_AGENT
    let body: string | undefined
    if (req.body !== undefined && method !== 'GET' && method !== 'HEAD') {
      body = JSON.stringify(req.body)
      outgoing.headers['content-type'] = 'application/json'
    }
    // What the connector's authorize adds is secret too (#secretList): the first request keeps
    // what it was before and after it.
    const before = this.#first ? null : { headers: { ...outgoing.headers }, query: outgoing.query.toString() }
    this.#o.connector.authorize(outgoing, this.#o.credentials)
    if (before) this.#first = { before, sent: outgoing }
    const qs = outgoing.query.toString()
    const path = `${this.#basePath}${outgoing.path}${qs ? `?${qs}` : ''}`
    // A plain path goes to the pool as it is: undici's URL parse would give back the same. Any
    // other (dot segments, percent signs, characters URLs encode) is parsed, and so normalised,
    // as before.
    const plain = PLAIN_PATH.test(outgoing.path)
    const url = plain ? '' : `${this.#origin}${path}`
    const idempotent = isIdempotent(method, req.idempotent)

    const route = routeTemplate(req.path)
    for (let retry = 0; ; retry++) {
      const at = Date.now()
      const waiting = performance.now()
      if (this.#o.gate) await this.#o.gate(outgoing)
      const paced = performance.now()
      const answered = this.#o.pace ? await this.#o.pace(outgoing) : undefined
      const sent = performance.now()
      const record = (status: number | null) => {
        if (tracingOn())
          openSpan(
            `${method} ${route}`,
            {
              'http.request.method': method,
              'url.template': route,
              'server.address': this.#host,
              'http.response.status_code': status ?? undefined,
              'http.request.resend_count': retry > 0 ? retry : undefined,
              'patchbay.connector': this.#o.connector.id,
              'patchbay.upstream.rate_budget_wait_ms': round1(paced - waiting),
              'patchbay.upstream.pacing_wait_ms': round1(sent - paced),
            },
            { kind: 'client', startTime: at },
          )?.end(status === null ? 'UPSTREAM_UNAVAILABLE' : status >= 500 ? `HTTP_${status}` : null)
        if (this.stats.requests.length < MAX_RECORDED)
          this.stats.requests.push({
            method,
            route,
            at,
            budgetWaitMs: round1(paced - waiting),
            pacingWaitMs: round1(sent - paced),
            durationMs: round1(performance.now() - sent),
            status,
          })
      }
      this.stats.attempts++
      let status: number
      let headers: Record<string, string>
      let text: string
      try {
        const res = await (plain
          ? this.#o.dispatcher.request({
              origin: this.#origin,
              path,
              method: method as Dispatcher.HttpMethod,
              headers: outgoing.headers,
              body,
              headersTimeout: this.#o.timeoutMs,
              bodyTimeout: this.#o.timeoutMs,
            })
          : request(url, {
              method: method as Dispatcher.HttpMethod,
              headers: outgoing.headers,
              body,
              dispatcher: this.#o.dispatcher,
              headersTimeout: this.#o.timeoutMs,
              bodyTimeout: this.#o.timeoutMs,
            }))
        answered?.()
        status = res.statusCode
        if (status === 429) this.stats.rateLimited++
        headers = flattenHeaders(res.headers)
        text = await res.body.text()
        record(status)
      } catch (err) {
        answered?.()
        record(null)
        // The guard refused the address: nothing was sent, and trying again changes nothing.
        const refusal = findEgressRefusal(err)
        if (refusal) throw egressRefused(refusal, `${this.#o.connector.name} (${this.#origin})`)
        const timedOut =
          err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError
        if (retry < this.#o.retry.retries && shouldRetry({ networkError: true }, idempotent)) {
          await this.#sleep(retryDelayMs(this.#o.retry, retry))
          continue
        }
        throw timedOut
          ? new PatchbayError(
              'UPSTREAM_TIMEOUT',
              `${this.#o.connector.name} did not answer ${method} ${req.path} within ${this.#o.timeoutMs} ms.`,
              { hint: 'The upstream is slow or down; try again later.' },
            )
          : new PatchbayError(
              'UPSTREAM_UNAVAILABLE',
              `${this.#o.connector.name} could not be reached for ${method} ${req.path}: ${this.#scrub((err as Error).message)}`,
              { hint: 'Check the upstream address in the configuration, or try again later.' },
            )
      }
      this.#o.onResponse?.(status, headers)

      if (status >= 300 && status < 400 && !req.passRedirects)
        throw this.#redirected(method, req.path, status, headers.location)
      if (status < 400) {
        return { status, headers, data: parseBody(text, headers) as T }
      }
      const hint = this.#o.connector.rateLimitHint?.(status, headers, text)
      const isRateLimit = status === 429 || hint !== undefined
      const waitMs = hint?.retryAfterMs ?? parseRetryAfter(headers['retry-after'])
      const retryable = isRateLimit ? true : shouldRetry({ status }, idempotent)
      const waitTooLong = waitMs !== undefined && waitMs > this.#o.retry.maxDelayMs
      if (retryable && retry < this.#o.retry.retries && !waitTooLong) {
        await this.#sleep(retryDelayMs(this.#o.retry, retry, waitMs))
        continue
      }
      throw await this.#mapError(method, req.path, status, text, isRateLimit, waitMs)
    }
  }

  async #mapError(
    method: string,
    path: string,
    status: number,
    text: string,
    rateLimited: boolean,
    waitMs: number | undefined,
  ): Promise<PatchbayError> {
    const name = this.#o.connector.name
    const upstreamMessage = this.#scrub(
      this.#o.connector.errorMessage?.(status, text) ?? defaultMessage(text),
    )
    const upstream = { status, body: this.#scrub(text.slice(0, EXCERPT_LIMIT)) }
    const what = `${name} answered ${status} to ${method} ${this.#scrub(path)}`
    if (rateLimited) {
      return new PatchbayError('RATE_LIMITED', `${what}: rate limit exceeded (${upstreamMessage}).`, {
        hint: 'Retry later with increasing delays.',
        retryAfterMs: waitMs,
        upstream,
      })
    }
    if (status === 401 && this.#o.connector.credentialsRefused?.(text) === false) {
      return new PatchbayError('UPSTREAM_FORBIDDEN', `${what}: ${upstreamMessage}`, {
        hint: 'The account lacks the permission for this action or resource.',
        upstream,
      })
    }
    if (status === 401) {
      if (this.#o.storedConnection) {
        await this.#o.onUnauthorized?.(upstreamMessage)
        return new PatchbayError(
          'CONNECTION_LAPSED',
          `${what}: the connection's credentials were refused (${upstreamMessage}); the connection is now lapsed.`,
          {
            hint: 'Reconnect the account (POST /v1/connections/{id}/reconnect) or disconnect and connect it again.',
            upstream,
          },
        )
      }
      return new PatchbayError(
        'INVALID_CREDENTIALS',
        `${what}: the credentials were refused (${upstreamMessage}).`,
        {
          hint: 'Check the API key and token (or other credentials) and try again.',
          upstream,
        },
      )
    }
    const named = this.#o.connector.classifyError?.(status, text)
    const message = `${what}: ${upstreamMessage}`
    if (named) return new PatchbayError(named.code, message, { hint: named.hint, upstream })
    if (status >= 500) return new PatchbayError('UPSTREAM_ERROR', message, { upstream })
    if (status === 404) return new PatchbayError('UPSTREAM_NOT_FOUND', message, { upstream })
    if (status === 403) return new PatchbayError('UPSTREAM_FORBIDDEN', message, { upstream })
    return new PatchbayError('UPSTREAM_REJECTED', message, { upstream, status })
  }

  /** A redirect is not followed: the error names where it points (its origin only, never its path or query). */
  #redirected(method: string, path: string, status: number, location: string | undefined): PatchbayError {
    let where = 'no Location'
    if (location)
      try {
        where = new URL(location, `${this.#origin}${this.#basePath}/`).origin
      } catch {
        where = 'an unreadable Location'
      }
    return new PatchbayError(
      'UPSTREAM_REDIRECT',
      `${this.#o.connector.name} answered ${status} to ${method} ${this.#scrub(path)}, redirecting to ${this.#scrub(where)}; Patchbay does not follow redirects.`,
      { upstream: { status } },
    )
  }

  #scrub(text: string): string {
    return redactSecrets(text, this.#secretList())
  }

  /**
   * The credentials' values, and what the connector's authorize added to the first request, as
   * sent: a `Basic base64(user:password)` or a signed header holds the credentials in a form their
   * fields alone do not. Worked out when first needed: most runs report nothing.
   */
  #secretList(): string[] {
    if (this.#secrets) return this.#secrets
    const open = new Set(this.#o.connector.publicCredentialFields ?? [])
    const secrets = secretValues(
      Object.fromEntries(Object.entries(this.#o.credentials).filter(([k]) => !open.has(k))),
    )
    const add = (v: string) => {
      if (v.length >= 8 && !secrets.includes(v)) secrets.push(v)
    }
    // From the first request only: a signed header (OAuth 1) differs per request, its credentials do not.
    if (this.#first) {
      const { before, sent } = this.#first
      for (const [k, v] of Object.entries(sent.headers)) {
        if (before.headers[k] === v || k === 'accept' || k === 'content-type') continue
        add(v)
        const scheme = /^(?:Basic|Bearer|Token|OAuth)\s+(.+)$/i.exec(v)
        if (scheme) add(scheme[1])
      }
      const had = new URLSearchParams(before.query)
      for (const [k, v] of sent.query) if (had.get(k) !== v) add(v)
    }
    this.#secrets = secrets
    return secrets
  }
}

/**
 * A path a URL parse leaves as it is: segments of unreserved and sub-delimiter characters, `:` and
 * `@`, none of them `.` or `..`. The query needs no check: URLSearchParams writes only what a parse
 * keeps.
 */
const PLAIN_PATH = /^(?:\/(?!\.\.?(?:\/|$))[A-Za-z0-9\-._~!$&'()*+,;=:@]*)+$/

/** Base addresses parsed once each (a client is made per run); few distinct ones exist. */
const parsedBases = new Map<string, { origin: string; host: string; basePath: string }>()

function parsedBase(baseUrl: string): { origin: string; host: string; basePath: string } {
  let parsed = parsedBases.get(baseUrl)
  if (!parsed) {
    const base = new URL(baseUrl)
    parsed = { origin: base.origin, host: base.host, basePath: base.pathname.replace(/\/$/, '') }
    if (parsedBases.size >= 1_000) parsedBases.clear()
    parsedBases.set(baseUrl, parsed)
  }
  return parsed
}

function defaultMessage(text: string): string {
  try {
    const j = JSON.parse(text)
    const m = j?.error?.message ?? j?.message ?? j?.error
    if (typeof m === 'string') return m
  } catch {}
  return text.trim().slice(0, 200) || '(empty response)'
}

function parseBody(text: string, headers: Record<string, string>): unknown {
  if (text === '') return null
  const type = headers['content-type'] ?? ''
  if (type.includes('json') || /^[[{"]/.test(text.trimStart())) {
    try {
      return JSON.parse(text)
    } catch {}
  }
  return text
}

function toSearchParams(query: UpstreamRequest['query']): URLSearchParams {
  const qs = new URLSearchParams()
  if (!query) return qs
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null) continue
    if (Array.isArray(v)) qs.set(k, v.join(','))
    else qs.set(k, String(v))
  }
  return qs
}

function lowerKeys(h: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  if (h) for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = v
  return out
}

function flattenHeaders(h: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const k in h) {
    const v = h[k]
    if (v !== undefined) out[k] = typeof v === 'string' ? v : v.join(', ')
  }
  return out
}
