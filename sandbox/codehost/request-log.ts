// The sandbox's memory of the API requests it answered, for tests that check what a client sent
// (the User-Agent, the operation, its parameters and body) against the published description.
// Credentials are never kept. Bounded: the oldest entries go first.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

export interface LoggedRequest {
  method: string
  /** The path as sent, without the query. */
  path: string
  /** The route that answered (`/repos/:owner/:repo/issues`), or null when none did (404). */
  route: string | null
  query: Record<string, string>
  headers: Record<string, string>
  body: unknown
  status: number
}

const LIMIT = 5000
const SECRET_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization'])

export class RequestLog {
  #entries: LoggedRequest[] = []

  get entries(): readonly LoggedRequest[] {
    return this.#entries
  }

  clear(): void {
    this.#entries = []
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
      status: reply.statusCode,
    })
    if (this.#entries.length > LIMIT) this.#entries.splice(0, this.#entries.length - LIMIT)
  }

  register(app: FastifyInstance): void {
    app.get('/_sandbox/requests', async () => ({ requests: this.#entries }))
    app.delete('/_sandbox/requests', async (_req, reply) => {
      this.clear()
      return reply.code(204).send()
    })
  }
}
