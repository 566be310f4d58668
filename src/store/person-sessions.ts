// People's sign-in sessions (migration 0010) and the failed sign-ins counted against an account or
// an address (migration 0012). A session is a random token in the browser's cookie; only its
// SHA-256 is stored, so the table is useless to whoever reads it.
import { createHash, randomBytes } from 'node:crypto'
import { type Kysely, sql } from 'kysely'
import { newId, nowIso } from './ids.ts'
import { byCreated, keyset, type Page, type PageRequest, pageOf } from './paging.ts'
import type { Database, PersonSessionsTable } from './schema.ts'

export type PersonSessionRow = PersonSessionsTable

/** Lists of sessions page newest first: by (created_at, id), descending. */
const NEWEST_FIRST = byCreated<PersonSessionRow>()

export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex')

/** A random token of 32 bytes (256 bits), prefixed so it can be recognised in a leak scan. */
export const newToken = (prefix: string) => `${prefix}_${randomBytes(32).toString('base64url')}`

export class PersonSessions {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  /** Stores a new session and returns it with its token in clear (for the cookie, once). */
  async create(opts: {
    personId: string
    ttlMs: number
    method: PersonSessionRow['method']
    address: string | null
    userAgent: string | null
  }): Promise<{ row: PersonSessionRow; token: string }> {
    const token = newToken('pbs')
    const now = Date.now()
    const row: PersonSessionRow = {
      id: newId('ses'),
      person_id: opts.personId,
      token_hash: hashToken(token),
      created_at: new Date(now).toISOString(),
      last_seen_at: new Date(now).toISOString(),
      expires_at: new Date(now + opts.ttlMs).toISOString(),
      ended_at: null,
      address: opts.address,
      user_agent: opts.userAgent?.slice(0, 500) ?? null,
      method: opts.method,
    }
    await this.#db.insertInto('person_sessions').values(row).execute()
    return { row, token }
  }

  async byToken(token: string): Promise<PersonSessionRow | undefined> {
    return this.#db
      .selectFrom('person_sessions')
      .selectAll()
      .where('token_hash', '=', hashToken(token))
      .executeTakeFirst()
  }

  async touch(id: string, at: string): Promise<void> {
    await this.#db.updateTable('person_sessions').set({ last_seen_at: at }).where('id', '=', id).execute()
  }

  /** A person's sessions that have not ended or expired, newest first. */
  /** A person's live sessions, newest first, a page at a time. */
  async pageLiveForPerson(personId: string, page: PageRequest): Promise<Page<PersonSessionRow>> {
    const q = this.#db
      .selectFrom('person_sessions')
      .selectAll()
      .where('person_id', '=', personId)
      .where('ended_at', 'is', null)
      .where('expires_at', '>', nowIso())
    return pageOf(await keyset(q, NEWEST_FIRST, page).execute(), NEWEST_FIRST, page)
  }

  /** Ends one of a person's sessions; returns whether a live one was ended. */
  async end(personId: string, id: string): Promise<boolean> {
    const ended = await this.#db
      .updateTable('person_sessions')
      .set({ ended_at: nowIso() })
      .where('id', '=', id)
      .where('person_id', '=', personId)
      .where('ended_at', 'is', null)
      .returning('id')
      .executeTakeFirst()
    return ended !== undefined
  }

  /** Ends every live session of a person (but `except`); returns the ids ended. */
  async endAll(personId: string, except?: string): Promise<string[]> {
    let q = this.#db
      .updateTable('person_sessions')
      .set({ ended_at: nowIso() })
      .where('person_id', '=', personId)
      .where('ended_at', 'is', null)
    if (except) q = q.where('id', '!=', except)
    const rows = await q.returning('id').execute()
    return rows.map((r) => r.id)
  }
}

/** The state of one counter after a failure, or before an attempt. */
export interface AttemptWindow {
  failures: number
  windowStartedAt: string
}

export class SignInAttempts {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  /** The failures counted in the window that started after `since`, per key given. */
  async current(keys: string[], since: string): Promise<Map<string, AttemptWindow>> {
    const rows = await this.#db
      .selectFrom('sign_in_attempts')
      .selectAll()
      .where('key', 'in', keys)
      .where('window_started_at', '>', since)
      .execute()
    return new Map(rows.map((r) => [r.key, { failures: r.failures, windowStartedAt: r.window_started_at }]))
  }

  /**
   * Counts a failure against each key in one statement per key: a window older than `since`
   * starts again at this failure. Atomic in the database, so instances counting at once add up.
   */
  async fail(keys: string[], now: string, since: string): Promise<void> {
    for (const key of keys) {
      await this.#db
        .insertInto('sign_in_attempts')
        .values({ key, window_started_at: now, failures: 1 })
        .onConflict((oc) =>
          oc.column('key').doUpdateSet({
            failures: sql`CASE WHEN sign_in_attempts.window_started_at > ${since} THEN sign_in_attempts.failures + 1 ELSE 1 END`,
            window_started_at: sql`CASE WHEN sign_in_attempts.window_started_at > ${since} THEN sign_in_attempts.window_started_at ELSE ${now} END`,
          }),
        )
        .execute()
    }
  }

  /** Forgets an account's failures (after it signed in). */
  async clear(key: string): Promise<void> {
    await this.#db.deleteFrom('sign_in_attempts').where('key', '=', key).execute()
  }
}
