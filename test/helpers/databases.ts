// The databases a store test runs on: embedded SQLite always, PostgreSQL when a server answers
// (required under CI=true; otherwise skipped with a printed reason).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'

export const POSTGRES_URL =
  process.env.PATCHBAY_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

export interface TestDatabase {
  name: 'sqlite' | 'postgres'
  /** Options for openStore / Config: a fresh SQLite directory or a fresh PostgreSQL schema. */
  fresh(): { databaseUrl: string | null; dataDir: string; pgSchema?: string }
}

let pgAvailable: Promise<string | null> | null = null

/**
 * null when PostgreSQL answers, else the reason it does not. It is asked a few times, 5 s each: a
 * loaded machine (CI runs six test files at once) once took over 2 s to answer a connection, and
 * the multi-instance files that asked skipped themselves. Under CI=true PostgreSQL is required: a
 * server that does not answer fails the file that asks instead of skipping it.
 */
export function postgresUnavailableReason(): Promise<string | null> {
  pgAvailable ??= (async () => {
    let reason: string | null = null
    for (let attempt = 1; attempt <= 3; attempt++) {
      const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 5000 })
      try {
        await client.connect()
        await client.query('select 1')
        return null
      } catch (err) {
        reason = `PostgreSQL at ${POSTGRES_URL} did not answer (${(err as Error).message})`
      } finally {
        await client.end().catch(() => {})
      }
      await new Promise((r) => setTimeout(r, 500))
    }
    if (process.env.CI === 'true') throw new Error(`${reason}; under CI=true PostgreSQL is required.`)
    return reason
  })()
  return pgAvailable
}

/**
 * The store service tests run on: PostgreSQL when PATCHBAY_TEST_DATABASE_URL is set (each
 * service its own fresh schema), else SQLite. `npm run test:postgres` runs the event-path and
 * trigger suites this way.
 */
export function serviceDatabase(): TestDatabase {
  return process.env.PATCHBAY_TEST_DATABASE_URL ? postgres : sqlite
}

const sqlite: TestDatabase = { name: 'sqlite', fresh: () => ({ databaseUrl: null, dataDir: tempDir() }) }

const postgres: TestDatabase = {
  name: 'postgres',
  fresh: () => ({
    databaseUrl: POSTGRES_URL,
    dataDir: tempDir(),
    pgSchema: `pb_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`,
  }),
}

export function tempDir(prefix = 'patchbay-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix))
}

export async function testDatabases(): Promise<{ databases: TestDatabase[]; skipped: string | null }> {
  const databases: TestDatabase[] = [sqlite]
  const reason = await postgresUnavailableReason()
  if (reason) {
    console.log(`# skipping PostgreSQL suites: ${reason}`)
    return { databases, skipped: reason }
  }
  databases.push(postgres)
  return { databases, skipped: null }
}
