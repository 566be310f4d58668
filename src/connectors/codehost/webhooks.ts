// The code-host's webhooks: a repository hook (all events) per watched repository and an
// organization hook (`/orgs/{org}/hooks`: repository creations, project items) per watched
// organization, each made with Patchbay's secret and verified by X-Hub-Signature-256 (HMAC-SHA256 of the raw
// body). The ping that follows creation is ignored; X-Codehost-Delivery is the dedupe id (the
// same on a redelivery). A push also yields one `commit` event per commit, for New Commit. An
// organization's project item delivery names no repository: its content's is read before
// matching (projectItemAttribution), so it is held against an agent's repository scope.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import type { EventAttribution, NormalizedEvent, WebhookSupport } from '../../kit/define.ts'
import { PatchbayError } from '../../kit/errors.ts'
import { graphql } from './graphql.ts'
import type { ChDelivery } from './upstream.ts'

const ORG_PREFIX = 'org:'

/** The model of an organization's triggers: `org:octo-org`. */
export const orgModel = (org: string) => `${ORG_PREFIX}${org.toLowerCase()}`

/** What an organization hook listens to; everything else arrives on repository hooks. */
export const ORGANIZATION_EVENTS = ['repository', 'projects_v2_item']

const orgOf = (model: string) => (model.startsWith(ORG_PREFIX) ? model.slice(ORG_PREFIX.length) : null)

function hooksPath(model: string): string {
  const org = orgOf(model)
  if (org !== null) return `/orgs/${encodeURIComponent(org)}/hooks`
  const [owner, repo] = model.split('/')
  return `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/hooks`
}

/** Hook ids are stored with their model (`octo-demo/hello-world/hooks/42`), so they can be removed. */
const encodeId = (model: string, id: number | string) => `${model}/hooks/${id}`

function decodeId(id: string): { model: string; hookId: string } {
  const i = id.lastIndexOf('/hooks/')
  if (i < 0) throw new Error(`not a code-host hook id: ${id}`)
  return { model: id.slice(0, i), hookId: id.slice(i + '/hooks/'.length) }
}

const CONTENT_REPOSITORY = `query PatchbayContentRepository($id: ID!) {
  node(id: $id) {
    ... on Issue {
      repository {
        nameWithOwner
      }
    }
    ... on PullRequest {
      repository {
        nameWithOwner
      }
    }
  }
}`

/**
 * An organization's project item delivery names only its content's node id: the issue's or pull
 * request's repository is read with one GraphQL `node` query. A draft issue lies in no repository;
 * its delivery names the project's owner instead (normalizeDelivery).
 */
export const projectItemAttribution: EventAttribution = {
  subject: (e) => {
    if (!e.type.startsWith('projects_v2_item.')) return undefined
    const item = (e.data as { projects_v2_item?: { content_node_id?: unknown; content_type?: unknown } })
      .projects_v2_item
    if (item?.content_type !== 'Issue' && item?.content_type !== 'PullRequest') return undefined
    return typeof item.content_node_id === 'string' && item.content_node_id ? item.content_node_id : undefined
  },
  lookup: async (http, id) => {
    const data = await graphql<{ node: { repository?: { nameWithOwner?: string } } | null }>(
      http,
      CONTENT_REPOSITORY,
      { id },
    )
    const repository = data.node?.repository?.nameWithOwner
    if (!repository) throw new Error(`the code host names no repository for ${id}`)
    return { repository }
  },
}

export const codehostWebhooks: WebhookSupport = {
  // A failed delivery is not sent again by itself (only when redelivered by hand).
  redelivers: false,
  register: async (http, hook) => {
    const org = orgOf(hook.model)
    try {
      const created = await http.post<{ id: number }>(hooksPath(hook.model), {
        name: 'web',
        active: true,
        events: org !== null ? ORGANIZATION_EVENTS : ['*'],
        config: { url: hook.callbackUrl, content_type: 'json', secret: hook.secret, insecure_ssl: '0' },
      })
      return { id: encodeId(hook.model, created.id) }
    } catch (err) {
      // The code host hides an organization's hooks from everyone but its owners (404), and
      // refuses tokens without the hook permission (404 naming the scope, or 403).
      if (
        org !== null &&
        err instanceof PatchbayError &&
        (err.code === 'UPSTREAM_NOT_FOUND' || err.code === 'UPSTREAM_FORBIDDEN')
      )
        throw new PatchbayError(
          'WEBHOOK_PERMISSION_MISSING',
          `The code host refused to create a webhook on the organization ${org}: that needs an owner (admin) of ${org} and a token with the admin:org_hook scope (fine-grained: the organization's "Webhooks" permission, read and write).`,
          {
            hint: `Connect an account that owns ${org} with the admin:org_hook scope, or leave organization out to watch the connection's own account (polled).`,
            upstream: err.upstream,
          },
        )
      throw err
    }
  },
  unregister: async (http, id) => {
    const { model, hookId } = decodeId(id)
    try {
      await http.delete(`${hooksPath(model)}/${encodeURIComponent(hookId)}`)
    } catch (err) {
      // Already gone upstream (removed by hand, or with its repository): nothing left to clean.
      if (!(err instanceof PatchbayError && err.code === 'UPSTREAM_NOT_FOUND')) throw err
    }
  },
  list: async (http, model) => {
    // Hooks live per repository (and per account): only the model asked about can be listed.
    if (!model) return []
    const hooks = await http.get<Array<{ id: number; config?: { url?: string } }>>(hooksPath(model), {
      per_page: 100,
    })
    return (hooks ?? []).map((h) => ({ id: encodeId(model, h.id), callbackUrl: h.config?.url ?? '', model }))
  },
  verify: (delivery, { secret }) => {
    const given = delivery.headers['x-hub-signature-256']
    if (!given?.startsWith('sha256=') || !secret) return false
    const expected = createHmac('sha256', secret).update(delivery.rawBody).digest()
    const got = Buffer.from(given.slice('sha256='.length), 'hex')
    return got.length === expected.length && timingSafeEqual(got, expected)
  },
  parse: (delivery) => {
    const event = delivery.headers['x-codehost-event']
    const deliveryId = delivery.headers['x-codehost-delivery']
    if (!event || !deliveryId)
      throw new Error('not a code-host delivery (no X-Codehost-Event or X-Codehost-Delivery)')
    if (event === 'ping') return { ignore: 'ping (sent when a webhook is created)' }
    const raw = delivery.rawBody.startsWith('payload=')
      ? decodeURIComponent(delivery.rawBody.slice('payload='.length).replace(/\+/g, ' '))
      : delivery.rawBody
    return { deliveryId, events: normalizeDelivery(event, JSON.parse(raw)) }
  },
  attribute: projectItemAttribution,
}

/** Per event, the payload object the event is about, whose web address is its `refs.resource`. */
const RESOURCE_OF: Record<string, string> = {
  issues: 'issue',
  issue_comment: 'comment',
  pull_request: 'pull_request',
  pull_request_review: 'review',
  pull_request_review_comment: 'comment',
  release: 'release',
  repository: 'repository',
  fork: 'forkee',
  discussion: 'discussion',
  discussion_comment: 'comment',
}

const webAddress = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined)
/** `v[key]` when `v` is an object (undefined otherwise): a field of passed-through JSON. */
const prop = (v: unknown, key: string): unknown =>
  v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined

/**
 * The resources a step's output names as made or changed, by their web addresses (`htmlUrl`: an
 * issue's, a comment's, a pull request's, a release's, a repository's; a written file's commit;
 * an API Call's answer's `html_url`) — what the events they cause name as `refs.resource`.
 */
export function changedResources(output: unknown): string[] {
  const o = output as Record<string, unknown> | null
  if (!o || typeof o !== 'object' || Array.isArray(o)) return []
  return [
    webAddress(o.htmlUrl),
    webAddress(prop(o.commit, 'htmlUrl')),
    webAddress(prop(o.body, 'html_url')),
  ].filter((x): x is string => x !== undefined)
}

/**
 * The id of the change a delivery tells of, the same through every webhook that hears it: each
 * webhook's delivery has an id of its own (x-codehost-delivery), but two webhooks on one
 * repository (two connections, or a repository's and its organization's) get the same payload.
 * So the event is stored once and delivered once per trigger, whichever webhooks it came through;
 * a redelivery (same payload) is the same event too.
 */
export function changeId(event: string, body: unknown): string {
  return `${event}:${createHash('sha256').update(JSON.stringify(body)).digest('base64url').slice(0, 32)}`
}

/** A delivery as the events triggers match on: `issues.opened`, `push`, `commit` … */
export function normalizeDelivery(event: string, body: ChDelivery): NormalizedEvent[] {
  const id = changeId(event, body)
  const action = typeof body?.action === 'string' ? body.action : undefined
  const repository: string | undefined = body?.repository?.full_name
  const account: string | undefined = body?.organization?.login ?? body?.sender?.login
  // A project's draft issue lies in no repository: it is the project owner's (the organization's).
  const owner: string | undefined =
    event === 'projects_v2_item' && body?.projects_v2_item?.content_type === 'DraftIssue'
      ? body?.organization?.login
      : undefined
  const resource =
    event === 'push'
      ? webAddress(body?.head_commit?.url)
      : RESOURCE_OF[event]
        ? webAddress(prop(body?.[RESOURCE_OF[event]], 'html_url'))
        : undefined
  const now = new Date().toISOString()
  const data: Record<string, unknown> = { event, ...(slim(body) as Record<string, unknown>) }
  const events: NormalizedEvent[] = [
    {
      id,
      type: action ? `${event}.${action}` : event,
      occurredAt: now,
      refs: { repository, ...(owner ? { owner } : {}), account, ...resourceRef(resource) },
      data,
    },
  ]
  if (event === 'push' && !body.deleted && Array.isArray(body.commits)) {
    const branch = branchOf(body.ref)
    for (const c of body.commits) {
      if (!c?.id) continue
      events.push({
        id: `${id}:${c.id}`,
        type: 'commit',
        occurredAt: c.timestamp ?? now,
        refs: { repository, account, ...resourceRef(webAddress(c.url)) },
        data: {
          event: 'commit',
          ref: body.ref,
          branch,
          commit: slim(c),
          repository: data.repository,
          pusher: body.pusher,
          sender: data.sender,
        },
      })
    }
  }
  return events
}

/** `refs.resource`, kept to what an id may be (events/sources/webhook-delivery.ts): a longer address is left out. */
const resourceRef = (address: string | undefined) =>
  address && address.length <= 256 ? { resource: address } : {}

export const branchOf = (ref: unknown): string | null =>
  typeof ref === 'string' && ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null

const DROPPED = new Set(['node_id', '_links', 'reactions', 'performed_via_github_app', 'permissions'])

/**
 * Dropped fields that a step of this connector takes as input, kept under the object that carries
 * them: Update Project (V2) Item Status takes the item's node id (PVTI_…) as itemId. (Of the other
 * dropped fields — links, reactions, app and permission details — no step takes any.)
 */
export const KEPT_FOR_STEPS: Record<string, ReadonlySet<string>> = {
  projects_v2_item: new Set(['node_id']),
}

/**
 * Payloads for agents, small enough for an LLM's context: API addresses (`*_url` but html_url)
 * and bookkeeping dropped, accounts cut to their login, repositories to what identifies them.
 */
export function slim(v: unknown, depth = 0, key?: string): unknown {
  if (depth > 8 || v === null || typeof v !== 'object') return v
  if (Array.isArray(v)) return v.map((x) => slim(x, depth + 1))
  const o = v as Record<string, unknown>
  if (typeof o.full_name === 'string' && o.owner && typeof o.name === 'string')
    return {
      id: o.id,
      full_name: o.full_name,
      name: o.name,
      owner: prop(o.owner, 'login') ?? null,
      private: Boolean(o.private),
      default_branch: o.default_branch ?? null,
      description: o.description ?? null,
      html_url: o.html_url ?? null,
      ...(o.fork ? { fork: true } : {}),
    }
  if (typeof o.login === 'string' && ('avatar_url' in o || 'type' in o) && !('full_name' in o))
    return { login: o.login, id: o.id, type: o.type }
  const out: Record<string, unknown> = {}
  const kept = key ? KEPT_FOR_STEPS[key] : undefined
  for (const [k, x] of Object.entries(o)) {
    if (kept?.has(k)) {
      out[k] = x
      continue
    }
    if (DROPPED.has(k) || (k.endsWith('_url') && k !== 'html_url') || k === 'url') continue
    out[k] = slim(x, depth + 1, k)
  }
  return out
}
