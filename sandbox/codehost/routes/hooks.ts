// Webhooks: repository hooks and organization hooks, their deliveries and redelivery. Personal
// accounts have no hooks of their own (there is no /user/hooks upstream).
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { principalOf, repoParam, requireAccountAccess } from '../auth.ts'
import { ApiError, type Ctx, notFound, validationFailed } from '../context.ts'
import { deliver, deliveryView, ping } from '../events.ts'
import { resolveRef } from '../git.ts'
import { body, expectBool, intParam, paginate, params } from '../http.ts'
import type { Hook, User } from '../store.ts'
import { hookView } from '../views-misc.ts'

/** Event names a hook may subscribe to ("*" = all). */
export const KNOWN_EVENTS = [
  '*',
  'branch_protection_rule',
  'check_run',
  'check_suite',
  'commit_comment',
  'create',
  'delete',
  'deployment',
  'deployment_status',
  'discussion',
  'discussion_comment',
  'fork',
  'gollum',
  'issue_comment',
  'issues',
  'label',
  'member',
  'membership',
  'meta',
  'milestone',
  'ping',
  'project',
  'project_card',
  'project_column',
  'projects_v2',
  'projects_v2_item',
  'public',
  'pull_request',
  'pull_request_review',
  'pull_request_review_comment',
  'pull_request_review_thread',
  'push',
  'release',
  'repository',
  'repository_dispatch',
  'star',
  'status',
  'watch',
  'workflow_dispatch',
  'workflow_job',
  'workflow_run',
]

const HOOK_SCOPES_REPO = ['admin:repo_hook', 'write:repo_hook', 'repo']
/** Organization hooks: an organization owner's token with admin:org_hook (fine-grained: organization_hooks). */
const HOOK_SCOPES_ORG = ['admin:org_hook']

function parseConfig(b: Record<string, any>, existing?: Hook) {
  const config = b.config
  if (config !== undefined && (typeof config !== 'object' || config === null || Array.isArray(config)))
    throw validationFailed([{ resource: 'Hook', code: 'invalid', field: 'config' }])
  const url = config?.url ?? existing?.url
  if (!url || typeof url !== 'string')
    throw validationFailed([{ resource: 'Hook', code: 'custom', message: 'Config must contain URL.' }])
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw validationFailed([{ resource: 'Hook', code: 'custom', message: 'url is not a valid URL' }])
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw validationFailed([{ resource: 'Hook', code: 'custom', message: 'url is not supported' }])
  const contentType = config?.content_type ?? existing?.contentType ?? 'form'
  if (contentType !== 'json' && contentType !== 'form')
    throw validationFailed([{ resource: 'Hook', code: 'invalid', field: 'content_type', value: contentType }])
  const secret =
    config?.secret === undefined
      ? (existing?.secret ?? null)
      : config.secret === '' || config.secret === null
        ? null
        : String(config.secret)
  const insecure =
    config?.insecure_ssl === undefined ? (existing?.insecureSsl ?? '0') : String(config.insecure_ssl)
  return { url, contentType: contentType as 'json' | 'form', secret, insecureSsl: insecure }
}

function parseEvents(value: unknown, fallback: string[]): string[] {
  if (value === undefined) return fallback
  if (!Array.isArray(value) || value.some((e) => typeof e !== 'string'))
    throw validationFailed([{ resource: 'Hook', code: 'invalid', field: 'events' }])
  const bad = value.filter((e) => !KNOWN_EVENTS.includes(e))
  if (bad.length)
    throw validationFailed([
      { resource: 'Hook', code: 'invalid', field: 'events', message: `Invalid event: ${bad.join(', ')}` },
    ])
  return [...new Set(value as string[])]
}

export function registerHookRoutes(api: FastifyInstance, ctx: Ctx): void {
  // Both kinds share the handlers; `scope` finds the target and checks access.
  const kinds = [
    {
      base: '/repos/:owner/:repo/hooks',
      kind: 'repo' as const,
      scope: (req: FastifyRequest, write: boolean): { targetId: number; actor: User | null } => {
        const repo = repoParam(ctx, req, {
          role: 'admin',
          fg: ['repository_hooks', write ? 'write' : 'read'],
          scopes: write ? HOOK_SCOPES_REPO : [...HOOK_SCOPES_REPO, 'read:repo_hook'],
        })
        return { targetId: repo.id, actor: principalOf(req).user }
      },
      label: 'repository',
    },
    {
      base: '/orgs/:org/hooks',
      kind: 'org' as const,
      scope: (req: FastifyRequest, write: boolean): { targetId: number; actor: User | null } => {
        const org = ctx.store.userByLogin(params(req).org)
        const user = requireAccountAccess(req, {
          scopes: HOOK_SCOPES_ORG,
          fg: ['organization_hooks', write ? 'write' : 'read'],
        })
        // The code host hides an organization's hooks from everyone but its owners: a member,
        // an outsider and a missing organization all get 404.
        if (org?.type !== 'Organization' || org.members.get(user.id) !== 'admin') throw notFound()
        const t = principalOf(req).token
        if (t?.kind === 'fine_grained' && t.ownerId !== org.id)
          throw new ApiError(403, 'Resource not accessible by personal access token')
        return { targetId: org.id, actor: user }
      },
      label: 'organization',
    },
  ]

  for (const k of kinds) {
    const hookOf = (req: FastifyRequest, write: boolean) => {
      const { targetId, actor } = k.scope(req, write)
      const hook = ctx.store.hooksById.get(intParam(params(req).hook_id))
      if (!hook || hook.kind !== k.kind || hook.targetId !== targetId) throw notFound()
      return { hook, actor: actor! }
    }

    api.get(k.base, async (req, reply) => {
      const { targetId } = k.scope(req, false)
      return paginate(ctx, req, reply, ctx.store.hooksFor(k.kind, targetId)).map((h) => hookView(ctx, h))
    })

    api.post(k.base, async (req, reply) => {
      const { targetId, actor } = k.scope(req, true)
      const b = body(req)
      const name = b.name ?? 'web'
      if (name !== 'web')
        throw validationFailed([
          { resource: 'Hook', code: 'custom', field: 'name', message: `Invalid name: ${name}` },
        ])
      const cfg = parseConfig(b)
      const events = parseEvents(b.events, ['push'])
      if (ctx.store.hooksFor(k.kind, targetId).some((h) => h.url === cfg.url))
        throw validationFailed([
          { resource: 'Hook', code: 'custom', message: `Hook already exists on this ${k.label}` },
        ])
      const now = ctx.emulator.clock.iso()
      const hook: Hook = {
        id: ctx.store.nextId('hook', 480_000_001),
        kind: k.kind,
        targetId,
        name: 'web',
        active: expectBool(b, 'active') ?? true,
        events,
        createdAt: now,
        updatedAt: now,
        ...cfg,
      }
      ctx.store.hooksById.set(hook.id, hook)
      if (k.kind === 'repo') ctx.store.repo(targetId).hooks.push(hook)
      if (hook.active) ping(ctx, hook, actor!)
      return reply.code(201).send(hookView(ctx, hook))
    })

    api.get(`${k.base}/:hook_id`, async (req) => hookView(ctx, hookOf(req, false).hook))

    api.patch(`${k.base}/:hook_id`, async (req) => {
      const { hook } = hookOf(req, true)
      const b = body(req)
      if (b.config !== undefined) Object.assign(hook, parseConfig(b, hook))
      if (b.events !== undefined) hook.events = parseEvents(b.events, hook.events)
      const add = b.add_events !== undefined ? parseEvents(b.add_events, []) : []
      const remove = b.remove_events !== undefined ? parseEvents(b.remove_events, []) : []
      hook.events = [...new Set([...hook.events, ...add])].filter((e) => !remove.includes(e))
      const active = expectBool(b, 'active')
      if (active !== undefined) hook.active = active
      hook.updatedAt = ctx.emulator.clock.iso()
      return hookView(ctx, hook)
    })

    api.delete(`${k.base}/:hook_id`, async (req, reply) => {
      const { hook } = hookOf(req, true)
      ctx.store.hooksById.delete(hook.id)
      if (k.kind === 'repo') {
        const repo = ctx.store.repo(hook.targetId)
        repo.hooks = repo.hooks.filter((h) => h !== hook)
      }
      return reply.code(204).send()
    })

    api.get(`${k.base}/:hook_id/config`, async (req) => {
      const v = hookView(ctx, hookOf(req, false).hook)
      return v.config
    })
    api.patch(`${k.base}/:hook_id/config`, async (req) => {
      const { hook } = hookOf(req, true)
      Object.assign(hook, parseConfig({ config: body(req) }, hook))
      hook.updatedAt = ctx.emulator.clock.iso()
      return hookView(ctx, hook).config
    })

    api.post(`${k.base}/:hook_id/pings`, async (req, reply) => {
      const { hook, actor } = hookOf(req, true)
      ping(ctx, hook, actor)
      return reply.code(204).send()
    })

    if (k.kind === 'repo')
      api.post(`${k.base}/:hook_id/tests`, async (req, reply) => {
        const { hook, actor } = hookOf(req, true)
        const repo = ctx.store.repo(hook.targetId)
        const head = resolveRef(ctx.store, repo, repo.defaultBranch)
        // A test delivers a push event for the latest commit of the default branch, if subscribed.
        if (head && (hook.events.includes('push') || hook.events.includes('*')))
          deliver(ctx, hook, 'push', {
            ref: `refs/heads/${repo.defaultBranch}`,
            before: head.parents[0] ?? '0000000000000000000000000000000000000000',
            after: head.sha,
            repository: { id: repo.id, name: repo.name },
            sender: { login: actor.login, id: actor.id },
            commits: [],
            head_commit: { id: head.sha, message: head.message },
          })
        return reply.code(204).send()
      })

    api.get(`${k.base}/:hook_id/deliveries`, async (req, reply) => {
      const { hook } = hookOf(req, false)
      const list = ctx.store.deliveries.filter((d) => d.hookId === hook.id).reverse()
      return paginate(ctx, req, reply, list).map((d) => deliveryView(d))
    })

    const deliveryOf = (req: FastifyRequest, write: boolean) => {
      const { hook, actor } = hookOf(req, write)
      const d = ctx.store.deliveries.find(
        (x) => x.hookId === hook.id && x.id === intParam(params(req).delivery_id),
      )
      if (!d) throw notFound()
      return { hook, d, actor }
    }
    api.get(`${k.base}/:hook_id/deliveries/:delivery_id`, async (req) =>
      deliveryView(deliveryOf(req, false).d, true),
    )

    api.post(`${k.base}/:hook_id/deliveries/:delivery_id/attempts`, async (req, reply) => {
      const { hook, d } = deliveryOf(req, true)
      // The same payload and GUID, signed again with the hook's current secret.
      deliver(ctx, hook, d.event, d.payload as Record<string, unknown>, d)
      return reply.code(202).send({})
    })
  }
}
