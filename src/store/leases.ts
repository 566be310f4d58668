// One instance at a time: a named lease in the store, taken when free or expired, renewed by its
// holder. (Work with many items is claimed per row instead; this is for one periodic task.)
import type { Kysely } from 'kysely'
import type { Database } from './schema.ts'

export class Leases {
  #db: Kysely<Database>

  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  /** Takes (or renews) the lease for `ms`; true when `holder` has it now. */
  async take(name: string, holder: string, ms: number): Promise<boolean> {
    const now = new Date()
    const expires = new Date(now.getTime() + ms).toISOString()
    await this.#db
      .insertInto('leases')
      .values({ name, holder, expires_at: expires })
      .onConflict((oc) =>
        oc
          .column('name')
          .doUpdateSet({ holder, expires_at: expires })
          .where((eb) =>
            eb.or([eb('leases.expires_at', '<', now.toISOString()), eb('leases.holder', '=', holder)]),
          ),
      )
      .execute()
    const row = await this.#db
      .selectFrom('leases')
      .select('holder')
      .where('name', '=', name)
      .executeTakeFirst()
    return row?.holder === holder
  }
}
