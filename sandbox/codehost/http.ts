// Request and reply helpers shared by the routes: the error body, JSON bodies that the code-host
// parses whatever the content type says, and page-number pagination with a Link header.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, type Ctx, DOCS, type FieldError } from './context.ts'

export function sendError(
  reply: FastifyReply,
  status: number,
  message: string,
  errors?: Array<FieldError | string>,
  docs = DOCS,
): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'application/json; charset=utf-8')
    .send({ message, ...(errors ? { errors } : {}), documentation_url: docs, status: String(status) })
}

/**
 * The code host refuses a request without a `User-Agent` before anything else (no rate-limit
 * headers, not JSON): a 403 in plain text. Its API and its token exchange alike.
 */
export async function requireUserAgent(req: FastifyRequest, reply: FastifyReply) {
  if (String(req.headers['user-agent'] ?? '').trim() !== '') return
  return reply
    .code(403)
    .header('content-type', 'text/html')
    .header('connection', 'close')
    .send(
      'Request forbidden by administrative rules. Please make sure your request has a User-Agent header (https://docs.codehost.com/rest/using-the-rest-api/getting-started-with-the-rest-api#user-agent). Check https://developer.codehost.com for other possible causes.\n',
    )
}

export function writeApiError(reply: FastifyReply, err: ApiError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v)
  // A redirect names where to go in its body too: { message, url, documentation_url }.
  if (err.status === 301 || err.status === 307)
    return reply
      .code(err.status)
      .header('content-type', 'application/json; charset=utf-8')
      .send({ message: err.message, url: err.headers.location, documentation_url: err.docs })
  return sendError(reply, err.status, err.message, err.errors, err.docs)
}

export type Params = Record<string, string>
export type Query = Record<string, string | undefined>

export const params = (req: FastifyRequest): Params => req.params as Params
/** Query parameters as strings; a repeated parameter counts once, by its last value. */
export function query(req: FastifyRequest): Query {
  const out: Query = {}
  for (const [k, v] of Object.entries((req.query ?? {}) as Record<string, unknown>))
    out[k] = Array.isArray(v) ? String(v.at(-1)) : v === undefined ? undefined : String(v)
  return out
}

/** The JSON body as an object. The code-host reads JSON whatever the content type claims. */
export function body(req: FastifyRequest): Record<string, any> {
  let b: unknown = req.body
  const type = String(req.headers['content-type'] ?? '')
  if (!type.includes('json') && typeof req.rawBody === 'string') {
    if (req.rawBody.trim() === '') b = undefined
    else {
      try {
        b = JSON.parse(req.rawBody)
      } catch {
        throw new ApiError(400, 'Problems parsing JSON')
      }
    }
  }
  if (b === undefined || b === null) return {}
  if (typeof b !== 'object' || Array.isArray(b)) throw new ApiError(400, 'Problems parsing JSON')
  return b as Record<string, any>
}

export function expectString(b: Record<string, any>, key: string, required = false): string | undefined {
  const v = b[key]
  if (v === undefined || v === null) {
    if (required) throw new ApiError(422, `Invalid request.\n\n"${key}" wasn't supplied.`)
    return undefined
  }
  if (typeof v !== 'string')
    throw new ApiError(
      422,
      `Invalid request.\n\nFor 'properties/${key}', ${JSON.stringify(v)} is not a string.`,
    )
  return v
}

export function expectBool(b: Record<string, any>, key: string): boolean | undefined {
  const v = b[key]
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'boolean')
    throw new ApiError(
      422,
      `Invalid request.\n\nFor 'properties/${key}', ${JSON.stringify(v)} is not a boolean.`,
    )
  return v
}

export function expectStringArray(b: Record<string, any>, key: string): string[] | undefined {
  const v = b[key]
  if (v === undefined || v === null) return undefined
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))
    throw new ApiError(
      422,
      `Invalid request.\n\nFor 'properties/${key}', ${JSON.stringify(v)} is not an array of strings.`,
    )
  return v as string[]
}

export function intParam(value: string | undefined): number {
  if (!value || !/^\d+$/.test(value)) throw new ApiError(404, 'Not Found')
  return Number(value)
}

/** Slices `items` by `per_page` (default 30, max 100) and `page`, and writes the Link header. */
export function paginate<T>(ctx: Ctx, req: FastifyRequest, reply: FastifyReply, items: T[]): T[] {
  const q = query(req)
  const perPage = Math.min(100, Math.max(1, Number.parseInt(q.per_page ?? '30', 10) || 30))
  const page = Math.max(1, Number.parseInt(q.page ?? '1', 10) || 1)
  const last = Math.max(1, Math.ceil(items.length / perPage))
  const path = req.url.split('?')[0]
  const link = (p: number) => {
    const sp = new URLSearchParams(req.url.split('?')[1] ?? '')
    sp.set('per_page', String(perPage))
    sp.set('page', String(p))
    return `${ctx.url}${path}?${sp.toString()}`
  }
  const rels: string[] = []
  if (page > 1) rels.push(`<${link(Math.min(page - 1, last))}>; rel="prev"`)
  if (page < last) rels.push(`<${link(page + 1)}>; rel="next"`)
  if (page < last) rels.push(`<${link(last)}>; rel="last"`)
  if (page > 1) rels.push(`<${link(1)}>; rel="first"`)
  if (rels.length) reply.header('link', rels.join(', '))
  return items.slice((page - 1) * perPage, page * perPage)
}

export function isoOrUndefined(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined
  const t = Date.parse(value)
  if (Number.isNaN(t)) throw new ApiError(422, `Invalid value for parameter '${name}': ${value}`)
  return t
}
