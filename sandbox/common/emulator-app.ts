// The HTTP shell every emulator shares: body parsing that keeps the raw body, a body limit, fault
// injection, and the common part of the control API under /_sandbox. Each emulator adds its own
// routes, its own error body shape and its own control routes.
import type { IncomingMessage } from 'node:http'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import { Clock } from './clock.ts'
import { type FaultSpec, Faults } from './faults.ts'
import { keepNewest } from './keep-newest.ts'
import { type Persistent, StateFile } from './persistence.ts'
import { sleep, WebhookSender } from './webhook-sender.ts'

declare module 'fastify' {
  interface FastifyRequest {
    rawBody?: string
  }
}

export interface Emulator {
  app: FastifyInstance
  clock: Clock
  faults: Faults
  webhooks: WebhookSender
  /**
   * The requests received (control calls excepted), oldest first: at least the last 20,000 (up to
   * 21,000 between trims); a reset keeps them.
   */
  requests: RequestRecord[]
  /**
   * Keeps the emulator's state in `file`: reads it now if it exists (true when it did), then
   * writes it shortly after every request that may change something, and at close.
   */
  persistTo(file: string, state: Persistent): boolean
}

/** One request as it arrived, for tests that check what a client sent (`emulator.requests`). */
export interface RequestRecord {
  method: string
  /** Path and query as sent. */
  url: string
  userAgent: string | null
  contentType: string | null
  /** The raw body, if any. */
  body: string | null
  status: number
}

const REQUESTS_KEPT = 20_000

export interface EmulatorOptions {
  /** Writes an error the way the real service does (plain text, JSON message, error object). */
  sendError: (reply: FastifyReply, status: number, message: string) => FastifyReply
  /** Clears the emulator's own state (accounts, data) back to its seeded start. */
  reset: () => void
  bodyLimit?: number
  logger?: boolean
  /** `/x/` answers as `/x` (the task-board does; the code host does not). */
  ignoreTrailingSlash?: boolean
  /** Paths match in any letter case; parameters keep theirs (the task-board's do). */
  caseInsensitive?: boolean
  /** Rewrites a request's path before routing (another spelling of the same route); the request log keeps the path as sent. */
  rewriteUrl?: (url: string) => string
}

export function createEmulator(opts: EmulatorOptions): Emulator {
  const clock = new Clock()
  const faults = new Faults(clock)
  const webhooks = new WebhookSender(clock, faults)
  const app = Fastify({
    logger: opts.logger ?? false,
    bodyLimit: opts.bodyLimit ?? 1024 * 1024,
    routerOptions: {
      ignoreTrailingSlash: opts.ignoreTrailingSlash ?? false,
      caseSensitive: !(opts.caseInsensitive ?? false),
    },
    rewriteUrl: (req: IncomingMessage) =>
      opts.rewriteUrl ? opts.rewriteUrl(req.url ?? '/') : (req.url ?? '/'),
  })

  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = body as string
    req.rawBody = text
    if (text.trim() === '') return done(null, undefined)
    try {
      done(null, JSON.parse(text))
    } catch {
      const err = new Error('Problems parsing JSON') as Error & { statusCode: number }
      err.statusCode = 400
      done(err, undefined)
    }
  })
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (req, body, done) => {
    req.rawBody = body as string
    done(null, Object.fromEntries(new URLSearchParams(body as string)))
  })
  app.addContentTypeParser('*', { parseAs: 'string' }, (req, body, done) => {
    req.rawBody = body as string
    done(null, body)
  })

  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    if (req.url.startsWith('/_sandbox')) return
    const fault = faults.forRequest(req.url)
    if (fault.latencyMs) await sleep(fault.latencyMs)
    if (fault.timeout) {
      // Hold the request open without answering until the client gives up.
      reply.hijack()
      return
    }
    if (fault.errorStatus !== null) return opts.sendError(reply, fault.errorStatus, 'Injected fault')
  })

  let stateFile: StateFile | null = null
  const READS = new Set(['GET', 'HEAD', 'OPTIONS'])
  app.addHook('onResponse', async (req) => {
    if (stateFile && !READS.has(req.method)) stateFile.changed()
  })
  app.addHook('onClose', async () => {
    stateFile?.save()
  })

  const requests: RequestRecord[] = []
  app.addHook('onResponse', async (req, reply) => {
    if (req.url.startsWith('/_sandbox')) return
    requests.push({
      method: req.method,
      url: req.originalUrl,
      userAgent: req.headers['user-agent'] ?? null,
      contentType: req.headers['content-type'] ?? null,
      body: req.rawBody ?? null,
      status: reply.statusCode,
    })
    keepNewest(requests, REQUESTS_KEPT)
  })

  app.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500
    const message =
      status === 413 ? 'Request body is too large' : status === 500 ? 'Internal error' : err.message
    return opts.sendError(reply, status, message)
  })
  app.setNotFoundHandler((_req, reply) => opts.sendError(reply, 404, 'Not Found'))

  // The common control API.
  app.post('/_sandbox/reset', async () => {
    clock.reset()
    faults.clear()
    webhooks.reset()
    opts.reset()
    return { ok: true }
  })
  app.get('/_sandbox/clock', async () => clock.toJSON())
  app.post('/_sandbox/clock', async (req) => {
    const body = (req.body ?? {}) as {
      freeze?: boolean
      atMs?: number
      advanceMs?: number
      unfreeze?: boolean
    }
    if (body.freeze) clock.freeze(body.atMs)
    if (body.advanceMs) clock.advance(body.advanceMs)
    if (body.unfreeze) clock.unfreeze()
    return clock.toJSON()
  })
  app.get('/_sandbox/faults', async () => ({ faults: faults.list() }))
  app.post('/_sandbox/faults', async (req, reply) => {
    const fault = faults.add((req.body ?? {}) as FaultSpec)
    return reply.code(201).send(fault)
  })
  app.delete('/_sandbox/faults', async () => {
    faults.clear()
    return { ok: true }
  })
  app.get('/_sandbox/webhooks/deliveries', async (req) => {
    const q = req.query as { hookId?: string; event?: string; outcome?: string }
    return {
      deliveries: webhooks.deliveries
        .filter((d) => !q.hookId || d.hookId === q.hookId)
        .filter((d) => !q.event || d.event === q.event)
        .filter((d) => !q.outcome || d.outcome === q.outcome),
    }
  })
  app.post('/_sandbox/webhooks/retry-delay-scale', async (req) => {
    const body = (req.body ?? {}) as { scale?: number }
    if (typeof body.scale === 'number') webhooks.retryDelayScale = body.scale
    return { scale: webhooks.retryDelayScale }
  })

  const persistTo = (file: string, state: Persistent) => {
    stateFile = new StateFile(file, state)
    return stateFile.load()
  }

  return { app, clock, faults, webhooks, requests, persistTo }
}

/** Listens on `port` (0 = ephemeral) and returns the base address. */
export async function listen(app: FastifyInstance, port: number, host = '127.0.0.1'): Promise<string> {
  await app.listen({ port, host })
  const addr = app.server.address()
  if (!addr || typeof addr === 'string') throw new Error('emulator has no TCP address')
  return `http://${host}:${addr.port}`
}
