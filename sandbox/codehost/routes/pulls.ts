// Pull requests: list/get/create/update, merge, commits and files, reviewers and reviews.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { principalOf, repoParam, requireUser } from '../auth.ts'
import { ApiError, type Ctx, notFound } from '../context.ts'
import { commitsBetween, diffTrees, mergeBase } from '../git.ts'
import {
  body,
  expectBool,
  expectString,
  expectStringArray,
  intParam,
  paginate,
  params,
  query,
} from '../http.ts'
import {
  createPull,
  createReview,
  mergePull,
  pullJson,
  removeReviewers,
  requestReviewers,
  submitPendingReview,
  updatePull,
} from '../pulls.ts'
import type { Issue, Repo } from '../store.ts'
import { liveBaseSha, reviewView, userView } from '../views.ts'
import { commitView, fileView } from '../views-git.ts'

function pullOf(repo: Repo, req: FastifyRequest): Issue {
  const issue = repo.issues.get(intParam(params(req).number))
  if (!issue?.pull) throw notFound()
  return issue
}

export function registerPullRoutes(api: FastifyInstance, ctx: Ctx): void {
  const R = '/repos/:owner/:repo/pulls'

  api.get(R, async (req, reply) => {
    const repo = repoParam(ctx, req, { fg: ['pull_requests', 'read'] })
    const q = query(req)
    const state = q.state ?? 'open'
    const sort = q.sort ?? 'created'
    const dir = q.direction ?? 'desc'
    const list = [...repo.issues.values()]
      .filter((i) => i.pull && (state === 'all' || i.state === state))
      .filter((i) => !q.base || i.pull!.baseRef === q.base)
      .filter((i) => {
        if (!q.head) return true
        const [owner, ref] = q.head.includes(':') ? q.head.split(':') : [null, q.head]
        const headRepo = ctx.store.repos.get(i.pull!.headRepoId)
        return (
          i.pull!.headRef === ref &&
          (!owner || ctx.store.user(headRepo?.ownerId ?? -1).login.toLowerCase() === owner.toLowerCase())
        )
      })
      .sort((a, b) => {
        const v = sort === 'updated' ? a.updatedAt.localeCompare(b.updatedAt) : a.number - b.number
        return dir === 'asc' ? v : -v
      })
    return paginate(ctx, req, reply, list).map((i) => pullJson(ctx, repo, i))
  })

  api.post(R, async (req, reply) => {
    const repo = repoParam(ctx, req, { write: true, fg: ['pull_requests', 'write'] })
    const actor = requireUser(req)
    const b = body(req)
    const issue = createPull(ctx, repo, actor, {
      title: expectString(b, 'title'),
      body: expectString(b, 'body') ?? null,
      head: expectString(b, 'head'),
      base: expectString(b, 'base'),
      draft: expectBool(b, 'draft'),
      maintainerCanModify: expectBool(b, 'maintainer_can_modify'),
    })
    return reply.code(201).send(pullJson(ctx, repo, issue))
  })

  api.get(`${R}/:number`, async (req) => {
    const repo = repoParam(ctx, req, { fg: ['pull_requests', 'read'] })
    return pullJson(ctx, repo, pullOf(repo, req))
  })

  api.patch(`${R}/:number`, async (req) => {
    const repo = repoParam(ctx, req, { write: true, fg: ['pull_requests', 'write'] })
    const issue = pullOf(repo, req)
    const b = body(req)
    const state = expectString(b, 'state')
    if (state !== undefined && state !== 'open' && state !== 'closed')
      throw new ApiError(422, 'Validation Failed', [
        { resource: 'PullRequest', code: 'invalid', field: 'state', value: state },
      ])
    updatePull(ctx, repo, issue, requireUser(req), {
      title: expectString(b, 'title'),
      body: b.body === null ? null : expectString(b, 'body'),
      state: state as 'open' | 'closed' | undefined,
      base: expectString(b, 'base'),
      draft: expectBool(b, 'draft'),
      maintainerCanModify: expectBool(b, 'maintainer_can_modify'),
    })
    return pullJson(ctx, repo, issue)
  })

  api.get(`${R}/:number/merge`, async (req, reply) => {
    const repo = repoParam(ctx, req, { fg: ['pull_requests', 'read'] })
    if (!pullOf(repo, req).pull!.merged) throw notFound()
    return reply.code(204).send()
  })

  api.put(`${R}/:number/merge`, async (req) => {
    const repo = repoParam(ctx, req, { role: 'write', fg: ['contents', 'write'] })
    const issue = pullOf(repo, req)
    const b = body(req)
    return mergePull(ctx, repo, issue, principalOf(req).user!, {
      sha: expectString(b, 'sha'),
      commitTitle: expectString(b, 'commit_title'),
      commitMessage: expectString(b, 'commit_message'),
      mergeMethod: expectString(b, 'merge_method'),
    })
  })

  api.get(`${R}/:number/commits`, async (req, reply) => {
    const repo = repoParam(ctx, req, { fg: ['pull_requests', 'read'] })
    const issue = pullOf(repo, req)
    const list = commitsBetween(ctx.store, liveBaseSha(ctx, repo, issue), issue.pull!.headSha)
    return paginate(ctx, req, reply, list).map((c) => commitView(ctx, repo, c, false))
  })

  api.get(`${R}/:number/files`, async (req, reply) => {
    const repo = repoParam(ctx, req, { fg: ['pull_requests', 'read'] })
    const issue = pullOf(repo, req)
    const p = issue.pull!
    const mb = mergeBase(ctx.store, liveBaseSha(ctx, repo, issue), p.headSha)
    const before = mb ? ctx.store.commits.get(mb)!.tree : null
    const files = diffTrees(ctx.store, before, ctx.store.commits.get(p.headSha)!.tree)
    return paginate(ctx, req, reply, files).map((f) => fileView(ctx, repo, p.headSha, f))
  })

  api.get(`${R}/:number/requested_reviewers`, async (req) => {
    const repo = repoParam(ctx, req, { fg: ['pull_requests', 'read'] })
    const p = pullOf(repo, req).pull!
    return { users: p.requestedReviewerIds.map((id) => userView(ctx, ctx.store.user(id))), teams: [] }
  })

  api.post(`${R}/:number/requested_reviewers`, async (req, reply) => {
    const repo = repoParam(ctx, req, { write: true, fg: ['pull_requests', 'write'] })
    const actor = requireUser(req)
    const issue = pullOf(repo, req)
    const b = body(req)
    const reviewers = expectStringArray(b, 'reviewers') ?? []
    const teams = expectStringArray(b, 'team_reviewers') ?? []
    if (!reviewers.length && !teams.length)
      throw new ApiError(422, 'Invalid request.\n\n"reviewers" wasn\'t supplied.')
    if (teams.length)
      throw new ApiError(422, 'Validation Failed', [
        {
          resource: 'PullRequest',
          code: 'custom',
          message: 'Could not resolve to a node with the global id of team.',
        },
      ])
    requestReviewers(ctx, repo, issue, actor, reviewers)
    return reply.code(201).send(pullJson(ctx, repo, issue))
  })

  api.delete(`${R}/:number/requested_reviewers`, async (req) => {
    const repo = repoParam(ctx, req, { write: true, fg: ['pull_requests', 'write'] })
    const issue = pullOf(repo, req)
    removeReviewers(ctx, repo, issue, requireUser(req), expectStringArray(body(req), 'reviewers') ?? [])
    return pullJson(ctx, repo, issue)
  })

  api.get(`${R}/:number/reviews`, async (req, reply) => {
    const repo = repoParam(ctx, req, { fg: ['pull_requests', 'read'] })
    const issue = pullOf(repo, req)
    const viewer = principalOf(req).user
    // Pending reviews are visible to their author only.
    const list = issue.pull!.reviews.filter((r) => r.state !== 'PENDING' || r.userId === viewer?.id)
    return paginate(ctx, req, reply, list).map((r) => reviewView(ctx, repo, issue, r))
  })

  api.post(`${R}/:number/reviews`, async (req) => {
    const repo = repoParam(ctx, req, { write: true, fg: ['pull_requests', 'write'] })
    const issue = pullOf(repo, req)
    const b = body(req)
    const review = createReview(ctx, repo, issue, requireUser(req), {
      body: expectString(b, 'body'),
      event: expectString(b, 'event'),
      commitId: expectString(b, 'commit_id'),
    })
    return reviewView(ctx, repo, issue, review)
  })

  const reviewOf = (issue: Issue, req: FastifyRequest) => {
    const r = issue.pull!.reviews.find((x) => x.id === intParam(params(req).id))
    if (!r) throw notFound()
    return r
  }
  api.get(`${R}/:number/reviews/:id`, async (req) => {
    const repo = repoParam(ctx, req, { fg: ['pull_requests', 'read'] })
    const issue = pullOf(repo, req)
    return reviewView(ctx, repo, issue, reviewOf(issue, req))
  })
  api.post(`${R}/:number/reviews/:id/events`, async (req) => {
    const repo = repoParam(ctx, req, { write: true, fg: ['pull_requests', 'write'] })
    const issue = pullOf(repo, req)
    const actor = requireUser(req)
    const review = reviewOf(issue, req)
    if (review.userId !== actor.id) throw notFound()
    const b = body(req)
    submitPendingReview(
      ctx,
      repo,
      issue,
      actor,
      review,
      expectString(b, 'event', true)!,
      expectString(b, 'body'),
    )
    return reviewView(ctx, repo, issue, review)
  })
}
