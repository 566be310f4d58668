// The migrations in src/store/migrations/, applied in name order on start, the same for SQLite
// and PostgreSQL. Add a new file for each change; never edit one that has shipped.
import fs from 'node:fs/promises'
import path from 'node:path'
import { FileMigrationProvider, type Kysely, Migrator } from 'kysely'

const folder = path.join(import.meta.dirname, 'migrations')

const migratorOf = <DB>(db: Kysely<DB>, schema?: string) =>
  new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder: folder }),
    migrationTableSchema: schema,
    // Parts are built side by side, so a lower-numbered migration can land after a higher one
    // was applied to an existing data directory; each migration stands on its own.
    allowUnorderedMigrations: true,
  })

export async function migrate<DB>(db: Kysely<DB>, schema?: string): Promise<void> {
  const migrator = migratorOf(db, schema)
  // On PostgreSQL the store's introspection reads its own schema only (database.ts): a schema
  // another client drops meanwhile cannot fail this.
  const { error, results } = await migrator.migrateToLatest()
  const failed = results?.find((r) => r.status === 'Error')
  if (error || failed) {
    throw new Error(
      `Database migration ${failed?.migrationName ?? ''} failed: ${(error as Error)?.message ?? 'unknown'}`,
    )
  }
}

/** The migrations this code knows that the database has not applied (readiness). */
export async function migrationStatus<DB>(db: Kysely<DB>, schema?: string): Promise<{ pending: string[] }> {
  const all = await migratorOf(db, schema).getMigrations()
  return { pending: all.filter((m) => !m.executedAt).map((m) => m.name) }
}
