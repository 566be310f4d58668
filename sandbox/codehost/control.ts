// The code-host's own control API under /_sandbox (the common part — reset, clock, faults,
// webhook deliveries — comes from the emulator shell). Changes made here go through the same
// code as the REST API, so they emit the same webhooks.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { completeRun, findRun, findWorkflow, startRun } from './actions.ts'
import { buildCommit, updateRef } from './branches.ts'
import { ApiError, type Ctx, notFound, type RunSettings } from './context.ts'
import { act } from './control-act.ts'
import { conclusionOf, issueOf, repoOf, str, userOf } from './control-args.ts'
import { discussionView } from './discussions.ts'
import { resolveRef } from './git.ts'
import { body, intParam, params } from './http.ts'
import { classicToken, fineGrainedToken, nodeId, oauthToken } from './ids.ts'
import { addItem } from './projects.ts'
import { pullJson } from './pulls.ts'
import type { Limits } from './ratelimit.ts'
import { addToken, addUser, type SeedInfo, STATUS_OPTIONS } from './seed.ts'
import type { OAuthApp, ProjectV2, Token } from './store.ts'
import { userView } from './views.ts'
import { runView } from './views-actions.ts'

export function tokenView(t: Token, ctx: Ctx) {
  return {
    token: t.value,
    kind: t.kind,
    login: ctx.store.user(t.userId).login,
    scopes: t.scopes,
    owner: t.ownerId ? ctx.store.user(t.ownerId).login : null,
    repositories:
      t.repoIds?.map((id) => {
        const r = ctx.store.repo(id)
        return `${ctx.store.user(r.ownerId).login}/${r.name}`
      }) ?? null,
    permissions: t.permissions,
    expires_at: t.expiresAt ? new Date(t.expiresAt).toISOString() : null,
  }
}

export function registerControl(
  app: FastifyInstance,
  ctx: Ctx,
  limits: Limits,
  info: () => SeedInfo,
  defaults: RunSettings,
): void {
  app.get('/_sandbox/demo', async () => {
    const s = info()
    const project = ctx.store.projectsV2[0]
    const classic = ctx.store.classicProjects[0]
    const repo = ctx.store.repoByName(s.demo.login, 'hello-world')
    return {
      demo: {
        login: s.demo.login,
        password: s.demo.password,
        token: s.demoToken.value,
        scopes: s.demoToken.scopes,
      },
      reviewer: { login: s.reviewer.login, password: s.reviewer.password, token: s.reviewerToken.value },
      oauthApp: {
        name: s.app.name,
        clientId: s.app.clientId,
        clientSecret: s.app.clientSecret,
        callbackUrl: s.app.callbackUrl,
      },
      repo: repo
        ? {
            owner: s.demo.login,
            name: repo.name,
            workflows: repo.workflows.map((w) => ({ id: w.id, path: w.path })),
          }
        : null,
      projectV2: project
        ? {
            id: project.nodeId,
            number: project.number,
            fields: project.fields.map((f) => ({
              id: f.nodeId,
              name: f.name,
              dataType: f.dataType,
              options: f.options.map((o) => ({ id: o.id, name: o.name })),
            })),
            items: project.items.map((i) => ({
              id: i.nodeId,
              type: i.contentType,
              number: i.number,
              title: i.draftTitle,
            })),
          }
        : null,
      classicProject: classic
        ? {
            id: classic.id,
            columns: classic.columns.map((c) => ({
              id: c.id,
              name: c.name,
              cards: c.cards.map((k) => k.id),
            })),
          }
        : null,
    }
  })

  app.post('/_sandbox/users', async (req, reply) => {
    const b = body(req)
    const login = str(b, 'login', true)!
    if (!/^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/.test(login))
      throw new ApiError(422, 'login is invalid')
    if (ctx.store.userByLogin(login)) throw new ApiError(422, 'login already exists')
    const type = b.type === 'Organization' ? 'Organization' : 'User'
    const u = addUser(ctx.store, login, {
      name: str(b, 'name') ?? null,
      email: b.email === undefined ? undefined : (str(b, 'email') ?? null),
      password: str(b, 'password'),
      type,
      createdAt: ctx.emulator.clock.iso(),
    })
    for (const m of Array.isArray(b.members) ? b.members : []) u.members.set(userOf(ctx, m).id, 'member')
    for (const m of Array.isArray(b.admins) ? b.admins : []) u.members.set(userOf(ctx, m).id, 'admin')
    let token: Token | undefined
    if (b.token && type === 'User') {
      const scopes = Array.isArray(b.token)
        ? b.token.map(String)
        : ['repo', 'gist', 'workflow', 'user', 'admin:repo_hook', 'project']
      token = addToken(ctx.store, u, 'classic', classicToken(ctx.store.rng), scopes, ctx.emulator.clock.iso())
    }
    return reply
      .code(201)
      .send({ user: userView(ctx, u), password: u.password, ...(token ? { token: token.value } : {}) })
  })

  app.post('/_sandbox/tokens', async (req, reply) => {
    const b = body(req)
    const user = userOf(ctx, b.login ?? b.as)
    const kind = (b.kind ?? 'classic') as Token['kind']
    if (!['classic', 'oauth', 'fine_grained'].includes(kind))
      throw new ApiError(422, '"kind" must be classic, oauth or fine_grained')
    const now = ctx.emulator.clock.iso()
    const expiresAt = typeof b.expiresInMs === 'number' ? ctx.emulator.clock.now() + b.expiresInMs : null
    if (kind === 'fine_grained') {
      const owner = userOf(ctx, b.owner, user)
      const names: string[] = Array.isArray(b.repositories) ? b.repositories.map(String) : []
      const repoIds = names.map((n) => {
        const [o, r] = n.includes('/') ? n.split('/') : [owner.login, n]
        const repo = ctx.store.repoByName(o, r)
        if (!repo) throw new ApiError(404, `No repository ${o}/${r}`)
        if (repo.ownerId !== owner.id) throw new ApiError(422, `${o}/${r} is not owned by ${owner.login}`)
        return repo.id
      })
      const t = addToken(ctx.store, user, 'fine_grained', fineGrainedToken(ctx.store.rng), [], now, {
        ownerId: owner.id,
        repoIds,
        permissions: b.permissions && typeof b.permissions === 'object' ? b.permissions : null,
        expiresAt,
      })
      return reply.code(201).send(tokenView(t, ctx))
    }
    const scopes: string[] = Array.isArray(b.scopes) ? b.scopes.map(String) : []
    let appId: number | null = null
    if (kind === 'oauth') {
      const a = b.clientId ? [...ctx.store.apps.values()].find((x) => x.clientId === b.clientId) : info().app
      if (!a) throw new ApiError(404, `No OAuth app ${b.clientId}`)
      appId = a.id
    }
    const value = kind === 'oauth' ? oauthToken(ctx.store.rng) : classicToken(ctx.store.rng)
    const t = addToken(ctx.store, user, kind, value, scopes, now, { appId, expiresAt })
    return reply.code(201).send(tokenView(t, ctx))
  })

  app.delete('/_sandbox/tokens/:token', async (req, reply) => {
    if (!ctx.store.tokens.delete(params(req).token)) throw notFound()
    return reply.code(204).send()
  })

  app.post('/_sandbox/apps', async (req, reply) => {
    const b = body(req)
    const a: OAuthApp = {
      id: ctx.store.nextId('app', 501),
      name: str(b, 'name') ?? 'Sandbox app',
      clientId: `Ov23li${ctx.store.rng.alnum(14)}`,
      clientSecret: ctx.store.rng.hex(40),
      callbackUrl: str(b, 'callbackUrl') ?? null,
      ownerId: userOf(ctx, b.owner, info().demo).id,
    }
    ctx.store.apps.set(a.id, a)
    return reply.code(201).send({
      id: a.id,
      name: a.name,
      clientId: a.clientId,
      clientSecret: a.clientSecret,
      callbackUrl: a.callbackUrl,
    })
  })

  app.post('/_sandbox/push', async (req, reply) => {
    const b = body(req)
    const repo = repoOf(ctx, b)
    const actor = userOf(ctx, b.as, info().demo)
    const branch = str(b, 'branch') ?? repo.defaultBranch
    const commits = Array.isArray(b.commits)
      ? b.commits
      : [{ message: str(b, 'message') ?? 'Update', files: b.files ?? {} }]
    const before = repo.branches.get(branch) ?? null
    // A push to a new branch starts from `from` (default: the default branch).
    let head = before
    if (!head && repo.branches.size > 0) {
      const start = resolveRef(ctx.store, repo, str(b, 'from') ?? repo.defaultBranch)
      if (!start) throw new ApiError(404, `No ref ${b.from}`)
      head = start.sha
    }
    // All commits go out in one push, as a `git push` of several commits does.
    const shas: string[] = []
    for (const c of commits) {
      const files = (c?.files ?? {}) as Record<string, string | null>
      const writes = Object.entries(files).map(([path, content]) => ({
        path,
        content: content === null ? null : Buffer.from(String(content)),
      }))
      head = buildCommit(ctx, head, actor, String(c?.message ?? 'Update'), writes).sha
      shas.push(head)
    }
    if (head) updateRef(ctx, repo, 'branch', branch, head, actor)
    return reply
      .code(201)
      .send({ ref: `refs/heads/${branch}`, before, after: repo.branches.get(branch) ?? null, commits: shas })
  })

  app.post('/_sandbox/tags', async (req, reply) => {
    const b = body(req)
    const repo = repoOf(ctx, b)
    const actor = userOf(ctx, b.as, info().demo)
    const tag = str(b, 'tag', true)!
    if (repo.tags.has(tag)) throw new ApiError(422, 'Reference already exists')
    const commit = resolveRef(ctx.store, repo, str(b, 'sha') ?? str(b, 'ref') ?? repo.defaultBranch)
    if (!commit) throw new ApiError(404, 'No such ref')
    updateRef(ctx, repo, 'tag', tag, commit.sha, actor)
    return reply.code(201).send({ ref: `refs/tags/${tag}`, sha: commit.sha })
  })

  app.post('/_sandbox/act', async (req, reply) => {
    const b = body(req)
    const actor = userOf(ctx, b.as)
    const action = str(b, 'action', true)!
    const result = act(ctx, action, actor, b)
    return reply.code(201).send({ ok: true, action, result })
  })

  // Workflow runs.
  app.get('/_sandbox/workflow-runs/settings', async () => ctx.runSettings)
  app.post('/_sandbox/workflow-runs/settings', async (req) => {
    const b = body(req)
    if (b.reset) Object.assign(ctx.runSettings, defaults)
    if (typeof b.queuedMs === 'number') ctx.runSettings.queuedMs = b.queuedMs
    if (typeof b.inProgressMs === 'number') ctx.runSettings.inProgressMs = b.inProgressMs
    if (typeof b.autoComplete === 'boolean') ctx.runSettings.autoComplete = b.autoComplete
    if (b.defaultConclusion !== undefined)
      ctx.runSettings.defaultConclusion = conclusionOf(b.defaultConclusion)
    return ctx.runSettings
  })
  app.post('/_sandbox/workflow-runs', async (req, reply) => {
    const b = body(req)
    const repo = repoOf(ctx, b)
    const wf = findWorkflow(repo, String(b.workflow ?? 'ci.yml'))
    if (!wf) throw new ApiError(404, 'No such workflow')
    const ref = str(b, 'ref') ?? repo.defaultBranch
    const commit = resolveRef(ctx.store, repo, ref)
    if (!commit) throw new ApiError(404, `No ref ${ref}`)
    const run = startRun(ctx, repo, wf, userOf(ctx, b.as, info().demo), {
      sha: commit.sha,
      branch: ref,
      event: str(b, 'event') ?? 'push',
      conclusion: b.conclusion === undefined ? undefined : conclusionOf(b.conclusion),
    })
    return reply.code(201).send(runView(ctx, repo, run))
  })
  const runOf = (req: FastifyRequest) => {
    const hit = findRun(ctx, intParam(params(req).id))
    if (!hit) throw notFound()
    return hit
  }
  app.post('/_sandbox/workflow-runs/:id/complete', async (req) => {
    const { repo, run } = runOf(req)
    const b = body(req)
    completeRun(
      ctx,
      repo,
      run,
      b.conclusion === undefined
        ? (run.plannedConclusion ?? ctx.runSettings.defaultConclusion)
        : conclusionOf(b.conclusion),
    )
    return runView(ctx, repo, run)
  })
  app.post('/_sandbox/workflow-runs/:id/conclusion', async (req) => {
    const { repo, run } = runOf(req)
    run.plannedConclusion = conclusionOf(body(req).conclusion)
    return runView(ctx, repo, run)
  })

  app.post('/_sandbox/pulls/:owner/:repo/:number/mergeable', async (req) => {
    const p = params(req)
    const repo = ctx.store.repoByName(p.owner, p.repo)
    const issue = repo?.issues.get(Number(p.number))
    if (!repo || !issue?.pull) throw notFound()
    const m = body(req).mergeable
    issue.pull.mergeableOverride = m === true || m === false ? m : null
    return pullJson(ctx, repo, issue)
  })

  app.get('/_sandbox/rate-limits', async () => limits.settings)
  app.post('/_sandbox/rate-limits', async (req) => {
    const b = body(req)
    if (b.reset) limits.reset()
    return limits.configure(b)
  })

  app.post('/_sandbox/projects-v2', async (req, reply) => {
    const b = body(req)
    const owner = userOf(ctx, b.owner, info().demo)
    const store = ctx.store
    const now = ctx.emulator.clock.iso()
    const pid = store.nextId('project', 1)
    const mkField = (
      name: string,
      dataType: ProjectV2['fields'][number]['dataType'],
      options: ProjectV2['fields'][number]['options'] = [],
    ) => {
      const id = store.nextId('project_field', 100_001)
      return {
        id,
        nodeId: nodeId(dataType === 'SINGLE_SELECT' ? 'PVTSSF' : 'PVTF', id),
        name,
        dataType,
        options,
      }
    }
    const optionNames: string[] = Array.isArray(b.statusOptions)
      ? b.statusOptions.map(String)
      : STATUS_OPTIONS.map((o) => o.name)
    const status = mkField(
      'Status',
      'SINGLE_SELECT',
      optionNames.map(
        (name, i) =>
          STATUS_OPTIONS.find((o) => o.name === name) ?? {
            id: store.rng.hex(8),
            name,
            color: ['GRAY', 'BLUE', 'ORANGE', 'RED'][i % 4],
            description: '',
          },
      ),
    )
    const project: ProjectV2 = {
      id: pid,
      nodeId: nodeId('PVT', pid),
      number: store.projectsV2.filter((p) => p.ownerId === owner.id).length + 1,
      ownerId: owner.id,
      title: str(b, 'title') ?? 'Sandbox project',
      shortDescription: null,
      public: !!b.public,
      closed: false,
      createdAt: now,
      updatedAt: now,
      fields: [mkField('Title', 'TITLE'), status],
      items: [],
    }
    store.projectsV2.push(project)
    for (const it of Array.isArray(b.items) ? b.items : []) {
      if (it.draft) {
        const id = store.nextId('project_item', 80_000_001)
        project.items.push({
          id,
          nodeId: nodeId('PVTI', id),
          contentType: 'DraftIssue',
          repoId: null,
          number: null,
          draftTitle: String(it.draft),
          draftBody: null,
          values: new Map(),
          creatorId: owner.id,
          createdAt: now,
          updatedAt: now,
          archived: false,
        })
        continue
      }
      const repo = repoOf(ctx, it)
      const issue = issueOf(repo, it.number)
      addItem(ctx, owner, project, {
        repoId: repo.id,
        number: issue.number,
        type: issue.pull ? 'PullRequest' : 'Issue',
      })
    }
    return reply.code(201).send({
      id: project.nodeId,
      number: project.number,
      fields: project.fields.map((f) => ({
        id: f.nodeId,
        name: f.name,
        options: f.options.map((o) => ({ id: o.id, name: o.name })),
      })),
      items: project.items.map((i) => ({ id: i.nodeId, type: i.contentType, number: i.number })),
    })
  })

  app.get('/_sandbox/discussions/:owner/:repo', async (req) => {
    const p = params(req)
    const repo = ctx.store.repoByName(p.owner, p.repo)
    if (!repo) throw notFound()
    return {
      discussions: [...repo.discussions.values()].map((d) => ({
        ...discussionView(ctx, repo, d),
        comments_list: d.comments,
      })),
    }
  })
}
