// Webhook events: which hooks hear an event, how a delivery is signed and sent, redelivery with
// the same GUID.
import { createHmac } from 'node:crypto'
import { keepNewest } from '../common/keep-newest.ts'
import type { Ctx } from './context.ts'
import { guid } from './ids.ts'
import type { Hook, HookDelivery, Repo, User } from './store.ts'
import { orgView, repoView, userView } from './views.ts'
import { hookView } from './views-misc.ts'

const ZEN = [
  'Design for failure.',
  'Keep it logically awesome.',
  'Speak like a human.',
  'Approachable is better than simple.',
  'Mind your words, they are important.',
  'Non-blocking is better than blocking.',
]

export const DELIVERY_TIMEOUT_MS = 10_000

/** The `repository` and `sender` every repository event carries (and `organization` for an organization's). */
export function envelope(
  ctx: Ctx,
  repo: Repo | null,
  sender: User,
): { repository?: unknown; organization?: unknown; sender: unknown } {
  const owner = repo ? ctx.store.users.get(repo.ownerId) : undefined
  return {
    ...(repo ? { repository: repoView(ctx, repo, null, false) } : {}),
    ...(owner?.type === 'Organization' ? { organization: orgView(ctx, owner) } : {}),
    sender: userView(ctx, sender),
  }
}

function listens(h: Hook, event: string): boolean {
  return h.active && (h.events.includes('*') || h.events.includes(event))
}

/**
 * Sends `event` to the hooks that hear it, as the code host does: a repository's events to its
 * own hooks and to its organization's hooks; `org` names an organization whose hooks alone hear
 * it (`projects_v2_item` of an organization's project). Personal accounts have no hooks of their
 * own: nothing at the account level reaches a personal account (no snippet or mention events).
 */
export function emit(
  ctx: Ctx,
  event: string,
  payload: Record<string, unknown>,
  target: { repo?: Repo | null; org?: User | null },
): void {
  const store = ctx.store
  const hooks = new Map<number, Hook>()
  if (target.repo) {
    for (const h of store.hooksFor('repo', target.repo.id)) hooks.set(h.id, h)
    const owner = store.users.get(target.repo.ownerId)
    if (owner?.type === 'Organization') for (const h of store.hooksFor('org', owner.id)) hooks.set(h.id, h)
  }
  if (target.org?.type === 'Organization')
    for (const h of store.hooksFor('org', target.org.id)) hooks.set(h.id, h)
  for (const h of hooks.values()) if (listens(h, event)) deliver(ctx, h, event, payload)
}

export function sign(secret: string, body: string): { sha256: string; sha1: string } {
  return {
    sha256: `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    sha1: `sha1=${createHmac('sha1', secret).update(body).digest('hex')}`,
  }
}

export function deliver(
  ctx: Ctx,
  hook: Hook,
  event: string,
  payload: Record<string, unknown>,
  redeliveryOf?: HookDelivery,
): HookDelivery {
  const store = ctx.store
  const id = redeliveryOf?.guid ?? guid(store.rng)
  const json = JSON.stringify(payload)
  const body = hook.contentType === 'form' ? `payload=${encodeURIComponent(json)}` : json
  const headers: Record<string, string> = {
    'content-type': hook.contentType === 'form' ? 'application/x-www-form-urlencoded' : 'application/json',
    'user-agent': 'Codehost-Hookshot/5a1c0de',
    'x-codehost-event': event,
    'x-codehost-delivery': id,
    'x-codehost-hook-id': String(hook.id),
    'x-codehost-hook-installation-target-id': String(hook.targetId),
    'x-codehost-hook-installation-target-type': hook.kind === 'repo' ? 'repository' : 'organization',
  }
  if (hook.secret) {
    const sig = sign(hook.secret, body)
    headers['x-hub-signature'] = sig.sha1
    headers['x-hub-signature-256'] = sig.sha256
  }
  const { record } = ctx.emulator.webhooks.send({
    hookId: String(hook.id),
    url: hook.url,
    event,
    headers,
    body,
    id,
    attempts: 1,
    retryDelayMs: () => 0,
    timeoutMs: DELIVERY_TIMEOUT_MS,
  })
  const repository = payload.repository as { id?: number } | undefined
  const delivery: HookDelivery = {
    id: store.nextId('delivery', 90_000_001),
    guid: id,
    hookId: hook.id,
    event,
    action: typeof payload.action === 'string' ? payload.action : null,
    repoId: repository?.id ?? null,
    redelivery: redeliveryOf !== undefined,
    deliveredAt: ctx.emulator.clock.iso(),
    record,
    payload,
  }
  store.deliveries.push(delivery)
  keepNewest(store.deliveries, 5000)
  return delivery
}

export function ping(ctx: Ctx, hook: Hook, sender: User): HookDelivery {
  const repo = hook.kind === 'repo' ? ctx.store.repo(hook.targetId) : null
  const zen = ZEN[hook.id % ZEN.length]
  return deliver(ctx, hook, 'ping', {
    zen,
    hook_id: hook.id,
    hook: hookView(ctx, hook),
    ...(hook.kind === 'org' ? { organization: orgView(ctx, ctx.store.user(hook.targetId)) } : {}),
    ...envelope(ctx, repo, sender),
  })
}

export function deliveryView(d: HookDelivery, detail = false) {
  const r = d.record
  const last = r.attempts.at(-1)
  const status =
    r.outcome === 'pending'
      ? 'pending'
      : r.outcome === 'dropped'
        ? 'dropped'
        : last?.status && last.status < 300
          ? 'OK'
          : last?.error === 'timeout'
            ? 'timed out'
            : last?.status
              ? `Invalid HTTP Response: ${last.status}`
              : `failed to connect to host${last?.error ? `: ${last.error}` : ''}`
  return {
    id: d.id,
    guid: d.guid,
    delivered_at: d.deliveredAt,
    redelivery: d.redelivery,
    duration: last ? Math.round(last.durationMs) / 1000 : 0,
    status,
    status_code: last?.status ?? 0,
    event: d.event,
    action: d.action,
    installation_id: null,
    repository_id: d.repoId,
    throttled_at: null,
    ...(detail
      ? {
          url: r.url,
          request: { headers: r.headers, payload: d.payload },
          response: { headers: {}, payload: null },
        }
      : {}),
  }
}
