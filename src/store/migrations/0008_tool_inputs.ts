// A tool's declared inputs (JSON, nullable): what {{input.…}} may read, checked when it is saved.
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tools').addColumn('inputs', 'text').execute()
}
