// The one paging shape of every list route: `limit` and `cursor` in, `next` out (the cursor of the
// next page, null on the last; opaque: pass it back as it came). The store pages by a key
// (store/paging.ts). The parameter a list paged with before (`before`: a seq or a createdAt) is
// accepted for one release: its answers carry a `Deprecation` header and a `Link` to the docs.
import type { FastifyReply } from 'fastify'
import { z } from 'zod'

/** `limit` (1…max, default 50) and `cursor`: the query of every list route. */
export function pageQuery(max: number) {
  return {
    limit: z.coerce.number().int().min(1).max(max).default(50),
    cursor: z
      .string()
      .max(500)
      .optional()
      .describe('The `next` of the previous page, as it came; leave out for the first (newest) page.'),
  }
}

/** `next` in every list's answer. */
export const nextCursor = z
  .string()
  .nullable()
  .describe('Pass as `cursor` for the next page; null on the last page.')

/** When `before` was deprecated (RFC 9745's Deprecation header: @ Unix time), 2026-11-25. */
const DEPRECATED_AT = 1_795_564_800

/** Marks an answer to a request that paged with a deprecated parameter. */
export function deprecatedPaging(reply: FastifyReply, used: boolean): void {
  if (!used) return
  reply.header('deprecation', `@${DEPRECATED_AT}`)
  reply.header('link', '</docs>; rel="deprecation"; title="Paging: pass next as cursor (docs/api.md#paging)"')
}
