// Jobs: long work with its progress (migration 0015). A job is claimed in its row (holder and a
// lease) before it is worked on, so one instance works on it at a time; a holder that stops is
// replaced once its lease ends. Only the holder writes progress (`holder = ?` in each write).
import type { Kysely } from 'kysely'
import { keyset, type PageKey, type PageRequest, pageOf } from './paging.ts'
import type { Database, JobsTable } from './schema.ts'

export type JobStatus = JobsTable['status']

/** A job with its JSON columns read. */
export type JobRow = Omit<JobsTable, 'caller' | 'input' | 'result' | 'error' | 'cancel_requested'> & {
  caller: unknown
  input: unknown
  result: unknown
  error: { code: string; message: string } | null
  cancelRequested: boolean
}

const read = (row: JobsTable): JobRow => {
  const { cancel_requested, ...rest } = row
  return {
    ...rest,
    done: Number(row.done),
    total: Number(row.total),
    errors: Number(row.errors),
    caller: JSON.parse(row.caller),
    input: JSON.parse(row.input),
    result: row.result === null ? null : JSON.parse(row.result),
    error: row.error === null ? null : JSON.parse(row.error),
    cancelRequested: Boolean(Number(cancel_requested)),
  }
}

export const FINISHED: readonly JobStatus[] = ['succeeded', 'failed', 'cancelled']

const JOBS_BY_ID: PageKey<{ id: string }> = { columns: [{ ref: 'id' }], of: (r) => [r.id] }

export class Jobs {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async insert(row: {
    id: string
    workspace_id: string
    kind: string
    caller: unknown
    input: unknown
    total: number
    created_at: string
  }): Promise<void> {
    await this.#db
      .insertInto('jobs')
      .values({
        ...row,
        status: 'queued',
        caller: JSON.stringify(row.caller),
        input: JSON.stringify(row.input),
        done: 0,
        errors: 0,
        cancel_requested: 0,
      })
      .execute()
  }

  async get(workspaceId: string, id: string): Promise<JobRow | undefined> {
    const row = await this.#db
      .selectFrom('jobs')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst()
    return row && read(row)
  }

  async byId(id: string): Promise<JobRow | undefined> {
    const row = await this.#db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst()
    return row && read(row)
  }

  /** Newest first; `before` is the id of the last job of the previous page (ids sort by time). */
  /**
   * Newest first (ids are time-ordered), a page at a time; `before` (an id) is the deprecated way
   * to page, kept for one release.
   */
  async list(workspaceId: string, f: PageRequest & { before?: string; status?: JobStatus }) {
    let q = this.#db.selectFrom('jobs').selectAll().where('workspace_id', '=', workspaceId)
    if (f.before) q = q.where('id', '<', f.before)
    if (f.status) q = q.where('status', '=', f.status)
    const { items, next } = pageOf(await keyset(q, JOBS_BY_ID, f).execute(), JOBS_BY_ID, f)
    return { items: items.map(read), next }
  }

  /** Unfinished jobs nobody holds: queued ones, and running ones whose holder's lease ended. */
  async claimable(nowIso: string, limit: number): Promise<string[]> {
    const rows = await this.#db
      .selectFrom('jobs')
      .select('id')
      .where((eb) =>
        eb.or([
          eb('status', '=', 'queued'),
          eb.and([eb('status', '=', 'running'), eb('lease_until', '<', nowIso)]),
        ]),
      )
      .orderBy('id')
      .limit(limit)
      .execute()
    return rows.map((r) => r.id)
  }

  /** Takes the job for `holder` until `leaseUntil`, when it is queued or its lease ended; true when taken. */
  async claim(id: string, holder: string, nowIso: string, leaseUntil: string): Promise<boolean> {
    const res = await this.#db
      .updateTable('jobs')
      .set((eb) => ({
        status: 'running',
        holder,
        lease_until: leaseUntil,
        started_at: eb.fn.coalesce('started_at', eb.val(nowIso)),
      }))
      .where('id', '=', id)
      .where((eb) =>
        eb.or([
          eb('status', '=', 'queued'),
          eb.and([eb('status', '=', 'running'), eb('lease_until', '<', nowIso)]),
        ]),
      )
      .executeTakeFirst()
    return Number(res.numUpdatedRows) === 1
  }

  /**
   * Writes the holder's progress and renews its lease. Answers whether the holder still has the
   * job and whether a cancel was asked for (null: the job is no longer this holder's).
   */
  async progress(
    id: string,
    holder: string,
    values: { done: number; errors: number; result: unknown; leaseUntil: string },
  ): Promise<{ cancelRequested: boolean } | null> {
    const res = await this.#db
      .updateTable('jobs')
      .set({
        done: values.done,
        errors: values.errors,
        result: JSON.stringify(values.result),
        lease_until: values.leaseUntil,
      })
      .where('id', '=', id)
      .where('holder', '=', holder)
      .where('status', '=', 'running')
      .executeTakeFirst()
    if (Number(res.numUpdatedRows) !== 1) return null
    const row = await this.#db
      .selectFrom('jobs')
      .select('cancel_requested')
      .where('id', '=', id)
      .executeTakeFirst()
    return { cancelRequested: Boolean(Number(row?.cancel_requested ?? 0)) }
  }

  /** Ends the holder's job; false when it was no longer the holder's. */
  async finish(
    id: string,
    holder: string,
    values: {
      status: 'succeeded' | 'failed' | 'cancelled'
      done: number
      errors: number
      result: unknown
      error: { code: string; message: string } | null
      finishedAt: string
    },
  ): Promise<boolean> {
    const res = await this.#db
      .updateTable('jobs')
      .set({
        status: values.status,
        done: values.done,
        errors: values.errors,
        result: JSON.stringify(values.result),
        error: values.error && JSON.stringify(values.error),
        finished_at: values.finishedAt,
        holder: null,
        lease_until: null,
      })
      .where('id', '=', id)
      .where('holder', '=', holder)
      .where('status', '=', 'running')
      .executeTakeFirst()
    return Number(res.numUpdatedRows) === 1
  }

  /** Gives the job back (its holder is stopping): claimable at once by another instance. */
  async release(id: string, holder: string, nowIso: string): Promise<void> {
    await this.#db
      .updateTable('jobs')
      .set({ holder: null, lease_until: nowIso })
      .where('id', '=', id)
      .where('holder', '=', holder)
      .where('status', '=', 'running')
      .execute()
  }

  /**
   * Asks for a cancel: a queued job ends cancelled at once, a running one at its next progress
   * write. Answers the job as it is now, or undefined when there is none.
   */
  async requestCancel(workspaceId: string, id: string, nowIso: string): Promise<JobRow | undefined> {
    await this.#db
      .updateTable('jobs')
      .set({
        status: 'cancelled',
        finished_at: nowIso,
        cancel_requested: 1,
      })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .where('status', '=', 'queued')
      .execute()
    await this.#db
      .updateTable('jobs')
      .set({ cancel_requested: 1 })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .where('status', '=', 'running')
      .execute()
    return this.get(workspaceId, id)
  }
}
