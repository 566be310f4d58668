// The contact-data error body: `{ "error": { "code", "message" } }`, with a code per status.
import type { FastifyReply } from 'fastify'

const CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'invalid_api_key',
  402: 'insufficient_credits',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'invalid_request',
  429: 'rate_limited',
  500: 'internal_error',
  502: 'bad_gateway',
  503: 'service_unavailable',
  504: 'gateway_timeout',
}

export function codeFor(status: number, message = ''): string {
  // The shell's JSON parser reports bad JSON as a 400 with this message.
  if (status === 400 && message === 'Problems parsing JSON') return 'invalid_json'
  return CODES[status] ?? (status >= 500 ? 'internal_error' : 'error')
}

export function sendError(
  reply: FastifyReply,
  status: number,
  message: string,
  code = codeFor(status, message),
) {
  let text = message
  if (code === 'invalid_json') text = 'The body is not valid JSON'
  // The shell's not-found handler says only "Not Found"; naming the call helps whoever made it.
  if (status === 404 && message === 'Not Found')
    text = `No such endpoint: ${reply.request.method} ${reply.request.url.split('?')[0]}`
  return reply
    .code(status)
    .type('application/json; charset=utf-8')
    .send({ error: { code, message: text } })
}
