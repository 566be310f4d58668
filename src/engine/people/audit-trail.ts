// What people's sign-ins, sessions, members and invitations write to the audit log. One thin
// call (record), so the people services do not care how the log is kept.
import type { Kysely } from 'kysely'
import { AuditLogRows } from '../../store/audit-log.ts'
import { newId, nowIso } from '../../store/ids.ts'
import type { AuditLogTable, Database } from '../../store/schema.ts'

export interface AuditActor {
  kind: AuditLogTable['actor_kind']
  id: string | null
  /** What a reader recognises: a person's email, a key's name. */
  label: string | null
}

/** Where a request came from: recorded with what it did. */
export interface RequestOrigin {
  address: string | null
  userAgent: string | null
}

export interface AuditEntry {
  workspaceId: string | null
  actor: AuditActor
  action: string
  object?: { kind: string; id: string } | null
  outcome: 'ok' | 'refused'
  /** What changed or why it was refused; never a secret. */
  detail?: Record<string, unknown>
  origin?: RequestOrigin
}

export const anonymous: AuditActor = { kind: 'anonymous', id: null, label: null }

export class AuditTrail {
  #rows: AuditLogRows
  constructor(db: Kysely<Database>) {
    this.#rows = new AuditLogRows(db)
  }

  /** Appends entries (one per workspace given, or one outside any workspace for an empty list). */
  async record(entry: Omit<AuditEntry, 'workspaceId'> & { workspaceIds: Array<string | null> }) {
    const ids = entry.workspaceIds.length > 0 ? entry.workspaceIds : [null]
    const at = nowIso()
    await this.#rows.insertMany(
      ids.map((workspaceId) => ({
        id: newId('aud'),
        workspace_id: workspaceId,
        actor_kind: entry.actor.kind,
        actor_id: entry.actor.id,
        actor_label: entry.actor.label,
        action: entry.action,
        object_kind: entry.object?.kind ?? null,
        object_id: entry.object?.id ?? null,
        outcome: entry.outcome,
        detail: entry.detail ?? null,
        address: entry.origin?.address ?? null,
        user_agent: entry.origin?.userAgent?.slice(0, 500) ?? null,
        created_at: at,
      })),
    )
  }
}
