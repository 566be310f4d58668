// Accounts: the authenticated user, other users, their repositories and repository invitations.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { canSee, principalOf, requireAccountAccess, requireUser } from '../auth.ts'
import { ApiError, type Ctx, notFound } from '../context.ts'
import { body, expectBool, expectString, intParam, paginate, params, query } from '../http.ts'
import { acceptInvitation, createRepo } from '../repos.ts'
import type { Repo } from '../store.ts'
import { orgFullView, repoView, userFullView, userView } from '../views.ts'

export function sortRepos(ctx: Ctx, repos: Repo[], sort = 'full_name', direction?: string): Repo[] {
  const key = (r: Repo) =>
    sort === 'created'
      ? r.createdAt
      : sort === 'updated'
        ? r.updatedAt
        : sort === 'pushed'
          ? (r.pushedAt ?? '')
          : `${ctx.store.user(r.ownerId).login}/${r.name}`.toLowerCase()
  const dir = direction ?? (sort === 'full_name' ? 'asc' : 'desc')
  return [...repos].sort((a, b) => (dir === 'asc' ? 1 : -1) * key(a).localeCompare(key(b)) || a.id - b.id)
}

export function registerUserRoutes(api: FastifyInstance, ctx: Ctx): void {
  api.get('/user', async (req) => {
    const user = requireUser(req)
    return userFullView(ctx, user, true)
  })

  api.patch('/user', async (req) => {
    const user = requireAccountAccess(req, { scopes: ['user'], fg: ['profile', 'write'] })
    const b = body(req)
    const name = expectString(b, 'name')
    const bio = expectString(b, 'bio')
    const company = expectString(b, 'company')
    const location = expectString(b, 'location')
    if (name !== undefined) user.name = name
    if (bio !== undefined) user.bio = bio
    if (company !== undefined) user.company = company
    if (location !== undefined) user.location = location
    return userFullView(ctx, user, true)
  })

  api.get('/users/:username', async (req) => {
    const u = ctx.store.userByLogin(params(req).username)
    if (!u) throw notFound()
    return userFullView(ctx, u, principalOf(req).user?.id === u.id)
  })

  api.get('/orgs/:org', async (req) => {
    const u = ctx.store.userByLogin(params(req).org)
    if (u?.type !== 'Organization') throw notFound()
    return orgFullView(ctx, u, principalOf(req).user)
  })

  api.get('/user/repos', async (req, reply) => {
    const user = requireUser(req)
    const p = principalOf(req)
    const q = query(req)
    const affiliation = (q.affiliation ?? 'owner,collaborator,organization_member').split(',')
    const type = q.type
    const visible = [...ctx.store.repos.values()].filter((r) => {
      if (!canSee(ctx, p, r)) return false
      const owner = ctx.store.user(r.ownerId)
      const rel =
        r.ownerId === user.id
          ? 'owner'
          : r.collaborators.has(user.id)
            ? 'collaborator'
            : owner.members.has(user.id)
              ? 'organization_member'
              : null
      if (!rel) return false
      if (type === 'owner' && rel !== 'owner') return false
      if (type === 'member' && rel === 'owner') return false
      if ((type === 'public' || q.visibility === 'public') && r.private) return false
      if ((type === 'private' || q.visibility === 'private') && !r.private) return false
      return type ? true : affiliation.includes(rel)
    })
    const sorted = sortRepos(ctx, visible, q.sort, q.direction)
    return paginate(ctx, req, reply, sorted).map((r) => repoView(ctx, r, user, false))
  })

  api.get('/users/:username/repos', async (req, reply) => {
    const u = ctx.store.userByLogin(params(req).username)
    if (!u) throw notFound()
    const p = principalOf(req)
    const q = query(req)
    const type = q.type ?? 'owner'
    const repos = [...ctx.store.repos.values()].filter((r) => {
      if (r.private && !canSee(ctx, p, r)) return false
      // Listing another account's repositories shows public ones only, even to collaborators.
      if (r.private && p.user?.id !== u.id) return false
      if (type === 'member') return r.collaborators.has(u.id)
      if (type === 'all') return r.ownerId === u.id || r.collaborators.has(u.id)
      return r.ownerId === u.id
    })
    return paginate(ctx, req, reply, sortRepos(ctx, repos, q.sort, q.direction)).map((r) =>
      repoView(ctx, r, p.user, false),
    )
  })

  const create = (org: boolean) => async (req: FastifyRequest, reply: FastifyReply) => {
    const b = body(req)
    const wantsPrivate =
      expectBool(b, 'private') ?? (b.visibility === 'private' || b.visibility === 'internal')
    const user = requireAccountAccess(req, {
      scopes: wantsPrivate ? ['repo'] : ['repo', 'public_repo'],
      fg: ['administration', 'write'],
    })
    let owner = user
    if (org) {
      const o = ctx.store.userByLogin(params(req).org)
      if (o?.type !== 'Organization') throw notFound()
      if (!o.members.has(user.id))
        throw new ApiError(403, 'You need admin access to the organization before adding a repository to it.')
      owner = o
    }
    const t = principalOf(req).token
    if (t?.kind === 'fine_grained' && t.ownerId !== owner.id)
      throw new ApiError(403, 'Resource not accessible by personal access token')
    const name = expectString(b, 'name', true)!
    const repo = createRepo(ctx, user, owner, {
      name,
      description: expectString(b, 'description') ?? null,
      homepage: expectString(b, 'homepage') ?? null,
      private: wantsPrivate,
      autoInit: expectBool(b, 'auto_init') ?? false,
      hasIssues: expectBool(b, 'has_issues'),
      hasProjects: expectBool(b, 'has_projects'),
      hasWiki: expectBool(b, 'has_wiki'),
      hasDiscussions: expectBool(b, 'has_discussions'),
    })
    if (t?.kind === 'fine_grained') t.repoIds = [...(t.repoIds ?? []), repo.id]
    return reply.code(201).send(repoView(ctx, repo, user))
  }
  api.post('/user/repos', create(false))
  api.post('/orgs/:org/repos', create(true))

  api.get('/user/repository_invitations', async (req) => {
    const user = requireUser(req)
    return [...ctx.store.invitations.values()]
      .filter((i) => i.inviteeId === user.id)
      .map((i) => invitationView(ctx, i.id))
  })

  api.patch('/user/repository_invitations/:id', async (req, reply) => {
    const user = requireUser(req)
    const inv = ctx.store.invitations.get(intParam(params(req).id))
    if (!inv || inv.inviteeId !== user.id) throw notFound()
    acceptInvitation(ctx, inv)
    return reply.code(204).send()
  })

  api.delete('/user/repository_invitations/:id', async (req, reply) => {
    const user = requireUser(req)
    const inv = ctx.store.invitations.get(intParam(params(req).id))
    if (!inv || inv.inviteeId !== user.id) throw notFound()
    ctx.store.invitations.delete(inv.id)
    return reply.code(204).send()
  })
}

export function invitationView(ctx: Ctx, id: number) {
  const store = ctx.store
  const inv = store.invitations.get(id)!
  const repo = store.repo(inv.repoId)
  return {
    id: inv.id,
    node_id: `RI_${Buffer.from(`RI:${inv.id}`).toString('base64url')}`,
    repository: repoView(ctx, repo, null, false),
    invitee: userView(ctx, store.user(inv.inviteeId)),
    inviter: userView(ctx, store.user(inv.inviterId)),
    permissions: inv.role,
    created_at: inv.createdAt,
    expired: false,
    url: `${ctx.url}/user/repository_invitations/${inv.id}`,
    html_url: `${ctx.webUrl}/${store.user(repo.ownerId).login}/${repo.name}/invitations`,
  }
}
