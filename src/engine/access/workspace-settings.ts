// The settings a workspace decides for itself, read on the step path from a cache that every
// instance drops when they change (the engine's changes). One setting so far:
// - allowInlineAuth: agent keys may give credentials in a step's input (the Task-Board API Call's
//   `auth` with an API key and token) instead of using one of the agent's connections. Off by
//   default: an agent is held to its connections, and the `auth` field is not offered to models.
import { z } from 'zod'
import { validationError } from '../../kit/errors.ts'
import type { WorkspaceSettingsRows } from '../../store/workspace-settings.ts'
import type { Changes } from '../changes/changes.ts'

export const WorkspaceSettingsInput = z
  .object({
    allowInlineAuth: z
      .boolean()
      .optional()
      .describe(
        "Agent keys may run API Call steps with credentials given inline (auth: api_key_token) instead of the agent's connections; the auth field is offered to models only then. Default false.",
      ),
  })
  .strict()

export interface WorkspaceSettingsView {
  allowInlineAuth: boolean
}

export class WorkspaceSettings {
  #rows: WorkspaceSettingsRows
  #changes: Changes
  #cache = new Map<string, Promise<WorkspaceSettingsView>>()

  constructor(deps: { rows: WorkspaceSettingsRows; changes: Changes }) {
    this.#rows = deps.rows
    this.#changes = deps.changes
    deps.changes.subscribe('workspaces', (ids) => {
      if (ids.length === 0) this.#cache.clear()
      for (const id of ids) this.#cache.delete(id)
    })
  }

  get(workspaceId: string): Promise<WorkspaceSettingsView> {
    let hit = this.#cache.get(workspaceId)
    if (!hit) {
      hit = this.#rows.get(workspaceId).then((doc) => viewOf(doc ?? {}))
      hit.catch(() => this.#cache.delete(workspaceId))
      this.#cache.set(workspaceId, hit)
    }
    return hit
  }

  async update(workspaceId: string, changes: unknown): Promise<WorkspaceSettingsView> {
    const parsed = WorkspaceSettingsInput.safeParse(changes)
    if (!parsed.success) throw validationError(parsed.error.issues, '')
    const given = Object.fromEntries(Object.entries(parsed.data).filter(([, v]) => v !== undefined))
    const merged = await this.#rows.merge(workspaceId, given)
    if (!merged) throw new Error(`there is no workspace ${workspaceId}`)
    this.#cache.delete(workspaceId)
    await this.#changes.publishNow('workspaces', [workspaceId])
    return viewOf(merged)
  }
}

function viewOf(doc: Record<string, unknown>): WorkspaceSettingsView {
  return { allowInlineAuth: doc.allowInlineAuth === true }
}
