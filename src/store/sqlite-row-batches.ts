// SQLite: the multi-row INSERTs of the event path (a group commit's events and deliveries, a send
// batch's attempts) and of the run records' flushes, as statements of a few fixed sizes, each
// prepared once and kept.
//
// A multi-row INSERT built for each batch has a text of its own for every number of rows, so
// node:sqlite prepared it at every call (the dialect keeps only short statements,
// node-sqlite-dialect.ts), and Kysely built and compiled it first: in a profile of the event
// benchmark (SQLite, 256 senders) that was 90 of the 840 ms of CPU each second, more than the
// statements' own work. Here a batch goes in chunks of 64, 32, 16, 8, 4, 2 and 1 rows (at most
// seven statements, in the rows' order, so their seqs keep it), whose texts are made once and
// handed to the store as written, skipping Kysely's compiler. Seven sizes of each of four
// statements: a bounded set, unlike texts made for every batch, whose native memory V8 does not see.
//
// Why not one statement over the rows as a JSON parameter (`json_each`), as PostgreSQL takes
// arrays (`unnest`)? Measured with node:sqlite: reading each column back out of the JSON cost more
// than preparing the statement (8.7 µs a row against 6.3 at 40 rows; chunks: 4.1).
import { CompiledQuery, type Kysely } from 'kysely'
import { KEPT_STATEMENT } from './node-sqlite-dialect.ts'
import type { Database } from './schema.ts'

/** The sizes a batch is cut into, largest first (powers of two: any count in at most seven statements). */
const CHUNK_SIZES = [64, 32, 16, 8, 4, 2, 1] as const

/** What a multi-row INSERT is of: a table, its columns (in the order values are given), what a conflict is on, what it returns. */
export interface RowBatchShape<Row> {
  table: keyof Database & string
  /**
   * Every column of a row, each `true` (the type check fails when one is missing or unknown), in
   * the order values are given; a column a row leaves out (an optional one) is NULL.
   */
  columns: { readonly [K in keyof Required<Row> & string]: true }
  /** Columns with the same value in every row, written into the statement (`{ listed: 0 }`). */
  fixed?: Readonly<Record<string, number>>
  /** `ON CONFLICT (…) DO NOTHING` on these columns (none: no conflict clause). */
  conflictDoNothing?: readonly string[]
  /** `RETURNING …` these columns (none: nothing returned). */
  returning?: readonly string[]
}

/** One multi-row INSERT on SQLite, its statement's text made once for each chunk size. */
export class RowBatchInsert<Row, Returned = Record<string, unknown>> {
  readonly shape: RowBatchShape<Row>
  readonly columns: ReadonlyArray<keyof Row & string>
  #texts = new Map<number, string>()
  constructor(shape: RowBatchShape<Row>) {
    this.shape = shape
    this.columns = Object.keys(shape.columns) as Array<keyof Row & string>
  }

  /**
   * Inserts `rows` in chunks of fixed sizes, in their order; answers the rows the statements
   * returned (those inserted, with `returning`), in that order. Run it in a transaction when the
   * rows must go in together.
   */
  async run(db: Kysely<Database>, rows: readonly Row[]): Promise<Returned[]> {
    const { columns } = this
    const out: Returned[] = []
    let at = 0
    for (const size of CHUNK_SIZES)
      while (rows.length - at >= size) {
        const params: unknown[] = []
        for (let i = at; i < at + size; i++) {
          const row = rows[i] as Record<string, unknown>
          for (const c of columns) params.push(row[c] ?? null)
        }
        const result = await db.executeQuery<Returned>(CompiledQuery.raw(this.#text(size), params))
        for (const r of result.rows) out.push(r)
        at += size
      }
    return out
  }

  #text(size: number): string {
    const known = this.#texts.get(size)
    if (known !== undefined) return known
    const { columns } = this
    const { table, fixed = {}, conflictDoNothing = [], returning = [] } = this.shape
    const quote = (c: string) => `"${c}"`
    const fixedColumns = Object.entries(fixed)
    const row = `(${[...columns.map(() => '?'), ...fixedColumns.map(([, v]) => String(Number(v)))].join(', ')})`
    const text =
      `${KEPT_STATEMENT}insert into ${quote(table)} ` +
      `(${[...columns, ...fixedColumns.map(([c]) => c)].map(quote).join(', ')}) values ` +
      Array.from({ length: size }, () => row).join(', ') +
      (conflictDoNothing.length
        ? ` on conflict (${conflictDoNothing.map(quote).join(', ')}) do nothing`
        : '') +
      (returning.length ? ` returning ${returning.map(quote).join(', ')}` : '')
    this.#texts.set(size, text)
    return text
  }
}
