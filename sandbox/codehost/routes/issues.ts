// Issues, their comments, labels and assignees.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { principalOf, repoParam, requireUser } from '../auth.ts'
import { ApiError, type Ctx, notFound } from '../context.ts'
import {
  body,
  expectString,
  expectStringArray,
  intParam,
  isoOrUndefined,
  paginate,
  params,
  query,
} from '../http.ts'
import {
  addComment,
  canTriage,
  changeAssignees,
  changeLabels,
  createIssue,
  findComment,
  labelByName,
  updateIssue,
} from '../issues.ts'
import type { Issue, Repo } from '../store.ts'
import { commentView, issueView, labelView } from '../views.ts'

export function issueOf(repo: Repo, req: FastifyRequest): Issue {
  const issue = repo.issues.get(intParam(params(req).number))
  if (!issue) throw notFound()
  return issue
}

/** Labels may come as `{labels: [...]}` or a bare array, of names or `{name}` objects. */
function labelNames(req: FastifyRequest): string[] {
  let raw: unknown = req.body
  if (typeof raw === 'string' && raw.trim()) {
    try {
      raw = JSON.parse(raw)
    } catch {
      throw new ApiError(400, 'Problems parsing JSON')
    }
  }
  const list = Array.isArray(raw) ? raw : (raw as { labels?: unknown } | undefined)?.labels
  if (!Array.isArray(list)) throw new ApiError(422, 'Invalid request.\n\n"labels" wasn\'t supplied.')
  return list.map((x) =>
    typeof x === 'string'
      ? x
      : typeof x === 'object' && x && 'name' in x
        ? String((x as { name: unknown }).name)
        : String(x),
  )
}

export function filterIssues(
  ctx: Ctx,
  repo: Repo,
  q: Record<string, string | undefined>,
  issues: Issue[],
): Issue[] {
  const state = q.state ?? 'open'
  const labels = q.labels
    ? q.labels
        .split(',')
        .map((l) => l.trim().toLowerCase())
        .filter(Boolean)
    : []
  const since = isoOrUndefined(q.since, 'since')
  const sort = q.sort ?? 'created'
  const dir = q.direction ?? 'desc'
  const login = (id: number) => ctx.store.user(id).login.toLowerCase()
  return issues
    .filter((i) => state === 'all' || i.state === state)
    .filter((i) =>
      labels.every((l) => i.labelIds.some((id) => repo.labels.get(id)?.name.toLowerCase() === l)),
    )
    .filter((i) => {
      if (!q.assignee) return true
      if (q.assignee === 'none') return i.assigneeIds.length === 0
      if (q.assignee === '*') return i.assigneeIds.length > 0
      return i.assigneeIds.some((id) => login(id) === q.assignee!.toLowerCase())
    })
    .filter((i) => !q.creator || login(i.userId) === q.creator.toLowerCase())
    .filter(
      (i) =>
        !q.mentioned ||
        new RegExp(`@${q.mentioned}\\b`, 'i').test(
          `${i.body ?? ''} ${i.comments.map((c) => c.body).join(' ')}`,
        ),
    )
    .filter((i) => since === undefined || Date.parse(i.updatedAt) >= since)
    .sort((a, b) => {
      const v =
        sort === 'updated'
          ? a.updatedAt.localeCompare(b.updatedAt)
          : sort === 'comments'
            ? a.comments.length - b.comments.length
            : a.number - b.number
      return dir === 'asc' ? v : -v
    })
}

export function registerIssueRoutes(api: FastifyInstance, ctx: Ctx): void {
  const R = '/repos/:owner/:repo'

  api.get(`${R}/issues`, async (req, reply) => {
    const repo = repoParam(ctx, req, { fg: ['issues', 'read'] })
    const list = filterIssues(ctx, repo, query(req), [...repo.issues.values()])
    return paginate(ctx, req, reply, list).map((i) => issueView(ctx, repo, i))
  })

  api.post(`${R}/issues`, async (req, reply) => {
    const repo = repoParam(ctx, req, { write: true, fg: ['issues', 'write'] })
    const actor = requireUser(req)
    const b = body(req)
    if (b.title === undefined || b.title === null)
      throw new ApiError(422, 'Invalid request.\n\n"title" wasn\'t supplied.')
    const assignee = expectString(b, 'assignee')
    const issue = createIssue(ctx, repo, actor, {
      title: String(b.title),
      body: expectString(b, 'body') ?? null,
      labels: Array.isArray(b.labels)
        ? b.labels.map((l: unknown) =>
            typeof l === 'object' && l ? String((l as { name: unknown }).name) : String(l),
          )
        : undefined,
      assignees: [...(expectStringArray(b, 'assignees') ?? []), ...(assignee ? [assignee] : [])],
    })
    return reply.code(201).send(issueView(ctx, repo, issue))
  })

  api.get(`${R}/issues/comments`, async (req, reply) => {
    const repo = repoParam(ctx, req, { fg: ['issues', 'read'] })
    const since = isoOrUndefined(query(req).since, 'since')
    const all = [...repo.issues.values()]
      .flatMap((i) => i.comments)
      .filter((c) => since === undefined || Date.parse(c.updatedAt) >= since)
    all.sort((a, b) => a.id - b.id)
    if (query(req).direction === 'desc') all.reverse()
    return paginate(ctx, req, reply, all).map((c) => commentView(ctx, repo, c))
  })

  const commentOf = (repo: Repo, req: FastifyRequest) => {
    const hit = findComment(repo, intParam(params(req).id))
    if (!hit) throw notFound()
    return hit
  }
  api.get(`${R}/issues/comments/:id`, async (req) => {
    const repo = repoParam(ctx, req, { fg: ['issues', 'read'] })
    return commentView(ctx, repo, commentOf(repo, req).comment)
  })
  api.patch(`${R}/issues/comments/:id`, async (req) => {
    const repo = repoParam(ctx, req, { write: true, fg: ['issues', 'write'] })
    const actor = requireUser(req)
    const { comment } = commentOf(repo, req)
    if (comment.userId !== actor.id && !canTriage(ctx, repo, actor))
      throw new ApiError(403, 'Must have triage access to repository.')
    comment.body = expectString(body(req), 'body', true)!
    comment.updatedAt = ctx.emulator.clock.iso()
    return commentView(ctx, repo, comment)
  })
  api.delete(`${R}/issues/comments/:id`, async (req, reply) => {
    const repo = repoParam(ctx, req, { write: true, fg: ['issues', 'write'] })
    const actor = requireUser(req)
    const { issue, comment } = commentOf(repo, req)
    if (comment.userId !== actor.id && !canTriage(ctx, repo, actor))
      throw new ApiError(403, 'Must have triage access to repository.')
    issue.comments = issue.comments.filter((c) => c !== comment)
    return reply.code(204).send()
  })

  api.get(`${R}/issues/:number`, async (req) => {
    const repo = repoParam(ctx, req, { fg: ['issues', 'read'] })
    return issueView(ctx, repo, issueOf(repo, req))
  })

  api.patch(`${R}/issues/:number`, async (req) => {
    const repo = repoParam(ctx, req, { write: true, fg: ['issues', 'write'] })
    const actor = requireUser(req)
    const issue = issueOf(repo, req)
    const b = body(req)
    const state = expectString(b, 'state')
    if (state !== undefined && state !== 'open' && state !== 'closed')
      throw new ApiError(422, 'Validation Failed', [
        { resource: 'Issue', code: 'invalid', field: 'state', value: state },
      ])
    const reason = b.state_reason
    if (reason !== undefined && reason !== null && !['completed', 'not_planned', 'reopened'].includes(reason))
      throw new ApiError(422, 'Validation Failed', [
        { resource: 'Issue', code: 'invalid', field: 'state_reason', value: reason },
      ])
    const assignee = b.assignee
    updateIssue(ctx, repo, issue, actor, {
      title: b.title === undefined || b.title === null ? undefined : String(b.title),
      body: b.body === undefined ? undefined : b.body === null ? null : String(b.body),
      state: state as 'open' | 'closed' | undefined,
      stateReason: reason,
      labels: Array.isArray(b.labels)
        ? b.labels.map((l: unknown) =>
            typeof l === 'object' && l ? String((l as { name: unknown }).name) : String(l),
          )
        : undefined,
      assignees:
        expectStringArray(b, 'assignees') ??
        (assignee === null ? [] : typeof assignee === 'string' ? [assignee] : undefined),
    })
    return issueView(ctx, repo, issue)
  })

  api.get(`${R}/issues/:number/comments`, async (req, reply) => {
    const repo = repoParam(ctx, req, { fg: ['issues', 'read'] })
    const issue = issueOf(repo, req)
    const since = isoOrUndefined(query(req).since, 'since')
    const list = issue.comments.filter((c) => since === undefined || Date.parse(c.updatedAt) >= since)
    return paginate(ctx, req, reply, list).map((c) => commentView(ctx, repo, c))
  })

  api.post(`${R}/issues/:number/comments`, async (req, reply) => {
    const repo = repoParam(ctx, req, { write: true, fg: ['issues', 'write'] })
    const actor = requireUser(req)
    const issue = issueOf(repo, req)
    const text = expectString(body(req), 'body', true)!
    const c = addComment(ctx, repo, issue, actor, text)
    return reply.code(201).send(commentView(ctx, repo, c))
  })

  const triageIssue = (req: FastifyRequest) => {
    const repo = repoParam(ctx, req, { role: 'triage', fg: ['issues', 'write'] })
    return { repo, issue: issueOf(repo, req), actor: principalOf(req).user! }
  }
  const labelsOf = (repo: Repo, issue: Issue) =>
    issue.labelIds
      .map((id) => repo.labels.get(id))
      .filter((l) => l !== undefined)
      .map((l) => labelView(ctx, repo, l))

  api.get(`${R}/issues/:number/labels`, async (req, reply) => {
    const repo = repoParam(ctx, req, { fg: ['issues', 'read'] })
    return paginate(ctx, req, reply, labelsOf(repo, issueOf(repo, req)))
  })
  api.post(`${R}/issues/:number/labels`, async (req) => {
    const { repo, issue, actor } = triageIssue(req)
    changeLabels(ctx, repo, issue, actor, 'add', labelNames(req))
    return labelsOf(repo, issue)
  })
  api.put(`${R}/issues/:number/labels`, async (req) => {
    const { repo, issue, actor } = triageIssue(req)
    changeLabels(ctx, repo, issue, actor, 'set', labelNames(req))
    return labelsOf(repo, issue)
  })
  api.delete(`${R}/issues/:number/labels`, async (req, reply) => {
    const { repo, issue, actor } = triageIssue(req)
    changeLabels(ctx, repo, issue, actor, 'set', [])
    return reply.code(204).send()
  })
  api.delete(`${R}/issues/:number/labels/:name`, async (req) => {
    const { repo, issue, actor } = triageIssue(req)
    const name = params(req).name
    if (!labelByName(repo, name)) throw new ApiError(404, 'Label does not exist')
    changeLabels(ctx, repo, issue, actor, 'remove', [name])
    return labelsOf(repo, issue)
  })

  api.post(`${R}/issues/:number/assignees`, async (req, reply) => {
    const { repo, issue, actor } = triageIssue(req)
    changeAssignees(ctx, repo, issue, actor, 'add', expectStringArray(body(req), 'assignees') ?? [])
    return reply.code(201).send(issueView(ctx, repo, issue))
  })
  api.delete(`${R}/issues/:number/assignees`, async (req) => {
    const { repo, issue, actor } = triageIssue(req)
    changeAssignees(ctx, repo, issue, actor, 'remove', expectStringArray(body(req), 'assignees') ?? [])
    return issueView(ctx, repo, issue)
  })
  api.get(`${R}/issues/:number/assignees/:username`, async (req, reply) => {
    const repo = repoParam(ctx, req, { fg: ['issues', 'read'] })
    issueOf(repo, req)
    const u = ctx.store.userByLogin(params(req).username)
    if (!u || !(u.id === repo.ownerId || repo.collaborators.has(u.id))) throw notFound()
    return reply.code(204).send()
  })

  api.put(`${R}/issues/:number/lock`, async (req, reply) => {
    const { issue } = triageIssue(req)
    issue.locked = true
    return reply.code(204).send()
  })
  api.delete(`${R}/issues/:number/lock`, async (req, reply) => {
    const { issue } = triageIssue(req)
    issue.locked = false
    return reply.code(204).send()
  })
}
