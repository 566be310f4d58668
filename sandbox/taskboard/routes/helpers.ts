// Small pieces every route module uses.
import type { FastifyRequest } from 'fastify'
import type { Emulator } from '../../common/emulator-app.ts'
import type { Ctx } from '../access.ts'
import { invalidValue } from '../errors.ts'
import { HEX24, type Params } from '../params.ts'
import type { RateLimits } from '../rate-limits.ts'
import type { Store } from '../store.ts'
import type { WebhookHub } from '../webhooks.ts'

export interface Deps {
  store: Store
  hub: WebhookHub
  limits: RateLimits
  emulator: Emulator
}

declare module 'fastify' {
  interface FastifyRequest {
    tb?: Ctx
  }
}

/** Query and body parameters together, the body winning, as the real service reads them. */
export function params(req: FastifyRequest): Params {
  const query = (req.query ?? {}) as Params
  const body =
    req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? (req.body as Params) : {}
  return { ...query, ...body }
}

export function ctxOf(req: FastifyRequest): Ctx {
  return req.tb!
}

export function idParam(req: FastifyRequest, name = 'id'): string {
  return (req.params as Record<string, string>)[name]!
}

export function viewerOf(ctx: Ctx): string | null {
  return ctx.member?.id ?? null
}

interface Dated {
  id: string
  seq: number
  date: number
}

/**
 * `since`/`before` bounds of a listing: an id of an item in the same listing, or a date.
 * Newest first, at most `limit`, page `page`.
 */
export function window<T extends Dated>(items: T[], p: Params, all: T[]): T[] {
  const bound = (field: 'since' | 'before'): ((x: T) => boolean) => {
    const v = p[field]
    if (v === undefined || v === '' || v === null) return () => true
    if (typeof v !== 'string') throw invalidValue(field)
    let ref: { seq?: number; date?: number }
    if (HEX24.test(v)) {
      const found = all.find((x) => x.id === v)
      ref = found ? { seq: found.seq } : { date: parseInt(v.slice(0, 8), 16) * 1000 }
    } else {
      const ms = Date.parse(v)
      if (!Number.isFinite(ms)) throw invalidValue(field)
      ref = { date: ms }
    }
    const after = field === 'since'
    return (x) =>
      ref.seq !== undefined
        ? after
          ? x.seq > ref.seq
          : x.seq < ref.seq
        : after
          ? x.date > ref.date!
          : x.date < ref.date!
  }
  const limit = p.limit === undefined ? 50 : Number(p.limit)
  if (!Number.isInteger(limit) || limit < 0 || limit > 1000) throw invalidValue('limit')
  const page = p.page === undefined ? 0 : Number(p.page)
  if (!Number.isInteger(page) || page < 0) throw invalidValue('page')
  const since = bound('since')
  const before = bound('before')
  return items
    .filter((x) => since(x) && before(x))
    .sort((a, b) => b.seq - a.seq)
    .slice(page * limit, page * limit + limit)
}
