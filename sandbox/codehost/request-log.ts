// The sandbox's memory of the API requests it answered and its answers, for tests that check what
// a client sent (the User-Agent, the operation, its parameters and body) and what the sandbox
// answered against the published description. Credentials are never kept. Bounded: the oldest
// entries go first.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { keepNewest } from '../common/keep-newest.ts'

export interface LoggedRequest {
  method: string
  /** The path as sent, without the query. */
  path: string
  /** The route that answered (`/repos/:owner/:repo/issues`), or null when none did (404). */
  route: string | null
  query: Record<string, string>
  headers: Record<string, string>
  body: unknown
  /** False when a body was sent but answered before it was read (a rate-limit refusal). */
  bodyRead: boolean
  status: number
  /** The answer's JSON body (null when it was not JSON). */
  response: unknown
}

const LIMIT = 5000
const SECRET_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization'])

export class RequestLog {
  #entries: LoggedRequest[] = []
  #answers = new WeakMap<FastifyRequest, unknown>()

  get entries(): readonly LoggedRequest[] {
    return this.#entries
  }

  clear(): void {
    this.#entries = []
  }

  /** Keeps the answer's body (an onSend hook). */
  keepAnswer = async (req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> => {
    if (typeof payload === 'string' && String(reply.getHeader('content-type') ?? '').includes('json')) {
      try {
        this.#answers.set(req, JSON.parse(payload))
      } catch {}
    }
    return payload
  }

  /** Records every request of the scope it is added to, once answered. */
  hook = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const [path, qs = ''] = req.url.split('?')
    if (path.startsWith('/_sandbox')) return
    const headers: Record<string, string> = {}
    for (const [k, v] of Object.entries(req.headers))
      if (v !== undefined && !SECRET_HEADERS.has(k)) headers[k] = Array.isArray(v) ? v.join(', ') : v
    const route = req.routeOptions.url
    this.#entries.push({
      method: req.method,
      path,
      route: route && route !== '*' ? route : null,
      query: Object.fromEntries(new URLSearchParams(qs)),
      headers,
      body: req.body ?? null,
      // A request that sent no body is known to have none; one that did is known once parsed.
      bodyRead:
        req.body !== undefined ||
        req.rawBody !== undefined ||
        (!req.headers['content-length'] && !req.headers['transfer-encoding']),
      status: reply.statusCode,
      response: this.#answers.get(req) ?? null,
    })
    keepNewest(this.#entries, LIMIT)
  }

  register(app: FastifyInstance): void {
    app.get('/_sandbox/requests', async () => ({ requests: this.#entries }))
    app.delete('/_sandbox/requests', async (_req, reply) => {
      this.clear()
      return reply.code(204).send()
    })
  }
}
