// Issue changes and the events they emit. A pull request is an issue with `pull` set; changes
// made through the issues endpoints on a pull request emit `pull_request` events, as upstream.
import { ApiError, type Ctx, validationFailed } from './context.ts'
import { emit, envelope } from './events.ts'
import { roleAtLeast, roleOf } from './permissions.ts'
import { pullPayload } from './pulls.ts'
import type { Issue, IssueComment, Label, Repo, User } from './store.ts'
import { commentView, issueView, labelView, userView } from './views.ts'

export function canTriage(ctx: Ctx, repo: Repo, user: User): boolean {
  return roleAtLeast(roleOf(ctx.store, repo, user.id), 'triage')
}

export function labelByName(repo: Repo, name: string): Label | undefined {
  const n = name.toLowerCase()
  for (const l of repo.labels.values()) if (l.name.toLowerCase() === n) return l
  return undefined
}

export function createLabel(
  ctx: Ctx,
  repo: Repo,
  name: string,
  color = 'ededed',
  description: string | null = null,
): Label {
  if (labelByName(repo, name))
    throw validationFailed([{ resource: 'Label', code: 'already_exists', field: 'name' }])
  if (!/^[0-9a-fA-F]{6}$/.test(color))
    throw validationFailed([{ resource: 'Label', code: 'invalid', field: 'color' }])
  const label: Label = {
    id: ctx.store.nextId('label', 5_000_001),
    name,
    color: color.toLowerCase(),
    description,
    isDefault: false,
  }
  repo.labels.set(label.id, label)
  return label
}

/** Label ids for names, creating missing labels (as upstream does for users who may triage). */
function labelIds(ctx: Ctx, repo: Repo, names: string[]): number[] {
  return [...new Set(names.map((n) => (labelByName(repo, n) ?? createLabel(ctx, repo, n)).id))]
}

/** Assignable users are the owner and collaborators with push access or more. */
export function assignable(ctx: Ctx, repo: Repo): User[] {
  const ids = new Set([
    repo.ownerId,
    ...[...repo.collaborators].filter(([, r]) => roleAtLeast(r, 'write')).map(([id]) => id),
  ])
  return [...ids].map((id) => ctx.store.user(id)).filter((u) => u.type === 'User')
}

function assigneeIds(ctx: Ctx, repo: Repo, logins: string[]): number[] {
  const ok = new Map(assignable(ctx, repo).map((u) => [u.login.toLowerCase(), u.id]))
  return [
    ...new Set(
      logins.map((l) => {
        const id = ok.get(l.toLowerCase())
        if (id === undefined)
          throw validationFailed([{ resource: 'Issue', code: 'invalid', field: 'assignees', value: l }])
        return id
      }),
    ),
  ]
}

/** Emits an `issues` event, or a `pull_request` event when the issue is a pull request. */
export function issueEvent(
  ctx: Ctx,
  repo: Repo,
  issue: Issue,
  actor: User,
  action: string,
  extra: Record<string, unknown> = {},
): void {
  if (issue.pull)
    emit(
      ctx,
      'pull_request',
      { action, number: issue.number, ...extra, ...pullPayload(ctx, repo, issue, actor) },
      { repo },
    )
  else
    emit(
      ctx,
      'issues',
      { action, issue: issueView(ctx, repo, issue), ...extra, ...envelope(ctx, repo, actor) },
      { repo },
    )
}

export interface IssueInput {
  title: string
  body?: string | null
  labels?: string[]
  assignees?: string[]
}

export function createIssue(ctx: Ctx, repo: Repo, actor: User, input: IssueInput): Issue {
  if (!repo.hasIssues) throw new ApiError(410, 'Issues are disabled for this repo')
  if (!input.title.trim())
    throw validationFailed([{ resource: 'Issue', code: 'missing_field', field: 'title' }])
  const store = ctx.store
  const triage = canTriage(ctx, repo, actor)
  const now = ctx.emulator.clock.iso()
  const issue: Issue = {
    id: store.nextId('issue', 3_000_001),
    number: repo.nextNumber++,
    repoId: repo.id,
    title: input.title,
    body: input.body ?? null,
    state: 'open',
    stateReason: null,
    userId: actor.id,
    // Upstream silently drops labels and assignees from people who may not triage.
    labelIds: triage && input.labels ? labelIds(ctx, repo, input.labels) : [],
    assigneeIds: triage && input.assignees ? assigneeIds(ctx, repo, input.assignees) : [],
    comments: [],
    createdAt: now,
    updatedAt: now,
    closedAt: null,
    closedById: null,
    locked: false,
    pull: null,
  }
  repo.issues.set(issue.number, issue)
  repo.updatedAt = now
  issueEvent(ctx, repo, issue, actor, 'opened')
  return issue
}

export interface IssuePatch {
  title?: string
  body?: string | null
  state?: 'open' | 'closed'
  stateReason?: 'completed' | 'not_planned' | 'reopened' | null
  labels?: string[]
  assignees?: string[]
}

export function updateIssue(ctx: Ctx, repo: Repo, issue: Issue, actor: User, patch: IssuePatch): Issue {
  const triage = canTriage(ctx, repo, actor)
  if (!triage && issue.userId !== actor.id) throw new ApiError(403, 'Must have triage access to repository.')
  const now = ctx.emulator.clock.iso()
  const changes: Record<string, { from: unknown }> = {}
  if (patch.title !== undefined && patch.title !== issue.title) {
    if (!patch.title.trim())
      throw validationFailed([{ resource: 'Issue', code: 'missing_field', field: 'title' }])
    changes.title = { from: issue.title }
    issue.title = patch.title
  }
  if (patch.body !== undefined && patch.body !== issue.body) {
    changes.body = { from: issue.body ?? '' }
    issue.body = patch.body
  }
  const oldLabels = [...issue.labelIds]
  const oldAssignees = [...issue.assigneeIds]
  if (triage && patch.labels !== undefined) issue.labelIds = labelIds(ctx, repo, patch.labels)
  if (triage && patch.assignees !== undefined) issue.assigneeIds = assigneeIds(ctx, repo, patch.assignees)
  let stateAction: string | null = null
  if (patch.state && patch.state !== issue.state) {
    if (issue.pull?.merged)
      throw validationFailed([
        {
          resource: 'PullRequest',
          code: 'custom',
          field: 'state',
          message: 'state cannot be changed. The pull request has been merged.',
        },
      ])
    issue.state = patch.state
    if (patch.state === 'closed') {
      issue.closedAt = now
      issue.closedById = actor.id
      issue.stateReason = issue.pull ? null : (patch.stateReason ?? 'completed')
      stateAction = 'closed'
    } else {
      issue.closedAt = null
      issue.closedById = null
      issue.stateReason = issue.pull ? null : 'reopened'
      stateAction = 'reopened'
    }
  } else if (patch.stateReason !== undefined && issue.state === 'closed' && !issue.pull)
    issue.stateReason = patch.stateReason
  issue.updatedAt = now
  if (Object.keys(changes).length) issueEvent(ctx, repo, issue, actor, 'edited', { changes })
  emitLabelChanges(ctx, repo, issue, actor, oldLabels)
  emitAssigneeChanges(ctx, repo, issue, actor, oldAssignees)
  if (stateAction) issueEvent(ctx, repo, issue, actor, stateAction)
  return issue
}

function emitLabelChanges(ctx: Ctx, repo: Repo, issue: Issue, actor: User, before: number[]): void {
  for (const id of issue.labelIds.filter((x) => !before.includes(x))) {
    const l = repo.labels.get(id)
    if (l) issueEvent(ctx, repo, issue, actor, 'labeled', { label: labelView(ctx, repo, l) })
  }
  for (const id of before.filter((x) => !issue.labelIds.includes(x))) {
    const l = repo.labels.get(id)
    if (l) issueEvent(ctx, repo, issue, actor, 'unlabeled', { label: labelView(ctx, repo, l) })
  }
}

function emitAssigneeChanges(ctx: Ctx, repo: Repo, issue: Issue, actor: User, before: number[]): void {
  for (const id of issue.assigneeIds.filter((x) => !before.includes(x)))
    issueEvent(ctx, repo, issue, actor, 'assigned', { assignee: userView(ctx, ctx.store.user(id)) })
  for (const id of before.filter((x) => !issue.assigneeIds.includes(x)))
    issueEvent(ctx, repo, issue, actor, 'unassigned', { assignee: userView(ctx, ctx.store.user(id)) })
}

export function changeLabels(
  ctx: Ctx,
  repo: Repo,
  issue: Issue,
  actor: User,
  op: 'add' | 'set' | 'remove',
  names: string[],
): void {
  const before = [...issue.labelIds]
  if (op === 'remove') {
    const ids = names.map((n) => {
      const l = labelByName(repo, n)
      if (!l || !issue.labelIds.includes(l.id)) throw new ApiError(404, 'Label does not exist')
      return l.id
    })
    issue.labelIds = issue.labelIds.filter((x) => !ids.includes(x))
  } else {
    const ids = labelIds(ctx, repo, names)
    issue.labelIds = op === 'set' ? ids : [...new Set([...issue.labelIds, ...ids])]
  }
  issue.updatedAt = ctx.emulator.clock.iso()
  emitLabelChanges(ctx, repo, issue, actor, before)
}

export function changeAssignees(
  ctx: Ctx,
  repo: Repo,
  issue: Issue,
  actor: User,
  op: 'add' | 'remove',
  logins: string[],
): void {
  const before = [...issue.assigneeIds]
  if (op === 'add') {
    // Upstream ignores people who cannot be assigned when adding through this endpoint.
    const ok = new Map(assignable(ctx, repo).map((u) => [u.login.toLowerCase(), u.id]))
    const ids = logins.map((l) => ok.get(l.toLowerCase())).filter((x): x is number => x !== undefined)
    issue.assigneeIds = [...new Set([...issue.assigneeIds, ...ids])].slice(0, 10)
  } else {
    const drop = new Set(logins.map((l) => ctx.store.userByLogin(l)?.id))
    issue.assigneeIds = issue.assigneeIds.filter((x) => !drop.has(x))
  }
  issue.updatedAt = ctx.emulator.clock.iso()
  emitAssigneeChanges(ctx, repo, issue, actor, before)
}

export function addComment(ctx: Ctx, repo: Repo, issue: Issue, actor: User, body: string): IssueComment {
  if (!body.trim())
    throw validationFailed([{ resource: 'IssueComment', code: 'missing_field', field: 'body' }])
  if (issue.locked && !canTriage(ctx, repo, actor))
    throw new ApiError(403, 'Unable to create comment because issue is locked.')
  const now = ctx.emulator.clock.iso()
  const comment: IssueComment = {
    id: ctx.store.nextId('comment', 1_200_000_001),
    issueNumber: issue.number,
    body,
    userId: actor.id,
    createdAt: now,
    updatedAt: now,
  }
  issue.comments.push(comment)
  issue.updatedAt = now
  const cv = commentView(ctx, repo, comment)
  emit(
    ctx,
    'issue_comment',
    { action: 'created', issue: issueView(ctx, repo, issue), comment: cv, ...envelope(ctx, repo, actor) },
    { repo },
  )
  return comment
}

export function findComment(repo: Repo, id: number): { issue: Issue; comment: IssueComment } | undefined {
  for (const issue of repo.issues.values()) {
    const comment = issue.comments.find((c) => c.id === id)
    if (comment) return { issue, comment }
  }
  return undefined
}
