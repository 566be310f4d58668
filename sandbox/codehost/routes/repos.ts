// Repositories: get/update/delete, forks, stars, subscriptions, collaborators, labels, assignees.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { principalOf, type RepoNeed, repoFor, repoParam, requireAccountAccess, requireUser } from '../auth.ts'
import { ApiError, type Ctx, notFound, validationFailed } from '../context.ts'
import { body, expectBool, expectString, paginate, params, query } from '../http.ts'
import { assignable, createLabel, labelByName } from '../issues.ts'
import { roleFromPermission } from '../permissions.ts'
import {
  collaboratorView,
  forkRepo,
  inviteCollaborator,
  permissionView,
  removeCollaborator,
  star,
  subscribe,
  unstar,
} from '../repos.ts'
import { type MergeSettings, mergeSettingsOf, type Repo } from '../store.ts'
import { labelView, repoApi, repoView, userView } from '../views.ts'
import { invitationView, sortRepos } from './users.ts'

const MERGE_FLAGS = [
  'allow_merge_commit',
  'allow_squash_merge',
  'allow_rebase_merge',
  'allow_auto_merge',
  'delete_branch_on_merge',
  'allow_update_branch',
  'use_squash_pr_title_as_default',
] as const satisfies ReadonlyArray<keyof MergeSettings>

const MERGE_TEXTS = {
  squash_merge_commit_title: ['PR_TITLE', 'COMMIT_OR_PR_TITLE'],
  squash_merge_commit_message: ['PR_BODY', 'COMMIT_MESSAGES', 'BLANK'],
  merge_commit_title: ['PR_TITLE', 'MERGE_MESSAGE'],
  merge_commit_message: ['PR_BODY', 'PR_TITLE', 'BLANK'],
} as const

export function registerRepoRoutes(api: FastifyInstance, ctx: Ctx): void {
  const R = '/repos/:owner/:repo'
  const repoOf = (req: FastifyRequest, need: RepoNeed = {}) => repoParam(ctx, req, need)

  api.get(R, async (req) => repoView(ctx, repoOf(req), principalOf(req).user))

  api.patch(R, async (req) => {
    const repo = repoOf(req, { role: 'admin', fg: ['administration', 'write'] })
    const b = body(req)
    const name = expectString(b, 'name')
    if (name !== undefined && name !== repo.name) {
      if (ctx.store.repoByName(ctx.store.user(repo.ownerId).login, name))
        throw validationFailed([
          {
            resource: 'Repository',
            code: 'custom',
            field: 'name',
            message: 'name already exists on this account',
          },
        ])
      repo.formerNames = [
        ...(repo.formerNames ?? []).filter((f) => f.toLowerCase() !== name.toLowerCase()),
        repo.name,
      ]
      repo.name = name
    }
    const description = expectString(b, 'description')
    if (description !== undefined) repo.description = description
    const homepage = expectString(b, 'homepage')
    if (homepage !== undefined) repo.homepage = homepage
    const priv = expectBool(b, 'private')
    if (priv !== undefined) repo.private = priv
    const defaultBranch = expectString(b, 'default_branch')
    if (defaultBranch !== undefined) {
      if (!repo.branches.has(defaultBranch))
        throw validationFailed([
          {
            resource: 'Repository',
            code: 'invalid',
            field: 'default_branch',
            message: `The branch ${defaultBranch} was not found. Please push that ref first or create it via the Git Data API.`,
          },
        ])
      repo.defaultBranch = defaultBranch
    }
    for (const [key, prop] of [
      ['has_issues', 'hasIssues'],
      ['has_projects', 'hasProjects'],
      ['has_wiki', 'hasWiki'],
      ['has_discussions', 'hasDiscussions'],
      ['archived', 'archived'],
    ] as const) {
      const v = expectBool(b, key)
      if (v !== undefined) repo[prop] = v
    }
    const settings = mergeSettingsOf(repo)
    for (const key of MERGE_FLAGS) {
      const v = expectBool(b, key)
      if (v !== undefined) settings[key] = v
    }
    for (const [key, allowed] of Object.entries(MERGE_TEXTS) as Array<
      [keyof typeof MERGE_TEXTS, readonly string[]]
    >) {
      const v = expectString(b, key)
      if (v === undefined) continue
      if (!allowed.includes(v))
        throw validationFailed([{ resource: 'Repository', code: 'invalid', field: key, value: v }])
      ;(settings as unknown as Record<string, string>)[key] = v
    }
    if (!settings.allow_merge_commit && !settings.allow_squash_merge && !settings.allow_rebase_merge)
      throw validationFailed([
        {
          resource: 'Repository',
          code: 'custom',
          field: 'allow_merge_commit',
          message: 'At least one merge method must be enabled',
        },
      ])
    repo.mergeSettings = settings
    repo.updatedAt = ctx.emulator.clock.iso()
    return repoView(ctx, repo, principalOf(req).user)
  })

  api.delete(R, async (req, reply) => {
    const repo = repoOf(req, { role: 'admin', fg: ['administration', 'write'], scopes: ['delete_repo'] })
    ctx.store.repos.delete(repo.id)
    for (const h of ctx.store.hooksFor('repo', repo.id)) ctx.store.hooksById.delete(h.id)
    return reply.code(204).send()
  })

  api.get(`${R}/forks`, async (req, reply) => {
    const repo = repoOf(req)
    const forks = [...ctx.store.repos.values()].filter((r) => r.parentId === repo.id)
    const q = query(req)
    return paginate(
      ctx,
      req,
      reply,
      sortRepos(
        ctx,
        forks,
        q.sort === 'oldest' ? 'created' : 'created',
        q.sort === 'oldest' ? 'asc' : 'desc',
      ),
    ).map((r) => repoView(ctx, r, principalOf(req).user, false))
  })

  api.post(`${R}/forks`, async (req, reply) => {
    const source = repoOf(req)
    const user = requireAccountAccess(req, {
      scopes: ['repo', 'public_repo'],
      fg: ['administration', 'write'],
    })
    const b = body(req)
    const orgName = expectString(b, 'organization')
    let owner = user
    if (orgName) {
      const org = ctx.store.userByLogin(orgName)
      if (org?.type !== 'Organization' || !org.members.has(user.id))
        throw validationFailed([{ resource: 'Fork', code: 'invalid', field: 'organization' }])
      owner = org
    }
    const fork = forkRepo(ctx, user, source, {
      owner,
      name: expectString(b, 'name'),
      defaultBranchOnly: expectBool(b, 'default_branch_only'),
    })
    return reply.code(202).send(repoView(ctx, fork, user))
  })

  // Stars.
  const starTarget = (req: FastifyRequest) => {
    const user = requireAccountAccess(req, { scopes: ['repo', 'public_repo'], fg: ['starring', 'write'] })
    const p = params(req)
    const repo = ctx.store.repoByName(p.owner, p.repo)
    if (!repo) throw notFound()
    repoFor(ctx, req, p.owner, p.repo)
    return { user, repo }
  }
  api.put('/user/starred/:owner/:repo', async (req, reply) => {
    const { user, repo } = starTarget(req)
    star(ctx, user, repo)
    return reply.code(204).send()
  })
  api.delete('/user/starred/:owner/:repo', async (req, reply) => {
    const { user, repo } = starTarget(req)
    unstar(ctx, user, repo)
    return reply.code(204).send()
  })
  api.get('/user/starred/:owner/:repo', async (req, reply) => {
    const user = requireUser(req)
    const p = params(req)
    const repo = repoFor(ctx, req, p.owner, p.repo)
    if (!repo.stars.has(user.id)) throw notFound()
    return reply.code(204).send()
  })
  api.get('/user/starred', async (req, reply) => {
    const user = requireUser(req)
    const repos = [...ctx.store.repos.values()].filter((r) => r.stars.has(user.id))
    return paginate(ctx, req, reply, repos).map((r) => repoView(ctx, r, user, false))
  })
  api.get('/users/:username/starred', async (req, reply) => {
    const u = ctx.store.userByLogin(params(req).username)
    if (!u) throw notFound()
    const repos = [...ctx.store.repos.values()].filter((r) => r.stars.has(u.id) && !r.private)
    return paginate(ctx, req, reply, repos).map((r) => repoView(ctx, r, principalOf(req).user, false))
  })
  api.get(`${R}/stargazers`, async (req, reply) => {
    const repo = repoOf(req)
    const withDates = String(req.headers.accept ?? '').includes('star+json')
    const list = [...repo.stars.entries()].map(([id, at]) =>
      withDates
        ? { starred_at: at, user: userView(ctx, ctx.store.user(id)) }
        : userView(ctx, ctx.store.user(id)),
    )
    return paginate(ctx, req, reply, list)
  })

  // Watching (subscriptions).
  const subscriptionView = (repo: Repo, at: string) => ({
    subscribed: true,
    ignored: false,
    reason: null,
    created_at: at,
    url: `${repoApi(ctx, repo)}/subscription`,
    repository_url: repoApi(ctx, repo),
  })
  api.put(`${R}/subscription`, async (req) => {
    const repo = repoOf(req)
    const user = requireAccountAccess(req, { scopes: ['notifications', 'repo'], fg: ['watching', 'write'] })
    const b = body(req)
    if (expectBool(b, 'ignored') === true || expectBool(b, 'subscribed') === false) {
      repo.watchers.delete(user.id)
      return {
        subscribed: false,
        ignored: true,
        reason: null,
        created_at: ctx.emulator.clock.iso(),
        url: `${repoApi(ctx, repo)}/subscription`,
        repository_url: repoApi(ctx, repo),
      }
    }
    return subscriptionView(repo, subscribe(ctx, user, repo))
  })
  api.get(`${R}/subscription`, async (req) => {
    const repo = repoOf(req)
    const user = requireUser(req)
    const at = repo.watchers.get(user.id)
    if (!at) throw notFound()
    return subscriptionView(repo, at)
  })
  api.delete(`${R}/subscription`, async (req, reply) => {
    const repo = repoOf(req)
    const user = requireAccountAccess(req, { scopes: ['notifications', 'repo'], fg: ['watching', 'write'] })
    repo.watchers.delete(user.id)
    return reply.code(204).send()
  })
  api.get(`${R}/subscribers`, async (req, reply) => {
    const repo = repoOf(req)
    return paginate(
      ctx,
      req,
      reply,
      [...repo.watchers.keys()].map((id) => userView(ctx, ctx.store.user(id))),
    )
  })

  // Collaborators.
  api.get(`${R}/collaborators`, async (req, reply) => {
    const repo = repoOf(req, { role: 'write' })
    const affiliation = query(req).affiliation ?? 'all'
    const ids = [
      ...(affiliation === 'outside' ? [] : [repo.ownerId]),
      ...(affiliation === 'direct' || affiliation === 'outside' || affiliation === 'all'
        ? [...repo.collaborators.keys()]
        : []),
    ]
    const users = [...new Set(ids)].map((id) => ctx.store.user(id)).filter((u) => u.type === 'User')
    return paginate(ctx, req, reply, users).map((u) => collaboratorView(ctx, repo, u))
  })
  api.get(`${R}/collaborators/:username`, async (req, reply) => {
    const repo = repoOf(req, { role: 'write' })
    const u = ctx.store.userByLogin(params(req).username)
    if (!u || !(u.id === repo.ownerId || repo.collaborators.has(u.id))) throw notFound()
    return reply.code(204).send()
  })
  api.get(`${R}/collaborators/:username/permission`, async (req) => {
    const repo = repoOf(req)
    const u = ctx.store.userByLogin(params(req).username)
    if (!u) throw notFound()
    return permissionView(ctx, repo, u)
  })
  api.put(`${R}/collaborators/:username`, async (req, reply) => {
    const repo = repoOf(req, { role: 'admin', fg: ['administration', 'write'] })
    const actor = requireUser(req)
    const u = ctx.store.userByLogin(params(req).username)
    if (!u) throw notFound()
    const permission = expectString(body(req), 'permission') ?? 'push'
    const role = roleFromPermission(permission)
    if (!role || permission === 'read' || permission === 'write')
      throw validationFailed([
        { resource: 'Repository', code: 'invalid', field: 'permission', value: permission },
      ])
    const inv = inviteCollaborator(ctx, actor, repo, u, role)
    if (!inv) return reply.code(204).send()
    return reply.code(201).send(invitationView(ctx, inv.id))
  })
  api.delete(`${R}/collaborators/:username`, async (req, reply) => {
    const repo = repoOf(req, { role: 'admin', fg: ['administration', 'write'] })
    const u = ctx.store.userByLogin(params(req).username)
    if (!u) throw notFound()
    removeCollaborator(ctx, requireUser(req), repo, u)
    return reply.code(204).send()
  })
  api.get(`${R}/invitations`, async (req) => {
    const repo = repoOf(req, { role: 'admin' })
    return [...ctx.store.invitations.values()]
      .filter((i) => i.repoId === repo.id)
      .map((i) => invitationView(ctx, i.id))
  })

  // Labels.
  api.get(`${R}/labels`, async (req, reply) => {
    const repo = repoOf(req)
    return paginate(ctx, req, reply, [...repo.labels.values()]).map((l) => labelView(ctx, repo, l))
  })
  api.get(`${R}/labels/:name`, async (req) => {
    const repo = repoOf(req)
    const l = labelByName(repo, params(req).name)
    if (!l) throw notFound()
    return labelView(ctx, repo, l)
  })
  api.post(`${R}/labels`, async (req, reply) => {
    const repo = repoOf(req, { role: 'write', fg: ['issues', 'write'] })
    const b = body(req)
    const name = expectString(b, 'name')
    if (!name) throw validationFailed([{ resource: 'Label', code: 'missing_field', field: 'name' }])
    const color = (expectString(b, 'color') ?? 'ededed').replace(/^#/, '')
    const l = createLabel(ctx, repo, name, color, expectString(b, 'description') ?? null)
    return reply.code(201).send(labelView(ctx, repo, l))
  })
  api.patch(`${R}/labels/:name`, async (req) => {
    const repo = repoOf(req, { role: 'write', fg: ['issues', 'write'] })
    const l = labelByName(repo, params(req).name)
    if (!l) throw notFound()
    const b = body(req)
    const newName = expectString(b, 'new_name')
    if (newName && newName.toLowerCase() !== l.name.toLowerCase() && labelByName(repo, newName))
      throw validationFailed([{ resource: 'Label', code: 'already_exists', field: 'name' }])
    if (newName) l.name = newName
    const color = expectString(b, 'color')
    if (color) l.color = color.replace(/^#/, '').toLowerCase()
    const description = expectString(b, 'description')
    if (description !== undefined) l.description = description
    return labelView(ctx, repo, l)
  })
  api.delete(`${R}/labels/:name`, async (req, reply) => {
    const repo = repoOf(req, { role: 'write', fg: ['issues', 'write'] })
    const l = labelByName(repo, params(req).name)
    if (!l) throw notFound()
    repo.labels.delete(l.id)
    for (const i of repo.issues.values()) i.labelIds = i.labelIds.filter((x) => x !== l.id)
    return reply.code(204).send()
  })

  // Assignees.
  api.get(`${R}/assignees`, async (req, reply) => {
    const repo = repoOf(req)
    return paginate(ctx, req, reply, assignable(ctx, repo)).map((u) => userView(ctx, u))
  })
  api.get(`${R}/assignees/:username`, async (req, reply) => {
    const repo = repoOf(req)
    const ok = assignable(ctx, repo).some((u) => u.login.toLowerCase() === params(req).username.toLowerCase())
    if (!ok) throw notFound()
    return reply.code(204).send()
  })

  api.get(`${R}/topics`, async (req) => ({ names: repoOf(req).topics }))
  api.put(`${R}/topics`, async (req) => {
    const repo = repoOf(req, { role: 'admin' })
    const names = body(req).names
    if (!Array.isArray(names)) throw new ApiError(422, 'Invalid request.\n\n"names" wasn\'t supplied.')
    repo.topics = names.map(String)
    return { names: repo.topics }
  })
}
