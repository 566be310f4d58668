// Every change made through the API goes to the audit log from here: the routes whose rule in the
// policy table names an `action` are recorded as they answer, done (`ok`) or refused (`refused`,
// with the status and error code), with who called, the object (the handler's req.audited, the
// path's id, or the id a create answers with), the address and the user agent. Never the body:
// what a handler wants kept it says in req.audited.detail (secrets are stripped even there).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { actorOf } from '../engine/access/audit.ts'
import type { Engine } from '../engine/engine.ts'

export interface Audited {
  objectId?: string | null
  objectKind?: string | null
  /** The workspace the entry belongs to, when not the caller's (null: none, e.g. a deleted one). */
  workspaceId?: string | null
  detail?: Record<string, unknown>
}

declare module 'fastify' {
  interface FastifyRequest {
    /** What the handler tells the audit log about the change (object id, detail). */
    audited: Audited | null
    /** The request passed the policy (its handler ran or was about to). */
    passedPolicy: boolean
  }
}

const PATH_IDS = ['id', 'agentId', 'toolId', 'keyId', 'seq', 'stepId', 'connector'] as const

function idInPayload(payload: unknown): string | null {
  if (typeof payload !== 'string' || payload.length > 200_000) return null
  try {
    const id = (JSON.parse(payload) as { id?: unknown }).id
    return typeof id === 'string' ? id : null
  } catch {
    return null
  }
}

function errorCode(payload: unknown): string | null {
  if (typeof payload !== 'string') return null
  try {
    return (JSON.parse(payload) as { error?: { code?: string } }).error?.code ?? null
  } catch {
    return null
  }
}

export function installAuditLog(app: FastifyInstance, engine: Engine): void {
  app.decorateRequest('audited', null)
  app.decorateRequest('passedPolicy', false)
  // Added after the policy's own preHandler: reached only when the policy let the request through.
  app.addHook('preHandler', (req, _reply, done) => {
    req.passedPolicy = true
    done()
  })
  app.addHook('onSend', (req: FastifyRequest, reply: FastifyReply, payload: unknown, done) => {
    const rule = req.is404 ? undefined : req.routeOptions.config?.rule
    const action = rule?.action
    // Reads have no action; a request no one could be named for (no valid credentials) is not kept;
    // a route that records itself is left to its service once the policy let it through.
    if (!action || (!req.caller && !req.person) || (rule.recordsItself && req.passedPolicy))
      return done(null, payload)
    const status = reply.statusCode
    const ok = status < 400
    const a = req.audited ?? {}
    const params = (req.params ?? {}) as Record<string, string | undefined>
    const pathId = PATH_IDS.map((p) => params[p]).find((v) => v !== undefined)
    engine.audit
      .record({
        workspaceId: a.workspaceId !== undefined ? a.workspaceId : (req.caller?.workspaceId ?? null),
        actor: actorOf(req.caller ?? null, req.person?.personId),
        action,
        objectKind: a.objectKind ?? action.slice(0, action.indexOf('.')),
        objectId: a.objectId ?? pathId ?? (ok && status === 201 ? idInPayload(payload) : null),
        outcome: ok ? 'ok' : 'refused',
        detail: ok ? (a.detail ?? null) : { ...a.detail, status, code: errorCode(payload) },
        address: req.ip,
        userAgent: typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : null,
      })
      .then(
        () => done(null, payload),
        (err) => {
          req.log.warn({ err, action }, 'could not record a change in the audit log')
          done(null, payload)
        },
      )
  })
}
