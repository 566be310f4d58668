// The workspaces a person belongs to and their role in each, as authentication reads them on every
// request a person makes: cached per person, and dropped on every instance at once when a
// membership changes (the engine's changes, topic `memberships`), so a removed member or a lowered
// role takes effect from the next request on, everywhere.
//
// Changing a role or removing a member also ends the workspace keys that person made there: on
// removal all of them, on a role change those whose role is now above the person's.
import type { ApiKeys } from '../../store/api-keys.ts'
import type { Memberships as MembershipRepo } from '../../store/memberships.ts'
import type { Role } from '../../store/schema.ts'
import type { Changes } from '../changes/changes.ts'
import { ROLES, roleAtLeast } from './caller.ts'
import type { KeyRevocations } from './key-revocations.ts'

/** A person's workspaces: their role in each, and the one they act on when a request names none. */
export interface PersonWorkspaces {
  readonly roles: ReadonlyMap<string, Role>
  /** Their oldest membership's workspace; null when they belong to none. */
  readonly first: string | null
}

const CACHE_MS = 30_000

export class MembershipService {
  #repo: MembershipRepo
  #keys: ApiKeys
  #changes: Changes
  #revocations: KeyRevocations
  #cache = new Map<string, { value: PersonWorkspaces; at: number }>()
  /**
   * Counts the changes heard: a read begun before a change is not cached after it. Otherwise a
   * person's request reading their memberships while another of theirs made a workspace (or
   * while they were removed from one) could cache the list as it was, after the change had
   * dropped it: the new workspace refused (404) or the removed one still allowed, for CACHE_MS.
   */
  #generation = 0

  constructor(d: { repo: MembershipRepo; keys: ApiKeys; changes: Changes; revocations: KeyRevocations }) {
    this.#repo = d.repo
    this.#keys = d.keys
    this.#changes = d.changes
    this.#revocations = d.revocations
    d.changes.subscribe('memberships', (personIds) => {
      this.#generation++
      if (personIds.length === 0) this.#cache.clear()
      for (const id of personIds) this.#cache.delete(id)
    })
  }

  /** A person's workspaces: from the cache without a promise, else from the store. */
  of(personId: string): PersonWorkspaces | Promise<PersonWorkspaces> {
    const hit = this.#cache.get(personId)
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.value
    return this.#load(personId)
  }

  async #load(personId: string): Promise<PersonWorkspaces> {
    const generation = this.#generation
    const rows = await this.#repo.ofPerson(personId)
    const value: PersonWorkspaces = {
      roles: new Map(rows.map((r) => [r.workspace_id, r.role])),
      first: rows[0]?.workspace_id ?? null,
    }
    if (generation !== this.#generation) return value
    if (this.#cache.size > 10_000) this.#cache.clear()
    this.#cache.set(personId, { value, at: Date.now() })
    return value
  }

  list(workspaceId: string) {
    return this.#repo.ofWorkspace(workspaceId)
  }

  find(workspaceId: string, personId: string) {
    return this.#repo.find(workspaceId, personId)
  }

  /**
   * Adds a person to a workspace or changes their role; the workspace keys they made there with a
   * role above the new one are revoked. Returns the ids of the keys revoked.
   */
  async put(workspaceId: string, personId: string, role: Role): Promise<string[]> {
    await this.#repo.put(workspaceId, personId, role)
    const above = ROLES.filter((r) => !roleAtLeast(role, r))
    const revoked = await this.#keys.revokeMadeBy(workspaceId, personId, above)
    this.#changed(personId, revoked)
    return revoked
  }

  /** Removes a person from a workspace and revokes the workspace keys they made there. */
  async remove(workspaceId: string, personId: string): Promise<{ removed: boolean; revokedKeys: string[] }> {
    const removed = await this.#repo.remove(workspaceId, personId)
    const revokedKeys = await this.#keys.revokeMadeBy(workspaceId, personId, ROLES)
    this.#changed(personId, revokedKeys)
    return { removed, revokedKeys }
  }

  #changed(personId: string, revokedKeys: string[]) {
    this.#changes.publish('memberships', [personId])
    if (revokedKeys.length > 0) this.#revocations.publish(revokedKeys)
  }
}
