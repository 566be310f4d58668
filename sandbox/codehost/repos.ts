// Repository-level changes: creation, forks, stars, subscriptions and collaborators.
import { commitFiles } from './branches.ts'
import { ApiError, type Ctx, validationFailed } from './context.ts'
import { emit, envelope } from './events.ts'
import { legacyPermission, roleOf } from './permissions.ts'
import type { Invitation, Label, Repo, Role, User } from './store.ts'
import { repoView, userView } from './views.ts'

const DEFAULT_LABELS: [string, string, string][] = [
  ['bug', 'd73a4a', "Something isn't working"],
  ['documentation', '0075ca', 'Improvements or additions to documentation'],
  ['duplicate', 'cfd3d7', 'This issue or pull request already exists'],
  ['enhancement', 'a2eeef', 'New feature or request'],
  ['good first issue', '7057ff', 'Good for newcomers'],
  ['help wanted', '008672', 'Extra attention is needed'],
  ['invalid', 'e4e669', "This doesn't seem right"],
  ['question', 'd876e3', 'Further information is requested'],
  ['wontfix', 'ffffff', 'This will not be worked on'],
]

export interface RepoInput {
  name: string
  description?: string | null
  homepage?: string | null
  private?: boolean
  autoInit?: boolean
  hasIssues?: boolean
  hasProjects?: boolean
  hasWiki?: boolean
  hasDiscussions?: boolean
  defaultBranch?: string
}

export function newRepo(ctx: Ctx, owner: User, input: RepoInput, parentId: number | null = null): Repo {
  const store = ctx.store
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(input.name) || input.name === '.' || input.name === '..')
    throw validationFailed(
      [{ resource: 'Repository', code: 'custom', field: 'name', message: 'name is invalid' }],
      'Repository creation failed.',
    )
  if (store.repoByName(owner.login, input.name))
    throw validationFailed(
      [
        {
          resource: 'Repository',
          code: 'custom',
          field: 'name',
          message: 'name already exists on this account',
        },
      ],
      'Repository creation failed.',
    )
  const now = ctx.emulator.clock.iso()
  const labels = new Map<number, Label>()
  if (parentId === null)
    for (const [name, color, description] of DEFAULT_LABELS) {
      const id = store.nextId('label', 5_000_001)
      labels.set(id, { id, name, color, description, isDefault: true })
    }
  const repo: Repo = {
    id: store.nextId('repo', 700_000_001),
    ownerId: owner.id,
    name: input.name,
    description: input.description ?? null,
    homepage: input.homepage ?? null,
    private: input.private ?? false,
    parentId,
    defaultBranch: input.defaultBranch ?? 'main',
    createdAt: now,
    updatedAt: now,
    // A new repository counts as pushed when it is made, as upstream.
    pushedAt: now,
    hasIssues: input.hasIssues ?? true,
    hasProjects: input.hasProjects ?? true,
    hasWiki: input.hasWiki ?? true,
    hasDiscussions: input.hasDiscussions ?? false,
    archived: false,
    topics: [],
    branches: new Map(),
    tags: new Map(),
    collaborators: new Map(),
    stars: new Map(),
    watchers: new Map(),
    labels,
    nextNumber: 1,
    issues: new Map(),
    discussions: new Map(),
    workflows: [],
    runs: [],
    hooks: [],
    releases: [],
  }
  store.repos.set(repo.id, repo)
  return repo
}

export function createRepo(ctx: Ctx, actor: User, owner: User, input: RepoInput): Repo {
  const repo = newRepo(ctx, owner, input)
  // Upstream makes the creator a watcher of their new repository.
  repo.watchers.set(actor.id, repo.createdAt)
  emit(ctx, 'repository', { action: 'created', ...envelope(ctx, repo, actor) }, { repo })
  if (input.autoInit) {
    const readme = `# ${repo.name}\n${repo.description ? `\n${repo.description}\n` : ''}`
    commitFiles(ctx, repo, repo.defaultBranch, actor, 'Initial commit', [
      { path: 'README.md', content: Buffer.from(readme) },
    ])
  }
  return repo
}

export function forkRepo(
  ctx: Ctx,
  actor: User,
  source: Repo,
  opts: { owner?: User; name?: string; defaultBranchOnly?: boolean },
): Repo {
  const owner = opts.owner ?? actor
  const store = ctx.store
  const existing = [...store.repos.values()].find((r) => r.ownerId === owner.id && r.parentId === source.id)
  if (existing) return existing
  if (source.ownerId === owner.id && !opts.name)
    throw validationFailed(
      [
        {
          resource: 'Repository',
          code: 'custom',
          field: 'name',
          message: 'name already exists on this account',
        },
      ],
      'Repository creation failed.',
    )
  const fork = newRepo(
    ctx,
    owner,
    {
      name: opts.name ?? source.name,
      description: source.description,
      homepage: source.homepage,
      private: source.private,
      defaultBranch: source.defaultBranch,
      hasIssues: false,
    },
    source.id,
  )
  for (const [name, sha] of source.branches)
    if (!opts.defaultBranchOnly || name === source.defaultBranch) fork.branches.set(name, sha)
  for (const [name, sha] of source.tags) fork.tags.set(name, sha)
  for (const l of source.labels.values()) {
    const id = store.nextId('label', 5_000_001)
    fork.labels.set(id, { ...l, id })
  }
  fork.workflows = source.workflows.map((w) => ({
    ...w,
    id: store.nextId('workflow', 160_000_001),
    repoId: fork.id,
    nextRunNumber: 1,
  }))
  fork.pushedAt = source.pushedAt
  emit(
    ctx,
    'fork',
    {
      forkee: { ...repoView(ctx, fork, null, false), public: !fork.private },
      ...envelope(ctx, source, actor),
    },
    { repo: source },
  )
  return fork
}

export function star(ctx: Ctx, actor: User, repo: Repo): void {
  if (repo.stars.has(actor.id)) return
  const at = ctx.emulator.clock.iso()
  repo.stars.set(actor.id, at)
  emit(ctx, 'star', { action: 'created', starred_at: at, ...envelope(ctx, repo, actor) }, { repo })
  // Upstream's `watch` event is the legacy name for starring and fires alongside `star`.
  emit(ctx, 'watch', { action: 'started', ...envelope(ctx, repo, actor) }, { repo })
}

export function unstar(ctx: Ctx, actor: User, repo: Repo): void {
  if (!repo.stars.delete(actor.id)) return
  emit(ctx, 'star', { action: 'deleted', starred_at: null, ...envelope(ctx, repo, actor) }, { repo })
}

/** (choice) A new subscription (watching) also emits `watch` started. */
export function subscribe(ctx: Ctx, actor: User, repo: Repo): string {
  const existing = repo.watchers.get(actor.id)
  if (existing) return existing
  const at = ctx.emulator.clock.iso()
  repo.watchers.set(actor.id, at)
  emit(ctx, 'watch', { action: 'started', ...envelope(ctx, repo, actor) }, { repo })
  return at
}

/** Adds a collaborator by invitation (201) or changes an existing collaborator's role (204). */
export function inviteCollaborator(
  ctx: Ctx,
  actor: User,
  repo: Repo,
  invitee: User,
  role: Role,
): Invitation | null {
  const store = ctx.store
  if (invitee.id === repo.ownerId)
    throw validationFailed([
      {
        resource: 'Repository',
        code: 'custom',
        field: 'collaborator',
        message: 'Repository owner cannot be a collaborator',
      },
    ])
  if (invitee.type !== 'User')
    throw validationFailed([
      {
        resource: 'Repository',
        code: 'custom',
        field: 'collaborator',
        message: 'Organizations cannot be collaborators',
      },
    ])
  if (repo.collaborators.has(invitee.id)) {
    repo.collaborators.set(invitee.id, role)
    return null
  }
  const pending = [...store.invitations.values()].find(
    (i) => i.repoId === repo.id && i.inviteeId === invitee.id,
  )
  if (pending) {
    pending.role = role
    return pending
  }
  const inv: Invitation = {
    id: store.nextId('invitation', 40_000_001),
    repoId: repo.id,
    inviteeId: invitee.id,
    inviterId: actor.id,
    role,
    createdAt: ctx.emulator.clock.iso(),
  }
  store.invitations.set(inv.id, inv)
  return inv
}

export function acceptInvitation(ctx: Ctx, inv: Invitation): void {
  const store = ctx.store
  const repo = store.repo(inv.repoId)
  store.invitations.delete(inv.id)
  addCollaborator(ctx, store.user(inv.inviterId), repo, store.user(inv.inviteeId), inv.role)
}

export function addCollaborator(ctx: Ctx, actor: User, repo: Repo, user: User, role: Role): void {
  if (repo.collaborators.has(user.id)) {
    repo.collaborators.set(user.id, role)
    return
  }
  repo.collaborators.set(user.id, role)
  emit(
    ctx,
    'member',
    {
      action: 'added',
      member: userView(ctx, user),
      changes: { permission: { to: role } },
      ...envelope(ctx, repo, actor),
    },
    { repo },
  )
}

export function removeCollaborator(ctx: Ctx, actor: User, repo: Repo, user: User): void {
  for (const inv of ctx.store.invitations.values())
    if (inv.repoId === repo.id && inv.inviteeId === user.id) ctx.store.invitations.delete(inv.id)
  if (!repo.collaborators.delete(user.id)) return
  emit(
    ctx,
    'member',
    { action: 'removed', member: userView(ctx, user), ...envelope(ctx, repo, actor) },
    { repo },
  )
}

export function collaboratorView(ctx: Ctx, repo: Repo, user: User) {
  const role = roleOf(ctx.store, repo, user.id)
  return {
    ...userView(ctx, user),
    permissions: {
      admin: role === 'admin',
      maintain: role === 'admin' || role === 'maintain',
      push: role === 'admin' || role === 'maintain' || role === 'write',
      triage: role !== 'read' && role !== null,
      pull: role !== null,
    },
    role_name: role ?? 'none',
  }
}

export function permissionView(ctx: Ctx, repo: Repo, user: User) {
  const role = roleOf(ctx.store, repo, user.id)
  return {
    permission: legacyPermission(role),
    role_name: role ?? 'none',
    user: collaboratorView(ctx, repo, user),
  }
}

export function ensureNotArchived(repo: Repo): void {
  if (repo.archived) throw new ApiError(403, 'Repository was archived so is read-only.')
}
