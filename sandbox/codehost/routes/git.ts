// Branches, git references, commits and tags.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { principalOf, repoParam } from '../auth.ts'
import { updateRef } from '../branches.ts'
import { ApiError, type Ctx, notFound } from '../context.ts'
import { commitChanges, history, isAncestor, resolveRef } from '../git.ts'
import { body, expectBool, expectString, isoOrUndefined, paginate, params, query } from '../http.ts'
import { nodeId } from '../ids.ts'
import type { Repo } from '../store.ts'
import { repoApi, repoHtml } from '../views.ts'
import { commitView, gitCommitView } from '../views-git.ts'

function refView(ctx: Ctx, repo: Repo, ref: string, sha: string) {
  return {
    ref,
    node_id: nodeId('REF', `${repo.id}:${ref}`),
    url: `${repoApi(ctx, repo)}/git/${ref}`,
    object: { sha, type: 'commit', url: `${repoApi(ctx, repo)}/git/commits/${sha}` },
  }
}

function splitRef(ref: string): { kind: 'branch' | 'tag'; name: string } | null {
  const m = /^(?:refs\/)?(heads|tags)\/(.+)$/.exec(ref)
  if (!m || !isValidRefName(m[2])) return null
  return { kind: m[1] === 'heads' ? 'branch' : 'tag', name: m[2] }
}

function isValidRefName(name: string): boolean {
  return !(/(^|\/)\.|\.\.|[\s~^:?*[\\]|\/$|\.lock$|@\{|^@$|\/\//.test(name) || name === '')
}

function wildcard(req: FastifyRequest): string {
  const raw = params(req)['*'] ?? ''
  try {
    return decodeURIComponent(raw)
  } catch {
    return raw
  }
}

export function registerGitRoutes(api: FastifyInstance, ctx: Ctx): void {
  const R = '/repos/:owner/:repo'

  const branchView = (repo: Repo, name: string, sha: string) => ({
    name,
    commit: { sha, url: `${repoApi(ctx, repo)}/commits/${sha}` },
    protected: false,
  })

  api.get(`${R}/branches`, async (req, reply) => {
    const repo = repoParam(ctx, req, { fg: ['contents', 'read'] })
    const q = query(req)
    if (q.protected === 'true') return []
    const list = [...repo.branches.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([n, s]) => branchView(repo, n, s))
    return paginate(ctx, req, reply, list)
  })

  api.get(`${R}/branches/*`, async (req) => {
    const repo = repoParam(ctx, req, { fg: ['contents', 'read'] })
    const name = wildcard(req)
    const sha = repo.branches.get(name)
    if (!sha) throw new ApiError(404, 'Branch not found')
    const commit = ctx.store.commits.get(sha)!
    const api = repoApi(ctx, repo)
    return {
      name,
      commit: commitView(ctx, repo, commit, false),
      _links: { self: `${api}/branches/${name}`, html: `${repoHtml(ctx, repo)}/tree/${name}` },
      protected: false,
      protection: {
        enabled: false,
        required_status_checks: { enforcement_level: 'off', contexts: [], checks: [] },
      },
      protection_url: `${api}/branches/${name}/protection`,
    }
  })

  api.post(`${R}/git/refs`, async (req, reply) => {
    const repo = repoParam(ctx, req, { role: 'write', fg: ['contents', 'write'] })
    const b = body(req)
    const ref = expectString(b, 'ref', true)!
    const sha = expectString(b, 'sha', true)!
    const parsed = /^refs\/.+\/.+/.test(ref) ? splitRef(ref) : null
    if (!parsed) throw new ApiError(422, `${ref} is not a valid ref name.`)
    const commit = ctx.store.commits.get(sha)
    if (!commit || !resolveRef(ctx.store, repo, sha)) throw new ApiError(422, 'Object does not exist')
    const refs = parsed.kind === 'branch' ? repo.branches : repo.tags
    if (refs.has(parsed.name)) throw new ApiError(422, 'Reference already exists')
    updateRef(ctx, repo, parsed.kind, parsed.name, commit.sha, principalOf(req).user!)
    return reply
      .code(201)
      .send(
        refView(ctx, repo, `refs/${parsed.kind === 'branch' ? 'heads' : 'tags'}/${parsed.name}`, commit.sha),
      )
  })

  const getRef = async (req: FastifyRequest) => {
    const repo = repoParam(ctx, req, { fg: ['contents', 'read'] })
    const parsed = splitRef(wildcard(req))
    const sha = parsed ? (parsed.kind === 'branch' ? repo.branches : repo.tags).get(parsed.name) : undefined
    if (!parsed || !sha) throw notFound()
    return refView(ctx, repo, `refs/${parsed.kind === 'branch' ? 'heads' : 'tags'}/${parsed.name}`, sha)
  }
  /** Every reference whose name starts with `refs/{prefix}`, sorted by name as upstream sorts them. */
  const refsStartingWith = (repo: Repo, prefix: string) =>
    [
      ...[...repo.branches].map(([n, s]) => [`refs/heads/${n}`, s] as const),
      ...[...repo.tags].map(([n, s]) => [`refs/tags/${n}`, s] as const),
    ]
      .filter(([r]) => r.startsWith(`refs/${prefix}`))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([r, s]) => refView(ctx, repo, r, s))

  api.get(`${R}/git/ref/*`, getRef)
  // `refs` alone lists every reference; `refs/heads` or `refs/tags/v1` (not one full name) lists
  // those under it, as upstream still answers the older form of "List matching references".
  api.get(`${R}/git/refs`, async (req, reply) => {
    const repo = repoParam(ctx, req, { fg: ['contents', 'read'] })
    return paginate(ctx, req, reply, refsStartingWith(repo, ''))
  })
  api.get(`${R}/git/refs/*`, async (req, reply) => {
    const repo = repoParam(ctx, req, { fg: ['contents', 'read'] })
    const raw = wildcard(req)
    const parsed = splitRef(raw)
    const sha = parsed ? (parsed.kind === 'branch' ? repo.branches : repo.tags).get(parsed.name) : undefined
    if (parsed && sha)
      return refView(ctx, repo, `refs/${parsed.kind === 'branch' ? 'heads' : 'tags'}/${parsed.name}`, sha)
    const under = refsStartingWith(repo, raw.replace(/^refs\//, ''))
    if (under.length === 0) throw notFound()
    return paginate(ctx, req, reply, under)
  })

  api.get(`${R}/git/matching-refs/*`, async (req) => {
    const repo = repoParam(ctx, req, { fg: ['contents', 'read'] })
    return refsStartingWith(repo, wildcard(req).replace(/^refs\//, ''))
  })

  api.patch(`${R}/git/refs/*`, async (req) => {
    const repo = repoParam(ctx, req, { role: 'write', fg: ['contents', 'write'] })
    const parsed = splitRef(wildcard(req))
    const refs = parsed ? (parsed.kind === 'branch' ? repo.branches : repo.tags) : null
    const current = parsed && refs ? refs.get(parsed.name) : undefined
    if (!parsed || !current) throw new ApiError(422, 'Reference does not exist')
    const b = body(req)
    const sha = expectString(b, 'sha', true)!
    const force = expectBool(b, 'force') ?? false
    if (!ctx.store.commits.get(sha)) throw new ApiError(422, 'Object does not exist')
    if (!force && !isAncestor(ctx.store, current, sha))
      throw new ApiError(422, 'Update is not a fast forward')
    updateRef(ctx, repo, parsed.kind, parsed.name, sha, principalOf(req).user!, { forced: force })
    return refView(ctx, repo, `refs/${parsed.kind === 'branch' ? 'heads' : 'tags'}/${parsed.name}`, sha)
  })

  api.delete(`${R}/git/refs/*`, async (req, reply) => {
    const repo = repoParam(ctx, req, { role: 'write', fg: ['contents', 'write'] })
    const parsed = splitRef(wildcard(req))
    const refs = parsed ? (parsed.kind === 'branch' ? repo.branches : repo.tags) : null
    if (!parsed || !refs?.has(parsed.name)) throw new ApiError(422, 'Reference does not exist')
    updateRef(ctx, repo, parsed.kind, parsed.name, null, principalOf(req).user!)
    return reply.code(204).send()
  })

  api.get(`${R}/git/commits/:sha`, async (req) => {
    const repo = repoParam(ctx, req, { fg: ['contents', 'read'] })
    const c = ctx.store.commits.get(params(req).sha)
    if (!c) throw notFound()
    return gitCommitView(ctx, repo, c)
  })

  api.get(`${R}/git/blobs/:sha`, async (req) => {
    const repo = repoParam(ctx, req, { fg: ['contents', 'read'] })
    const sha = params(req).sha
    const data = ctx.store.blobs.get(sha)
    if (!data) throw notFound()
    return {
      sha,
      node_id: nodeId('B', sha),
      size: data.length,
      url: `${repoApi(ctx, repo)}/git/blobs/${sha}`,
      content: data.toString('base64'),
      encoding: 'base64',
    }
  })

  api.get(`${R}/commits`, async (req, reply) => {
    const repo = repoParam(ctx, req, { fg: ['contents', 'read'] })
    if (repo.branches.size === 0) throw new ApiError(409, 'Git Repository is empty.')
    const q = query(req)
    const start = resolveRef(ctx.store, repo, q.sha ?? repo.defaultBranch)
    if (!start) throw new ApiError(404, `No commit found for SHA: ${q.sha}`)
    const since = isoOrUndefined(q.since, 'since')
    const until = isoOrUndefined(q.until, 'until')
    const author = q.author?.toLowerCase()
    const path = q.path?.replace(/^\/+|\/+$/g, '')
    const list = history(ctx.store, start.sha).filter((c) => {
      const at = Date.parse(c.committer.date)
      if (since !== undefined && at < since) return false
      if (until !== undefined && at > until) return false
      if (author) {
        const login = c.authorId ? ctx.store.users.get(c.authorId)?.login.toLowerCase() : undefined
        if (login !== author && c.author.email.toLowerCase() !== author) return false
      }
      if (path) {
        const changed = commitChanges(ctx.store, c).some(
          (f) => f.filename === path || f.filename.startsWith(`${path}/`),
        )
        if (!changed) return false
      }
      return true
    })
    return paginate(ctx, req, reply, list).map((c) => commitView(ctx, repo, c, false))
  })

  api.get(`${R}/commits/:ref`, async (req) => {
    const repo = repoParam(ctx, req, { fg: ['contents', 'read'] })
    const ref = params(req).ref
    const c = resolveRef(ctx.store, repo, ref)
    if (!c) throw new ApiError(422, `No commit found for SHA: ${ref}`)
    return commitView(ctx, repo, c, true)
  })

  api.get(`${R}/tags`, async (req, reply) => {
    const repo = repoParam(ctx, req, { fg: ['contents', 'read'] })
    const list = [...repo.tags.entries()]
      .sort(([a], [b]) => b.localeCompare(a, undefined, { numeric: true }))
      .map(([name, sha]) => ({
        name,
        zipball_url: `${repoApi(ctx, repo)}/zipball/refs/tags/${name}`,
        tarball_url: `${repoApi(ctx, repo)}/tarball/refs/tags/${name}`,
        commit: { sha, url: `${repoApi(ctx, repo)}/commits/${sha}` },
        node_id: nodeId('REF', `${repo.id}:refs/tags/${name}`),
      }))
    return paginate(ctx, req, reply, list)
  })

  api.get(`${R}/compare/:basehead`, async (req) => {
    const repo = repoParam(ctx, req, { fg: ['contents', 'read'] })
    const [base, head] = params(req).basehead.split('...')
    const b = base ? resolveRef(ctx.store, repo, base) : undefined
    const h = head ? resolveRef(ctx.store, repo, head) : undefined
    if (!b || !h) throw notFound()
    const ahead = history(ctx.store, h.sha).filter(
      (c) => !history(ctx.store, b.sha).some((x) => x.sha === c.sha),
    )
    const behind = history(ctx.store, b.sha).filter(
      (c) => !history(ctx.store, h.sha).some((x) => x.sha === c.sha),
    )
    return {
      url: `${repoApi(ctx, repo)}/compare/${base}...${head}`,
      status:
        ahead.length && behind.length
          ? 'diverged'
          : ahead.length
            ? 'ahead'
            : behind.length
              ? 'behind'
              : 'identical',
      ahead_by: ahead.length,
      behind_by: behind.length,
      total_commits: ahead.length,
      commits: ahead.reverse().map((c) => commitView(ctx, repo, c, false)),
    }
  })
}
