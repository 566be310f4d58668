// Workspace keys: made by a workspace's admins (a person, or a key) with a role at most the
// maker's own and an optional expiry, shown once, listed with their maker and last use, revoked by
// any admin — on every instance at once (keyRevocations).
import { PatchbayError } from '../../kit/errors.ts'
import type { ApiKeyRow, ApiKeys } from '../../store/api-keys.ts'
import type { PageRequest } from '../../store/paging.ts'
import type { Role } from '../../store/schema.ts'
import { type Caller, roleAtLeast } from './caller.ts'
import type { KeyRevocations } from './key-revocations.ts'

export interface WorkspaceKeyView {
  id: string
  name: string
  role: Role
  /** The key's first characters, to recognise it (never the key). */
  prefix: string
  createdAt: string
  /** The person who made it; null for the first-start key and keys made by keys. */
  createdBy: string | null
  expiresAt: string | null
  lastUsedAt: string | null
  revokedAt: string | null
}

export const workspaceKeyView = (r: ApiKeyRow): WorkspaceKeyView => ({
  id: r.id,
  name: r.name,
  role: r.role ?? 'owner',
  prefix: r.key_prefix,
  createdAt: r.created_at,
  createdBy: r.created_by,
  expiresAt: r.expires_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
})

const keyNotFound = (id: string) =>
  new PatchbayError('KEY_NOT_FOUND', `This workspace has no key "${id}".`, {
    hint: 'List its keys with GET /v1/keys.',
  })

export class WorkspaceKeyService {
  #keys: ApiKeys
  #revocations: KeyRevocations

  constructor(d: { keys: ApiKeys; revocations: KeyRevocations }) {
    this.#keys = d.keys
    this.#revocations = d.revocations
  }

  /** The same, oldest first, a page at a time (GET /v1/keys). */
  async page(
    workspaceId: string,
    page: PageRequest,
  ): Promise<{ keys: WorkspaceKeyView[]; next: string | null }> {
    const { items, next } = await this.#keys.pageWorkspace(workspaceId, {}, page)
    return { keys: items.map(workspaceKeyView), next }
  }

  /** Makes a key of the caller's workspace; its role may not be above the caller's. */
  async create(
    caller: Caller,
    req: { name: string; role: Role; expiresAt?: string | null },
  ): Promise<WorkspaceKeyView & { key: string }> {
    if (!roleAtLeast(caller.role, req.role))
      throw new PatchbayError(
        'ROLE_FORBIDDEN',
        `A key may not have a role above its maker's: ${req.role} was asked for, the maker's role is ${caller.role}.`,
        { hint: `Ask for ${caller.role} or below, or have an owner make the key.` },
      )
    if (req.expiresAt && Date.parse(req.expiresAt) <= Date.now())
      throw new PatchbayError('VALIDATION_FAILED', 'Invalid input: expiresAt: must be in the future.', {
        hint: 'Give a time to come (ISO 8601), or leave expiresAt out for a key that does not expire.',
      })
    const { row, key } = await this.#keys.create({
      workspaceId: caller.workspaceId,
      kind: 'workspace',
      role: req.role,
      name: req.name,
      createdBy: caller.personId,
      expiresAt: req.expiresAt ? new Date(req.expiresAt).toISOString() : null,
    })
    return { ...workspaceKeyView(row), key }
  }

  /** Revokes a workspace key (already revoked: answered the same). */
  async revoke(workspaceId: string, id: string): Promise<WorkspaceKeyView> {
    const row = await this.#keys.findInWorkspace(workspaceId, id)
    if (row?.kind !== 'workspace') throw keyNotFound(id)
    if (!row.revoked_at) await this.#keys.revoke(id)
    this.#revocations.publish([id])
    return workspaceKeyView((await this.#keys.findInWorkspace(workspaceId, id)) ?? row)
  }
}
