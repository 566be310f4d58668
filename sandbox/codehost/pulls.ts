// Pull requests: opening, editing, draft state, reviewers, reviews and merging.
import { personOf, updateRef } from './branches.ts'
import { ApiError, type Ctx, validationFailed } from './context.ts'
import { emit, envelope } from './events.ts'
import { commitsBetween, createCommit, isAncestor, mergeBase, mergeTrees } from './git.ts'
import { canTriage, issueEvent } from './issues.ts'
import { roleAtLeast, roleOf } from './permissions.ts'
import { type Commit, type Issue, mergeSettingsOf, type Repo, type Review, type User } from './store.ts'
import { issueView, liveBaseSha, pullView, reviewView, userView } from './views.ts'

/** Whether the head merges cleanly into the base (file-level), unless the control API says otherwise. */
export function mergeability(ctx: Ctx, repo: Repo, issue: Issue): boolean | null {
  const p = issue.pull!
  if (p.mergeableOverride !== null) return p.mergeableOverride
  if (p.merged || issue.state === 'closed') return null
  const store = ctx.store
  const base = liveBaseSha(ctx, repo, issue)
  const mb = mergeBase(store, base, p.headSha)
  if (!mb) return false
  const b = store.commits.get(mb)
  const ours = store.commits.get(base)
  const theirs = store.commits.get(p.headSha)
  if (!b || !ours || !theirs) return false
  return mergeTrees(b.tree, ours.tree, theirs.tree).conflicts.length === 0
}

export function pullJson(ctx: Ctx, repo: Repo, issue: Issue) {
  return pullView(ctx, repo, issue, mergeability(ctx, repo, issue))
}

/** `pull_request`, `repository` and `sender` of a pull request event. */
export function pullPayload(ctx: Ctx, repo: Repo, issue: Issue, actor: User) {
  return { pull_request: pullJson(ctx, repo, issue), ...envelope(ctx, repo, actor) }
}

function headRepoFor(ctx: Ctx, repo: Repo, owner: string): Repo | undefined {
  const store = ctx.store
  const same = store.repoByName(owner, repo.name)
  if (same && (same.id === repo.id || inNetwork(ctx, same, repo))) return same
  const u = store.userByLogin(owner)
  if (!u) return undefined
  return [...store.repos.values()].find((r) => r.ownerId === u.id && inNetwork(ctx, r, repo))
}

function root(ctx: Ctx, r: Repo): Repo {
  let cur = r
  while (cur.parentId !== null && ctx.store.repos.get(cur.parentId)) cur = ctx.store.repo(cur.parentId)
  return cur
}

function inNetwork(ctx: Ctx, a: Repo, b: Repo): boolean {
  return root(ctx, a).id === root(ctx, b).id
}

export interface PullInput {
  title?: string
  body?: string | null
  head?: string
  base?: string
  draft?: boolean
  maintainerCanModify?: boolean
}

export function createPull(ctx: Ctx, repo: Repo, actor: User, input: PullInput): Issue {
  const store = ctx.store
  const missing = (['title', 'head', 'base'] as const).filter((k) => !input[k])
  if (missing.length)
    throw validationFailed(
      missing.map((field) => ({ resource: 'PullRequest', code: 'missing_field', field })),
    )
  let headRepo: Repo | undefined = repo
  let headRef = input.head!
  const colon = headRef.indexOf(':')
  if (colon >= 0) {
    headRepo = headRepoFor(ctx, repo, headRef.slice(0, colon))
    headRef = headRef.slice(colon + 1)
  }
  const headSha = headRepo?.branches.get(headRef)
  if (!headRepo || !headSha)
    throw validationFailed([{ resource: 'PullRequest', field: 'head', code: 'invalid' }])
  const baseSha = repo.branches.get(input.base!)
  if (!baseSha) throw validationFailed([{ resource: 'PullRequest', field: 'base', code: 'invalid' }])
  const headLabel = `${store.user(headRepo.ownerId).login}:${headRef}`
  for (const other of repo.issues.values()) {
    const p = other.pull
    if (
      p &&
      other.state === 'open' &&
      p.headRepoId === headRepo.id &&
      p.headRef === headRef &&
      p.baseRef === input.base
    )
      throw validationFailed([
        {
          resource: 'PullRequest',
          code: 'custom',
          message: `A pull request already exists for ${headLabel}.`,
        },
      ])
  }
  if (commitsBetween(store, baseSha, headSha).length === 0)
    throw validationFailed([
      { resource: 'PullRequest', code: 'custom', message: `No commits between ${input.base} and ${headRef}` },
    ])
  const now = ctx.emulator.clock.iso()
  const issue: Issue = {
    id: store.nextId('issue', 3_000_001),
    number: repo.nextNumber++,
    repoId: repo.id,
    title: input.title!,
    body: input.body ?? null,
    state: 'open',
    stateReason: null,
    userId: actor.id,
    labelIds: [],
    assigneeIds: [],
    comments: [],
    createdAt: now,
    updatedAt: now,
    closedAt: null,
    closedById: null,
    locked: false,
    pull: {
      id: store.nextId('pull', 1_800_000_001),
      headRepoId: headRepo.id,
      headRef,
      headSha,
      baseRef: input.base!,
      baseSha,
      draft: input.draft ?? false,
      merged: false,
      mergedAt: null,
      mergedById: null,
      mergeCommitSha: null,
      mergeableOverride: null,
      requestedReviewerIds: [],
      reviews: [],
      maintainerCanModify: input.maintainerCanModify ?? true,
    },
  }
  repo.issues.set(issue.number, issue)
  issueEvent(ctx, repo, issue, actor, 'opened')
  return issue
}

export function setDraft(ctx: Ctx, repo: Repo, issue: Issue, actor: User, draft: boolean): void {
  const p = issue.pull!
  if (issue.state !== 'open')
    throw validationFailed([
      { resource: 'PullRequest', code: 'custom', field: 'draft', message: 'Pull request is closed' },
    ])
  if (p.draft === draft) return
  p.draft = draft
  issue.updatedAt = ctx.emulator.clock.iso()
  issueEvent(ctx, repo, issue, actor, draft ? 'converted_to_draft' : 'ready_for_review')
}

export function updatePull(
  ctx: Ctx,
  repo: Repo,
  issue: Issue,
  actor: User,
  patch: PullInput & { state?: 'open' | 'closed' },
): void {
  const p = issue.pull!
  if (!canTriage(ctx, repo, actor) && issue.userId !== actor.id)
    throw new ApiError(403, 'Must have push access to repository.')
  const now = ctx.emulator.clock.iso()
  const changes: Record<string, unknown> = {}
  if (patch.title !== undefined && patch.title !== issue.title) {
    changes.title = { from: issue.title }
    issue.title = patch.title
  }
  if (patch.body !== undefined && patch.body !== issue.body) {
    changes.body = { from: issue.body ?? '' }
    issue.body = patch.body
  }
  if (patch.base !== undefined && patch.base !== p.baseRef) {
    const sha = repo.branches.get(patch.base)
    if (!sha) throw validationFailed([{ resource: 'PullRequest', field: 'base', code: 'invalid' }])
    changes.base = { ref: { from: p.baseRef }, sha: { from: liveBaseSha(ctx, repo, issue) } }
    p.baseRef = patch.base
    p.baseSha = sha
  }
  if (patch.maintainerCanModify !== undefined) p.maintainerCanModify = patch.maintainerCanModify
  let stateAction: string | null = null
  if (patch.state && patch.state !== issue.state) {
    if (p.merged)
      throw validationFailed([
        {
          resource: 'PullRequest',
          code: 'custom',
          field: 'state',
          message: 'state cannot be changed. The pull request has been merged.',
        },
      ])
    if (patch.state === 'open') {
      const head = ctx.store.repos.get(p.headRepoId)?.branches.get(p.headRef)
      if (!head)
        throw validationFailed([
          {
            resource: 'PullRequest',
            code: 'custom',
            field: 'state',
            message: 'state cannot be changed. The head branch was deleted.',
          },
        ])
      p.headSha = head
      issue.state = 'open'
      issue.closedAt = null
      issue.closedById = null
      stateAction = 'reopened'
    } else {
      p.baseSha = liveBaseSha(ctx, repo, issue)
      issue.state = 'closed'
      issue.closedAt = now
      issue.closedById = actor.id
      stateAction = 'closed'
    }
  }
  issue.updatedAt = now
  if (Object.keys(changes).length) issueEvent(ctx, repo, issue, actor, 'edited', { changes })
  // (choice) `draft` in PATCH is honoured, like GraphQL markPullRequestReadyForReview.
  if (patch.draft !== undefined && issue.state === 'open') setDraft(ctx, repo, issue, actor, patch.draft)
  if (stateAction) issueEvent(ctx, repo, issue, actor, stateAction)
}

export function requestReviewers(ctx: Ctx, repo: Repo, issue: Issue, actor: User, logins: string[]): void {
  const p = issue.pull!
  const store = ctx.store
  const users = logins.map((l) => store.userByLogin(l))
  for (const u of users) {
    if (u && u.id === issue.userId)
      throw validationFailed(
        [
          {
            resource: 'PullRequest',
            code: 'custom',
            message: 'Review cannot be requested from pull request author.',
          },
        ],
        'Review cannot be requested from pull request author.',
      )
    if (!u || !(repo.ownerId === u.id || repo.collaborators.has(u.id)))
      throw validationFailed(
        [
          {
            resource: 'PullRequest',
            code: 'custom',
            message: `Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the ${store.user(repo.ownerId).login}/${repo.name} repository.`,
          },
        ],
        `Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the ${store.user(repo.ownerId).login}/${repo.name} repository.`,
      )
  }
  for (const u of users as User[]) {
    if (p.requestedReviewerIds.includes(u.id)) continue
    p.requestedReviewerIds.push(u.id)
    issue.updatedAt = ctx.emulator.clock.iso()
    issueEvent(ctx, repo, issue, actor, 'review_requested', { requested_reviewer: userView(ctx, u) })
  }
}

export function removeReviewers(ctx: Ctx, repo: Repo, issue: Issue, actor: User, logins: string[]): void {
  const p = issue.pull!
  for (const l of logins) {
    const u = ctx.store.userByLogin(l)
    if (!u || !p.requestedReviewerIds.includes(u.id)) continue
    p.requestedReviewerIds = p.requestedReviewerIds.filter((x) => x !== u.id)
    issueEvent(ctx, repo, issue, actor, 'review_request_removed', { requested_reviewer: userView(ctx, u) })
  }
}

const REVIEW_STATES = {
  APPROVE: 'APPROVED',
  REQUEST_CHANGES: 'CHANGES_REQUESTED',
  COMMENT: 'COMMENTED',
} as const

export function createReview(
  ctx: Ctx,
  repo: Repo,
  issue: Issue,
  actor: User,
  input: { body?: string; event?: string; commitId?: string },
): Review {
  const p = issue.pull!
  const event = input.event
  if (event !== undefined && !(event in REVIEW_STATES))
    throw validationFailed([{ resource: 'PullRequestReview', code: 'invalid', field: 'event', value: event }])
  if (event === 'APPROVE' && actor.id === issue.userId)
    // The code host answers this refusal with plain sentences in errors[].
    throw validationFailed(['Can not approve your own pull request'], 'Unprocessable Entity')
  if (event === 'REQUEST_CHANGES' && actor.id === issue.userId)
    throw validationFailed(['Can not request changes on your own pull request'], 'Unprocessable Entity')
  if ((event === 'REQUEST_CHANGES' || event === 'COMMENT') && !input.body?.trim())
    throw validationFailed(
      [
        {
          resource: 'PullRequestReview',
          code: 'custom',
          field: 'body',
          message: 'Body is required for this event',
        },
      ],
      'Unprocessable Entity',
    )
  const review: Review = {
    id: ctx.store.nextId('review', 2_100_000_001),
    userId: actor.id,
    body: input.body ?? '',
    state: event ? REVIEW_STATES[event as keyof typeof REVIEW_STATES] : 'PENDING',
    commitId: input.commitId ?? p.headSha,
    submittedAt: null,
  }
  p.reviews.push(review)
  if (review.state !== 'PENDING') submitted(ctx, repo, issue, actor, review)
  return review
}

export function submitPendingReview(
  ctx: Ctx,
  repo: Repo,
  issue: Issue,
  actor: User,
  review: Review,
  event: string,
  body?: string,
): void {
  if (review.state !== 'PENDING')
    throw validationFailed(
      [{ resource: 'PullRequestReview', code: 'custom', message: 'Review has already been submitted.' }],
      'Unprocessable Entity',
    )
  if (!(event in REVIEW_STATES))
    throw validationFailed([{ resource: 'PullRequestReview', code: 'invalid', field: 'event', value: event }])
  if (body !== undefined) review.body = body
  review.state = REVIEW_STATES[event as keyof typeof REVIEW_STATES]
  submitted(ctx, repo, issue, actor, review)
}

function submitted(ctx: Ctx, repo: Repo, issue: Issue, actor: User, review: Review): void {
  const p = issue.pull!
  review.submittedAt = ctx.emulator.clock.iso()
  p.requestedReviewerIds = p.requestedReviewerIds.filter((x) => x !== actor.id)
  issue.updatedAt = review.submittedAt
  const rv = { ...reviewView(ctx, repo, issue, review), state: review.state.toLowerCase() }
  emit(
    ctx,
    'pull_request_review',
    { action: 'submitted', review: rv, ...pullPayload(ctx, repo, issue, actor) },
    { repo },
  )
}

const NOT_MERGEABLE = 'Pull Request is not mergeable'

export function mergePull(
  ctx: Ctx,
  repo: Repo,
  issue: Issue,
  actor: User,
  input: { sha?: string; commitTitle?: string; commitMessage?: string; mergeMethod?: string },
): { sha: string; merged: true; message: string } {
  const store = ctx.store
  const p = issue.pull!
  const method = input.mergeMethod ?? 'merge'
  if (!['merge', 'squash', 'rebase'].includes(method))
    throw validationFailed([
      { resource: 'PullRequest', code: 'invalid', field: 'merge_method', value: method },
    ])
  const settings = mergeSettingsOf(repo)
  const allowed = {
    merge: settings.allow_merge_commit,
    squash: settings.allow_squash_merge,
    rebase: settings.allow_rebase_merge,
  }
  if (!allowed[method as keyof typeof allowed])
    throw new ApiError(
      405,
      `${{ merge: 'Merge commits', squash: 'Squash merges', rebase: 'Rebase merges' }[method as 'merge']} are not allowed on this repository.`,
    )
  if (issue.state !== 'open' || p.merged || p.draft) throw new ApiError(405, NOT_MERGEABLE)
  if (input.sha && input.sha !== p.headSha)
    throw new ApiError(409, 'Head branch was modified. Review and try the merge again.')
  if (mergeability(ctx, repo, issue) === false) throw new ApiError(405, NOT_MERGEABLE)
  const baseSha = repo.branches.get(p.baseRef)
  if (!baseSha) throw new ApiError(405, NOT_MERGEABLE)
  const ours = store.commits.get(baseSha)!
  const theirs = store.commits.get(p.headSha)!
  const headLogin = store.user(store.repo(p.headRepoId).ownerId).login
  const committer = personOf(ctx, actor)
  let result: Commit
  if (method === 'rebase') {
    let current = ours
    for (const c of commitsBetween(store, baseSha, p.headSha)) {
      const parentTree = c.parents[0] ? (store.commits.get(c.parents[0])?.tree ?? new Map()) : new Map()
      const m = mergeTrees(parentTree, current.tree, c.tree)
      if (m.conflicts.length) throw new ApiError(405, NOT_MERGEABLE)
      current = createCommit(store, {
        tree: m.tree,
        parents: [current.sha],
        message: c.message,
        author: c.author,
        committer,
        authorId: c.authorId,
        committerId: actor.id,
      })
    }
    result = current
  } else {
    const mb = mergeBase(store, baseSha, p.headSha)
    const baseTree = mb ? store.commits.get(mb)!.tree : new Map<string, string>()
    const m = isAncestor(store, baseSha, p.headSha)
      ? { tree: theirs.tree, conflicts: [] }
      : mergeTrees(baseTree, ours.tree, theirs.tree)
    if (m.conflicts.length) throw new ApiError(405, NOT_MERGEABLE)
    const title =
      input.commitTitle ??
      (method === 'squash'
        ? `${issue.title} (#${issue.number})`
        : `Merge pull request #${issue.number} from ${headLogin}/${p.headRef}`)
    const detail =
      input.commitMessage ??
      (method === 'squash'
        ? commitsBetween(store, baseSha, p.headSha)
            .map((c) => `* ${c.message.split('\n')[0]}`)
            .join('\n')
        : issue.title)
    result = createCommit(store, {
      tree: m.tree,
      parents: method === 'squash' ? [baseSha] : [baseSha, p.headSha],
      message: detail ? `${title}\n\n${detail}` : title,
      author: method === 'squash' ? { ...theirs.author, date: committer.date } : committer,
      committer,
      authorId: method === 'squash' ? (theirs.authorId ?? actor.id) : actor.id,
      committerId: actor.id,
    })
  }
  updateRef(ctx, repo, 'branch', p.baseRef, result.sha, actor)
  const now = ctx.emulator.clock.iso()
  p.baseSha = baseSha
  p.merged = true
  p.mergedAt = now
  p.mergedById = actor.id
  p.mergeCommitSha = result.sha
  issue.state = 'closed'
  issue.closedAt = now
  issue.closedById = actor.id
  issue.updatedAt = now
  issueEvent(ctx, repo, issue, actor, 'closed')
  if (p.baseRef === repo.defaultBranch) closeReferencedIssues(ctx, repo, issue, actor)
  // "Automatically delete head branches": a branch of this repository, never its default.
  if (settings.delete_branch_on_merge && p.headRepoId === repo.id && p.headRef !== repo.defaultBranch)
    updateRef(ctx, repo, 'branch', p.headRef, null, actor)
  return { sha: result.sha, merged: true, message: 'Pull Request successfully merged' }
}

const CLOSING = /\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s+#(\d+)\b/gi

/** "Fixes #12" in a merged pull request's body closes issue 12, as upstream does. */
function closeReferencedIssues(ctx: Ctx, repo: Repo, pull: Issue, actor: User): void {
  for (const m of (pull.body ?? '').matchAll(CLOSING)) {
    const target = repo.issues.get(Number(m[1]))
    if (!target || target.pull || target.state !== 'open') continue
    const now = ctx.emulator.clock.iso()
    target.state = 'closed'
    target.stateReason = 'completed'
    target.closedAt = now
    target.closedById = actor.id
    target.updatedAt = now
    emit(
      ctx,
      'issues',
      { action: 'closed', issue: issueView(ctx, repo, target), ...envelope(ctx, repo, actor) },
      { repo },
    )
  }
}

export function canPush(ctx: Ctx, repo: Repo, user: User): boolean {
  return roleAtLeast(roleOf(ctx.store, repo, user.id), 'write')
}
