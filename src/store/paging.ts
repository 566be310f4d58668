// One keyset paging for every list the API pages. A list is ordered by a key of columns whose last
// is unique — by default (created_at, id), newest first; the event log's tables by their seq — and a
// page's `next` is an opaque cursor naming the key of its last row: the next page starts strictly
// after it. Rows that share a created_at (many made in one millisecond) are told apart by id, so
// none is skipped or repeated at a page edge, whatever the page size.
import { type Expression, type SelectQueryBuilder, type SqlBool, sql } from 'kysely'
import { PatchbayError } from '../kit/errors.ts'

/** One column of a list's key: its reference in the query, and whether it holds integers (a seq). */
export interface KeyColumn {
  ref: string
  int?: boolean
}

/** How a list is ordered: its key's columns (the last one unique) and the direction. */
export interface PageKey<R> {
  columns: readonly KeyColumn[]
  /** The row's values of the key, in column order. */
  of: (row: R) => ReadonlyArray<string | number>
  /** Newest (largest) first unless 'asc'. */
  order?: 'asc' | 'desc'
}

/** What a caller asks of a list: how many, and after which page (the previous page's `next`). */
export interface PageRequest {
  limit: number
  cursor?: string | null
}

/** A page: its rows, and the cursor of the next page (null on the last). */
export interface Page<R> {
  items: R[]
  next: string | null
}

/** The default key: created_at then id, newest first (or oldest first: 'asc'). */
export function byCreated<R extends { created_at: string; id: string }>(
  prefix = '',
  order: 'asc' | 'desc' = 'desc',
): PageKey<R> {
  return {
    columns: [{ ref: `${prefix}created_at` }, { ref: `${prefix}id` }],
    of: (r) => [r.created_at, r.id],
    order,
  }
}

/** Rows put in order in memory, oldest first by (created_at, id): as byCreated('', 'asc') reads them. */
export const oldestFirst = (a: { created_at: string; id: string }, b: { created_at: string; id: string }) =>
  a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0

/** A seq key (the event log's tables), newest first. */
export function bySeq<R extends { seq: number | string }>(ref = 'seq'): PageKey<R> {
  return { columns: [{ ref, int: true }], of: (r) => [Number(r.seq)] }
}

export function encodeCursor(values: ReadonlyArray<string | number>): string {
  return Buffer.from(values.join('|')).toString('base64url')
}

/** The key values a cursor names, or null for a cursor this key did not make. */
export function decodeCursor(cursor: string, key: PageKey<never>): Array<string | number> | null {
  const text = Buffer.from(cursor, 'base64url').toString('utf8')
  // Not as encodeCursor writes it (not base64url of text: bytes that are no UTF-8, padding, …).
  if (Buffer.from(text).toString('base64url') !== cursor) return null
  const parts = text.split('|')
  if (parts.length !== key.columns.length || parts.some((p) => p === '')) return null
  const values: Array<string | number> = []
  for (const [i, col] of key.columns.entries()) {
    if (!col.int) values.push(parts[i])
    else if (/^\d{1,15}$/.test(parts[i])) values.push(Number(parts[i]))
    else return null
  }
  return values
}

export function invalidCursor(): PatchbayError {
  return new PatchbayError('INVALID_CURSOR', 'query.cursor is not a cursor this list gave out.', {
    hint: 'Pass the next value of the previous page, or leave cursor out to start from the newest.',
  })
}

/**
 * Orders `q` by the key, starts it after the page's cursor (INVALID_CURSOR for one this list did
 * not give out) and fetches one row more than asked, which tells `pageOf` whether a next page exists.
 */
export function keyset<DB, TB extends keyof DB, O>(
  q: SelectQueryBuilder<DB, TB, O>,
  key: PageKey<never>,
  page: PageRequest,
): SelectQueryBuilder<DB, TB, O> {
  const order = key.order ?? 'desc'
  if (page.cursor) {
    const after = decodeCursor(page.cursor, key)
    if (!after) throw invalidCursor()
    q = q.where(after_(key.columns, after, order === 'desc' ? '<' : '>'))
  }
  for (const col of key.columns) q = q.orderBy(sql.ref(col.ref), order)
  return q.limit(page.limit + 1)
}

/** (c1 op v1) or (c1 = v1 and c2 op v2) or …: the rows after the cursor's, in the key's order. */
function after_(
  columns: readonly KeyColumn[],
  values: Array<string | number>,
  op: '<' | '>',
): Expression<SqlBool> {
  const ors = columns.map((col, i) => {
    const equal = columns.slice(0, i).map((c, j) => sql`${sql.ref(c.ref)} = ${values[j]}`)
    return sql.join([...equal, sql`${sql.ref(col.ref)} ${sql.raw(op)} ${values[i]}`], sql` and `)
  })
  return sql<SqlBool>`(${sql.join(
    ors.map((o) => sql`(${o})`),
    sql` or `,
  )})`
}

/** The page of rows `keyset` fetched: at most `limit`, and the cursor after the last when more follow. */
export function pageOf<R>(rows: R[], key: PageKey<R>, page: PageRequest): Page<R> {
  const items = rows.slice(0, page.limit)
  const last = items.at(-1)
  return { items, next: rows.length > page.limit && last !== undefined ? encodeCursor(key.of(last)) : null }
}
