// First start: an empty store gets a workspace and an admin key. The key is shown once (or
// taken from PATCHBAY_ADMIN_KEY) and only its hash is kept.
import type { ApiKeys } from '../store/api-keys.ts'

export interface BootstrapResult {
  workspaceId: string
  /** The admin key in clear, when one was generated now (print it once). */
  generatedAdminKey: string | null
}

export async function bootstrapWorkspace(keys: ApiKeys, adminKey: string | null): Promise<BootstrapResult> {
  let ws = await keys.firstWorkspace()
  let generated: string | null = null
  if (!ws) {
    ws = await keys.createWorkspace('Default workspace')
    const created = await keys.create({
      workspaceId: ws.id,
      kind: 'admin',
      name: 'admin',
      key: adminKey ?? undefined,
    })
    if (!adminKey) generated = created.key
  } else if (adminKey && !(await keys.findByKey(adminKey))) {
    await keys.create({
      workspaceId: ws.id,
      kind: 'admin',
      name: 'admin (PATCHBAY_ADMIN_KEY)',
      key: adminKey,
    })
  }
  return { workspaceId: ws.id, generatedAdminKey: generated }
}
