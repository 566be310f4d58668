// Releases.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { principalOf, repoParam, requireUser } from '../auth.ts'
import { type Ctx, notFound, validationFailed } from '../context.ts'
import { body, expectBool, expectString, intParam, paginate, params } from '../http.ts'
import { roleAtLeast, roleOf } from '../permissions.ts'
import { createRelease, publish } from '../releases.ts'
import type { Release, Repo } from '../store.ts'
import { releaseView } from '../views-misc.ts'

export function registerReleaseRoutes(api: FastifyInstance, ctx: Ctx): void {
  const R = '/repos/:owner/:repo/releases'

  /** Drafts are visible to people with push access only. */
  const visible = (req: FastifyRequest, repo: Repo) => {
    const pusher = roleAtLeast(roleOf(ctx.store, repo, principalOf(req).user?.id ?? null), 'write')
    return repo.releases.filter((r) => pusher || !r.draft)
  }
  const newest = (list: Release[]) =>
    [...list].sort(
      (a, b) => (b.publishedAt ?? b.createdAt).localeCompare(a.publishedAt ?? a.createdAt) || b.id - a.id,
    )

  api.get(R, async (req, reply) => {
    const repo = repoParam(ctx, req, { fg: ['contents', 'read'] })
    return paginate(ctx, req, reply, newest(visible(req, repo))).map((r) => releaseView(ctx, repo, r))
  })

  api.post(R, async (req, reply) => {
    const repo = repoParam(ctx, req, { role: 'write', fg: ['contents', 'write'] })
    const b = body(req)
    const release = createRelease(ctx, repo, requireUser(req), {
      tagName: expectString(b, 'tag_name'),
      targetCommitish: expectString(b, 'target_commitish'),
      name: expectString(b, 'name'),
      body: expectString(b, 'body'),
      draft: expectBool(b, 'draft'),
      prerelease: expectBool(b, 'prerelease'),
    })
    return reply.code(201).send(releaseView(ctx, repo, release))
  })

  api.get(`${R}/latest`, async (req) => {
    const repo = repoParam(ctx, req, { fg: ['contents', 'read'] })
    const latest = newest(repo.releases.filter((r) => !r.draft && !r.prerelease))[0]
    if (!latest) throw notFound()
    return releaseView(ctx, repo, latest)
  })

  api.get(`${R}/tags/:tag`, async (req) => {
    const repo = repoParam(ctx, req, { fg: ['contents', 'read'] })
    const r = visible(req, repo).find((x) => x.tagName === params(req).tag)
    if (!r) throw notFound()
    return releaseView(ctx, repo, r)
  })

  const releaseOf = (req: FastifyRequest, repo: Repo) => {
    const r = visible(req, repo).find((x) => x.id === intParam(params(req).id))
    if (!r) throw notFound()
    return r
  }

  api.get(`${R}/:id`, async (req) => {
    const repo = repoParam(ctx, req, { fg: ['contents', 'read'] })
    return releaseView(ctx, repo, releaseOf(req, repo))
  })

  api.patch(`${R}/:id`, async (req) => {
    const repo = repoParam(ctx, req, { role: 'write', fg: ['contents', 'write'] })
    const r = releaseOf(req, repo)
    const b = body(req)
    const tag = expectString(b, 'tag_name')
    if (tag && tag !== r.tagName) {
      if (repo.releases.some((x) => x.tagName === tag))
        throw validationFailed([{ resource: 'Release', code: 'already_exists', field: 'tag_name' }])
      r.tagName = tag
    }
    const name = expectString(b, 'name')
    if (name !== undefined) r.name = name
    const text = expectString(b, 'body')
    if (text !== undefined) r.body = text
    const pre = expectBool(b, 'prerelease')
    if (pre !== undefined) r.prerelease = pre
    const target = expectString(b, 'target_commitish')
    if (target) r.targetCommitish = target
    const draft = expectBool(b, 'draft')
    if (draft === false && r.draft) publish(ctx, repo, r, principalOf(req).user!)
    else if (draft === true) r.draft = true
    return releaseView(ctx, repo, r)
  })

  api.delete(`${R}/:id`, async (req, reply) => {
    const repo = repoParam(ctx, req, { role: 'write', fg: ['contents', 'write'] })
    const r = releaseOf(req, repo)
    repo.releases = repo.releases.filter((x) => x !== r)
    return reply.code(204).send()
  })
}
