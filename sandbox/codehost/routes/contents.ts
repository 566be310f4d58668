// Repository contents: read files and directories at a ref, create/update/delete files with the
// sha rules (update and delete need the current blob sha: 422 without it, 409 when stale).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { hasScope, principalOf, repoParam } from '../auth.ts'
import { commitFiles } from '../branches.ts'
import { ApiError, type Ctx, missingParam, notFound } from '../context.ts'
import { resolveRef } from '../git.ts'
import { body, expectString, params, query } from '../http.ts'
import type { Commit, GitPerson, Repo } from '../store.ts'
import { contentView, dirEntryView, gitCommitView } from '../views-git.ts'

function pathParam(req: FastifyRequest): string {
  const raw = params(req)['*'] ?? ''
  let path = raw
  try {
    path = decodeURIComponent(raw)
  } catch {
    // already decoded
  }
  return path.replace(/^\/+|\/+$/g, '')
}

function refCommit(ctx: Ctx, repo: Repo, ref: string | undefined): { commit: Commit; ref: string } {
  if (repo.branches.size === 0) throw new ApiError(404, 'This repository is empty.')
  const name = ref ?? repo.defaultBranch
  const commit = resolveRef(ctx.store, repo, name)
  if (!commit) throw new ApiError(404, `No commit found for the ref ${name}`)
  return { commit, ref: name }
}

function person(v: unknown, fallbackDate: string): GitPerson | undefined {
  if (!v || typeof v !== 'object') return undefined
  const o = v as Record<string, unknown>
  if (typeof o.name !== 'string' || typeof o.email !== 'string')
    throw new ApiError(422, 'Invalid request.\n\n"name" and "email" are required for author and committer.')
  return { name: o.name, email: o.email, date: typeof o.date === 'string' ? o.date : fallbackDate }
}

function decodeBase64(content: string): Buffer {
  const clean = content.replace(/\s+/g, '')
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length % 4 === 1)
    throw new ApiError(422, 'content is not valid Base64')
  return Buffer.from(clean, 'base64')
}

export function registerContentRoutes(api: FastifyInstance, ctx: Ctx): void {
  const read = async (req: FastifyRequest, reply: FastifyReply) => {
    const repo = repoParam(ctx, req, { fg: ['contents', 'read'] })
    const path = pathParam(req)
    const { commit, ref } = refCommit(ctx, repo, query(req).ref)
    const blob = commit.tree.get(path)
    if (blob) {
      const accept = String(req.headers.accept ?? '')
      if (accept.includes('.raw'))
        return reply.header('content-type', 'application/octet-stream').send(ctx.store.blobs.get(blob))
      return contentView(ctx, repo, path, blob, ref)
    }
    const prefix = path ? `${path}/` : ''
    const children = new Map<string, 'file' | 'dir'>()
    for (const p of commit.tree.keys()) {
      if (!p.startsWith(prefix)) continue
      const rest = p.slice(prefix.length)
      const cut = rest.indexOf('/')
      children.set(cut < 0 ? rest : rest.slice(0, cut), cut < 0 ? 'file' : 'dir')
    }
    if (children.size === 0) throw notFound()
    return [...children.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, type]) =>
        type === 'file'
          ? contentView(ctx, repo, prefix + name, commit.tree.get(prefix + name)!, ref, false)
          : dirEntryView(ctx, repo, prefix + name, ref),
      )
  }
  api.get('/repos/:owner/:repo/contents', read)
  api.get('/repos/:owner/:repo/contents/*', read)

  api.get('/repos/:owner/:repo/readme', async (req) => {
    const repo = repoParam(ctx, req, { fg: ['contents', 'read'] })
    const { commit, ref } = refCommit(ctx, repo, query(req).ref)
    const path = [...commit.tree.keys()].find((p) => /^readme(\.\w+)?$/i.test(p))
    if (!path) throw notFound()
    return contentView(ctx, repo, path, commit.tree.get(path)!, ref)
  })

  const writeNeed = (req: FastifyRequest) => {
    const path = pathParam(req)
    const repo = repoParam(ctx, req, { role: 'write', fg: ['contents', 'write'] })
    const t = principalOf(req).token
    // Changing workflow files needs the `workflow` scope (fine-grained: the workflows permission).
    if (path.startsWith('.codehost/workflows/') && t) {
      if (t.kind !== 'fine_grained' && !hasScope(t, 'workflow'))
        throw new ApiError(404, 'Not Found', undefined, undefined, { 'x-accepted-oauth-scopes': 'workflow' })
      if (t.kind === 'fine_grained' && t.permissions && t.permissions.workflows !== 'write')
        throw new ApiError(403, 'Resource not accessible by personal access token')
    }
    if (!path) throw notFound()
    return { repo, path, actor: principalOf(req).user! }
  }

  api.put('/repos/:owner/:repo/contents/*', async (req, reply) => {
    const { repo, path, actor } = writeNeed(req)
    if (repo.archived) throw new ApiError(403, 'Repository was archived so is read-only.')
    const b = body(req)
    const message = expectString(b, 'message', true)!
    const content = expectString(b, 'content', true)!
    const sha = expectString(b, 'sha')
    const branch = expectString(b, 'branch') ?? repo.defaultBranch
    const data = decodeBase64(content)
    const head = repo.branches.get(branch)
    if (!head && repo.branches.size > 0) throw new ApiError(404, `Branch ${branch} not found`)
    const current = head ? ctx.store.commits.get(head)?.tree.get(path) : undefined
    if ([...(head ? ctx.store.commits.get(head)!.tree.keys() : [])].some((p) => p.startsWith(`${path}/`)))
      throw new ApiError(422, `Invalid request.\n\n"${path}" is a directory.`)
    if (current && !sha) throw missingParam('sha')
    if (current && sha !== current) throw new ApiError(409, `${path} does not match ${sha}`)
    const now = ctx.emulator.clock.iso()
    const committer = person(b.committer, now)
    const author = person(b.author, now) ?? committer
    const commit = commitFiles(ctx, repo, branch, actor, message, [{ path, content: data }], {
      author,
      committer,
    })
    return reply.code(current ? 200 : 201).send({
      content: contentView(ctx, repo, path, commit.tree.get(path)!, branch, false),
      commit: gitCommitView(ctx, repo, commit),
    })
  })

  api.delete('/repos/:owner/:repo/contents/*', async (req) => {
    const { repo, path, actor } = writeNeed(req)
    const b = body(req)
    const message = expectString(b, 'message', true)!
    const sha = expectString(b, 'sha')
    const branch = expectString(b, 'branch') ?? repo.defaultBranch
    const head = repo.branches.get(branch)
    if (!head) throw new ApiError(404, `Branch ${branch} not found`)
    const current = ctx.store.commits.get(head)?.tree.get(path)
    if (!current) throw notFound()
    if (!sha) throw missingParam('sha')
    if (sha !== current) throw new ApiError(409, `${path} does not match ${sha}`)
    const now = ctx.emulator.clock.iso()
    const committer = person(b.committer, now)
    const commit = commitFiles(ctx, repo, branch, actor, message, [{ path, content: null }], {
      author: person(b.author, now) ?? committer,
      committer,
    })
    return { content: null, commit: gitCommitView(ctx, repo, commit) }
  })
}
