// Every error leaves the API in one shape: {"error":{"code","message","hint"?,…}}.
import type { FastifyError, FastifyInstance } from 'fastify'
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod'
import { PatchbayError, validationError } from '../kit/errors.ts'
import { VaultError } from '../store/vault.ts'

/**
 * `storeFailure` (the store's health) turns a failure that says the database is away or its disk
 * full into the clear 503/507 it is, instead of a 500.
 */
export function installErrorHandling(
  app: FastifyInstance,
  storeFailure: (err: unknown, opts: { ingress: boolean }) => PatchbayError | null = () => null,
): void {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    let e: PatchbayError
    const away =
      err instanceof PatchbayError ? null : storeFailure(err, { ingress: req.url.startsWith('/hooks/') })
    if (err instanceof PatchbayError) e = err
    else if (away) e = away
    else if (hasZodFastifySchemaValidationErrors(err)) {
      const where = err.validationContext ?? 'body'
      e = validationError(
        err.validation.map((v) => ({
          path: v.instancePath.split('/').filter(Boolean),
          message: v.message ?? 'invalid',
        })),
        where === 'querystring' ? 'query' : where,
      )
    } else if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      e = new PatchbayError('UNSUPPORTED_MEDIA_TYPE', 'The request body must be JSON.', {
        hint: 'Send Content-Type: application/json.',
      })
    } else if (
      err.statusCode === 400 &&
      (err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
        err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
        err instanceof SyntaxError)
    ) {
      e = new PatchbayError('MALFORMED_JSON', `The request body is not valid JSON: ${err.message}`, {
        hint: 'Send a valid JSON document.',
      })
    } else if (err.statusCode === 413) {
      e = new PatchbayError('BODY_TOO_LARGE', 'The request body is too large.', {
        hint: 'Send a smaller body.',
      })
    } else if (err instanceof VaultError) {
      req.log.error({ err }, 'vault failure')
      e = new PatchbayError('VAULT_ERROR', err.message)
    } else if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      e = new PatchbayError('BAD_REQUEST', err.message, { status: err.statusCode })
    } else {
      req.log.error({ err }, 'unexpected error')
      e = new PatchbayError('INTERNAL', 'An unexpected error occurred; it has been logged.', {
        hint: 'Try again; if it persists, report it with the time of the request.',
      })
    }
    // A store away or full was told once by the store's health, not once per request.
    if (e.status >= 500 && !(err instanceof PatchbayError) && !away)
      req.log.error({ code: e.code }, e.message)
    // A refused request is logged once, at warn: its code and route, never its words (a message
    // may quote the input, and input may hold a secret).
    else if (e.status < 500)
      req.log.warn(
        { code: e.code, status: e.status, method: req.method, route: req.routeOptions.url ?? null },
        'request refused',
      )
    // When to ask again, in the header HTTP clients and upstreams read, as well as in the body.
    if (e.retryAfterMs !== undefined)
      reply.header('retry-after', String(Math.max(1, Math.ceil(e.retryAfterMs / 1000))))
    return reply.code(e.status).type('application/json').send(e.toBody())
  })
  app.setNotFoundHandler((req, reply) =>
    reply.code(404).send(
      new PatchbayError('ROUTE_NOT_FOUND', `There is no ${req.method} ${req.url.split('?')[0]}.`, {
        hint: 'See the API reference at /docs.',
      }).toBody(),
    ),
  )
}
