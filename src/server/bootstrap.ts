// First start: an empty store gets a workspace ("Default") and an owner key of it. The key is shown once (or
// taken from PATCHBAY_ADMIN_KEY) and only its hash is kept. Instances started together on one
// PostgreSQL take turns (a transaction lock), so they create one workspace between them.
import { sql } from 'kysely'
import { ApiKeys } from '../store/api-keys.ts'
import type { Store } from '../store/database.ts'

export interface BootstrapResult {
  workspaceId: string
  /** The admin key in clear, when one was generated now (print it once). */
  generatedAdminKey: string | null
}

/** Any fixed number of ours: the lock instances take turns on while bootstrapping. */
const BOOTSTRAP_LOCK = 7_254_002

export async function bootstrapWorkspace(store: Store, adminKey: string | null): Promise<BootstrapResult> {
  return store.db.transaction().execute(async (trx) => {
    if (store.kind === 'postgres') await sql`SELECT pg_advisory_xact_lock(${BOOTSTRAP_LOCK})`.execute(trx)
    const keys = new ApiKeys(trx)
    let ws = await keys.firstWorkspace()
    let generated: string | null = null
    if (!ws) {
      ws = await keys.createWorkspace('Default')
      const created = await keys.create({
        workspaceId: ws.id,
        kind: 'workspace',
        role: 'owner',
        name: 'first-start key',
        key: adminKey ?? undefined,
      })
      if (!adminKey) generated = created.key
    } else if (adminKey && !(await keys.findByKey(adminKey))) {
      await keys.create({
        workspaceId: ws.id,
        kind: 'workspace',
        role: 'owner',
        name: 'PATCHBAY_ADMIN_KEY',
        key: adminKey,
      })
    }
    return { workspaceId: ws.id, generatedAdminKey: generated }
  })
}
