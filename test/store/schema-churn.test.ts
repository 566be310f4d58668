// A PostgreSQL store migrates while other clients create and drop schemas in the same database
// (other deployments, or other test files running in parallel). Kysely's own introspection read
// every schema's tables by name, so a schema dropped meanwhile failed a migration with "schema …
// does not exist" (seen as a flake of the store tests run in parallel; 2 of 15 starts failed under
// this churn). The store now reads only its own schema. Required under CI=true; skipped with the
// reason without PostgreSQL.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import pg from 'pg'
import { openStore } from '../../src/store/database.ts'
import { POSTGRES_URL, postgresUnavailableReason } from '../helpers/databases.ts'

const unavailable = await postgresUnavailableReason()
if (unavailable && process.env.CI === 'true')
  throw new Error(`${unavailable}; under CI=true PostgreSQL is required.`)

test('migrations are not disturbed by schemas other clients drop meanwhile', {
  skip: unavailable ?? false,
}, async () => {
  const tag = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  const churn = new pg.Client({ connectionString: POSTGRES_URL })
  await churn.connect()
  let stop = false
  const churning = (async () => {
    for (let i = 0; !stop; i++) {
      const s = `pb_churn_${tag}_${i}`
      await churn.query(`CREATE SCHEMA "${s}"`)
      await churn.query(`CREATE TABLE "${s}".t (id serial primary key, v text)`)
      await churn.query(`DROP SCHEMA "${s}" CASCADE`)
    }
  })()
  const schemas = Array.from({ length: 6 }, (_, k) => `pb_migrating_${tag}_${k}`)
  const failures: string[] = []
  try {
    for (const schema of schemas) {
      try {
        const store = await openStore({ databaseUrl: POSTGRES_URL, pgSchema: schema })
        await store.close()
      } catch (err) {
        failures.push((err as Error).message)
      }
    }
  } finally {
    stop = true
    await churning
    for (const s of schemas) await churn.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`)
    await churn.end()
  }
  assert.deepEqual(failures, [])
})
