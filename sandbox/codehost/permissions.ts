// Who may do what on a repository, independent of how the caller authenticated.
import { type Repo, ROLE_ORDER, type Role, type Store } from './store.ts'

export function roleAtLeast(role: Role | null, need: Role): boolean {
  return role !== null && ROLE_ORDER.indexOf(role) >= ROLE_ORDER.indexOf(need)
}

/** The user's role on the repository; public repositories give everyone read. */
export function roleOf(store: Store, repo: Repo, userId: number | null): Role | null {
  if (userId !== null) {
    if (repo.ownerId === userId) return 'admin'
    const owner = store.users.get(repo.ownerId)
    const orgRole = owner?.members.get(userId)
    if (orgRole === 'admin') return 'admin'
    const collab = repo.collaborators.get(userId)
    if (collab) return collab
    if (orgRole === 'member') return 'read'
  }
  return repo.private ? null : 'read'
}

/** Maps the REST `permission` parameter (pull|push|triage|maintain|admin) to a role. */
export function roleFromPermission(p: string): Role | null {
  const map: Record<string, Role> = {
    pull: 'read',
    read: 'read',
    triage: 'triage',
    push: 'write',
    write: 'write',
    maintain: 'maintain',
    admin: 'admin',
  }
  return map[p] ?? null
}

/** The legacy `permission` value of the collaborator-permission endpoint. */
export function legacyPermission(role: Role | null): 'admin' | 'write' | 'read' | 'none' {
  if (role === 'admin') return 'admin'
  if (role === 'write' || role === 'maintain') return 'write'
  if (role === 'read' || role === 'triage') return 'read'
  return 'none'
}
