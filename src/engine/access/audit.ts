// The audit log: who changed what, when and from where, append-only. Every change made through
// the API is recorded by one hook (server/audit-hook.ts, driven by the policy table's action
// names), refused attempts included; services record what happens outside a route (sign-in, a
// workspace's owner claimed) with record(). Never a secret: details are stripped of anything
// named like one before they are stored.

import type { Kysely } from 'kysely'
import type { AuditLogRows, AuditQuery, AuditRow } from '../../store/audit-log.ts'
import { newId, nowIso } from '../../store/ids.ts'
import type { Database } from '../../store/schema.ts'
import type { Caller } from './caller.ts'

export interface AuditActor {
  kind: 'person' | 'key' | 'anonymous' | 'system'
  id: string | null
}

export interface AuditEntry {
  workspaceId: string | null
  actor: AuditActor
  /** `key.created`, `member.role_changed`, `auth.sign_in_failed` … */
  action: string
  objectKind?: string | null
  objectId?: string | null
  outcome: 'ok' | 'refused'
  /** What changed; anything named like a secret is dropped. */
  detail?: Record<string, unknown> | null
  address?: string | null
  userAgent?: string | null
}

/** The actor of a request's caller: the person when one is signed in, else the key. */
export function actorOf(caller: Caller | null, personId?: string | null): AuditActor {
  if (caller?.kind === 'person' || (!caller && personId))
    return { kind: 'person', id: caller?.personId ?? personId ?? null }
  if (caller?.keyId) return { kind: 'key', id: caller.keyId }
  return { kind: 'anonymous', id: null }
}

const SECRET_NAME = /secret|password|token|credential|^key$|apikey|authorization|cookie/i

/** A copy of `value` without any field named like a secret (at any depth). */
export function withoutSecrets(value: unknown, depth = 0): unknown {
  if (depth > 5 || value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) return value.slice(0, 50).map((v) => withoutSecrets(v, depth + 1))
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) if (!SECRET_NAME.test(k)) out[k] = withoutSecrets(v, depth + 1)
  return out
}

export interface AuditView {
  id: string
  at: string
  actor: { kind: AuditRow['actor_kind']; id: string | null; label: string | null }
  action: string
  object: { kind: string | null; id: string | null }
  outcome: 'ok' | 'refused'
  detail: unknown
  address: string | null
  userAgent: string | null
}

export const auditView = (r: AuditRow): AuditView => ({
  id: r.id,
  at: r.created_at,
  actor: { kind: r.actor_kind, id: r.actor_id, label: r.actor_label },
  action: r.action,
  object: { kind: r.object_kind, id: r.object_id },
  outcome: r.outcome,
  detail: r.detail,
  address: r.address,
  userAgent: r.user_agent,
})

const LABEL_CACHE_MS = 300_000

export class AuditLog {
  #rows: AuditLogRows
  #db: Kysely<Database>
  #labels = new Map<string, { label: string | null; at: number }>()

  constructor(d: { rows: AuditLogRows; db: Kysely<Database> }) {
    this.#rows = d.rows
    this.#db = d.db
  }

  async record(e: AuditEntry): Promise<void> {
    const detail = e.detail ? (withoutSecrets(e.detail) as Record<string, unknown>) : null
    await this.#rows.insert({
      id: newId('aud'),
      workspace_id: e.workspaceId,
      actor_kind: e.actor.kind,
      actor_id: e.actor.id,
      actor_label: await this.#label(e.actor),
      action: e.action,
      object_kind: e.objectKind ?? null,
      object_id: e.objectId ?? null,
      outcome: e.outcome,
      detail,
      address: e.address ?? null,
      user_agent: e.userAgent ? e.userAgent.slice(0, 300) : null,
      created_at: nowIso(),
    })
  }

  async list(workspaceId: string, q: AuditQuery): Promise<{ entries: AuditView[]; next: string | null }> {
    const page = await this.#rows.list(workspaceId, q)
    return { entries: page.entries.map(auditView), next: page.next }
  }

  /** What a reader recognises: the person's email, or the key's name and prefix. */
  async #label(actor: AuditActor): Promise<string | null> {
    if (!actor.id || (actor.kind !== 'person' && actor.kind !== 'key')) return null
    const hit = this.#labels.get(actor.id)
    if (hit && Date.now() - hit.at < LABEL_CACHE_MS) return hit.label
    let label: string | null = null
    if (actor.kind === 'person') {
      const p = await this.#db
        .selectFrom('people')
        .select('email')
        .where('id', '=', actor.id)
        .executeTakeFirst()
      label = p?.email ?? null
    } else {
      const k = await this.#db
        .selectFrom('api_keys')
        .select(['name', 'key_prefix'])
        .where('id', '=', actor.id)
        .executeTakeFirst()
      label = k ? `${k.name} (${k.key_prefix}…)` : null
    }
    if (this.#labels.size > 10_000) this.#labels.clear()
    this.#labels.set(actor.id, { label, at: Date.now() })
    return label
  }
}
