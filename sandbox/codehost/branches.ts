// Moving refs and writing commits. Every change of a branch or tag goes through `updateRef`, so
// the push/create/delete events, pull request synchronize and workflow discovery happen whichever
// way the change came in (contents API, git refs API, merges, control-API pushes).

import { registerWorkflows } from './actions.ts'
import { ApiError, type Ctx } from './context.ts'
import { emit, envelope } from './events.ts'
import { commitChanges, commitsBetween, createCommit, putBlob } from './git.ts'
import { ZERO_SHA } from './ids.ts'
import { pullPayload } from './pulls.ts'
import type { Commit, GitPerson, Repo, User } from './store.ts'
import { repoHtml } from './views.ts'

export function personOf(ctx: Ctx, u: User): GitPerson {
  return {
    name: u.name ?? u.login,
    email: u.email ?? `${u.id}+${u.login}@users.noreply.codehost.local`,
    date: ctx.emulator.clock.iso(),
  }
}

function pushCommitView(ctx: Ctx, repo: Repo, c: Commit, distinct: boolean) {
  const store = ctx.store
  const files = commitChanges(store, c)
  const login = (id: number | null) => (id ? store.users.get(id)?.login : undefined)
  return {
    id: c.sha,
    tree_id: c.treeSha,
    distinct,
    message: c.message,
    timestamp: c.committer.date,
    url: `${repoHtml(ctx, repo)}/commit/${c.sha}`,
    author: { name: c.author.name, email: c.author.email, username: login(c.authorId) },
    committer: { name: c.committer.name, email: c.committer.email, username: login(c.committerId) },
    added: files.filter((f) => f.status === 'added').map((f) => f.filename),
    removed: files.filter((f) => f.status === 'removed').map((f) => f.filename),
    modified: files.filter((f) => f.status === 'modified').map((f) => f.filename),
  }
}

/** Sets (or with `sha: null` deletes) a branch or tag and emits what the code-host emits. */
export function updateRef(
  ctx: Ctx,
  repo: Repo,
  kind: 'branch' | 'tag',
  name: string,
  sha: string | null,
  actor: User,
  opts: { forced?: boolean } = {},
): void {
  const store = ctx.store
  const refs = kind === 'branch' ? repo.branches : repo.tags
  const before = refs.get(name) ?? ZERO_SHA
  const after = sha ?? ZERO_SHA
  if (before === after) return
  const created = before === ZERO_SHA
  const deleted = sha === null
  if (deleted) refs.delete(name)
  else refs.set(name, sha)
  const now = ctx.emulator.clock.iso()
  repo.pushedAt = now
  repo.updatedAt = now
  if (kind === 'branch' && repo.branches.size === 1 && created && !repo.branches.has(repo.defaultBranch))
    repo.defaultBranch = name

  const fullRef = `refs/${kind === 'branch' ? 'heads' : 'tags'}/${name}`
  if (created)
    emit(
      ctx,
      'create',
      {
        ref: name,
        ref_type: kind,
        master_branch: repo.defaultBranch,
        description: repo.description,
        pusher_type: 'user',
        ...envelope(ctx, repo, actor),
      },
      { repo },
    )
  if (deleted)
    emit(
      ctx,
      'delete',
      { ref: name, ref_type: kind, pusher_type: 'user', ...envelope(ctx, repo, actor) },
      { repo },
    )

  let commits: Commit[] = []
  if (!deleted && kind === 'branch') {
    if (created) {
      const base = name === repo.defaultBranch ? null : repo.branches.get(repo.defaultBranch)
      commits = base ? commitsBetween(store, base, after) : commitsBetween(store, ZERO_SHA, after).slice(-20)
    } else commits = commitsBetween(store, before, after)
  }
  const head = deleted ? null : store.commits.get(after)
  const viewCommits = commits.slice(-20).map((c) => pushCommitView(ctx, repo, c, true))
  emit(
    ctx,
    'push',
    {
      ref: fullRef,
      before,
      after,
      ...envelope(ctx, repo, actor),
      pusher: { name: actor.login, email: actor.email },
      created,
      deleted,
      forced: opts.forced ?? false,
      base_ref: null,
      compare: `${repoHtml(ctx, repo)}/compare/${before.slice(0, 12)}...${after.slice(0, 12)}`,
      commits: viewCommits,
      head_commit: head
        ? pushCommitView(
            ctx,
            repo,
            head,
            commits.some((c) => c.sha === head.sha),
          )
        : null,
    },
    { repo },
  )

  if (kind === 'branch' && !deleted) {
    if (name === repo.defaultBranch && head) registerWorkflows(ctx, repo, head)
    synchronizePulls(ctx, repo, name, before, after, actor)
  }
}

function synchronizePulls(
  ctx: Ctx,
  headRepo: Repo,
  ref: string,
  before: string,
  after: string,
  actor: User,
): void {
  for (const repo of ctx.store.repos.values()) {
    for (const issue of repo.issues.values()) {
      const p = issue.pull
      if (!p || issue.state !== 'open' || p.headRepoId !== headRepo.id || p.headRef !== ref) continue
      p.headSha = after
      issue.updatedAt = ctx.emulator.clock.iso()
      emit(
        ctx,
        'pull_request',
        {
          action: 'synchronize',
          number: issue.number,
          before,
          after,
          ...pullPayload(ctx, repo, issue, actor),
        },
        { repo },
      )
    }
  }
}

export interface FileWrite {
  path: string
  /** null deletes the file. */
  content: Buffer | null
}

/** A commit of `writes` on top of `parentSha` (null: a root commit); no ref moves. */
export function buildCommit(
  ctx: Ctx,
  parentSha: string | null,
  actor: User,
  message: string,
  writes: FileWrite[],
  opts: { author?: GitPerson; committer?: GitPerson } = {},
): Commit {
  const store = ctx.store
  const parent = parentSha ? store.commits.get(parentSha) : undefined
  const tree = new Map(parent?.tree ?? [])
  for (const w of writes) {
    if (w.content === null) tree.delete(w.path)
    else tree.set(w.path, putBlob(store, w.content))
  }
  const author = opts.author ?? personOf(ctx, actor)
  return createCommit(store, {
    tree,
    parents: parent ? [parent.sha] : [],
    message,
    author,
    committer: opts.committer ?? author,
    authorId: opts.author ? (userByEmail(ctx, opts.author.email)?.id ?? null) : actor.id,
    committerId: actor.id,
  })
}

/** One commit on `branch` with the given file changes; creates the branch in an empty repository. */
export function commitFiles(
  ctx: Ctx,
  repo: Repo,
  branch: string,
  actor: User,
  message: string,
  writes: FileWrite[],
  opts: { author?: GitPerson; committer?: GitPerson } = {},
): Commit {
  const headSha = repo.branches.get(branch)
  if (!headSha && repo.branches.size > 0) throw new ApiError(404, `Branch ${branch} not found`)
  const commit = buildCommit(ctx, headSha ?? null, actor, message, writes, opts)
  updateRef(ctx, repo, 'branch', branch, commit.sha, actor)
  return commit
}

function userByEmail(ctx: Ctx, email: string): User | undefined {
  const e = email.toLowerCase()
  for (const u of ctx.store.users.values()) if (u.email?.toLowerCase() === e) return u
  return undefined
}
