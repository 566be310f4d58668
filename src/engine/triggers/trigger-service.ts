// Triggers: an agent's subscription to an upstream event kind — created (its configuration
// validated, read from page addresses and held against the agent's scope and connections),
// listed, viewed and deleted. An instant trigger gets the upstream webhook for its (connection,
// model) from webhook-subscriptions.ts (shared by every trigger on it, removed with the last);
// a polled one gets a schedule. The webhook source (events/sources/) asks here which triggers
// listen on a webhook.
import type { TriggerDefinition } from '../../kit/define.ts'
import { triggerMechanism } from '../../kit/define.ts'
import { PatchbayError, validationError } from '../../kit/errors.ts'
import type { HeldListeners } from '../../store/event-log.ts'
import { nowIso } from '../../store/ids.ts'
import type { PageRequest } from '../../store/paging.ts'
import type { SubscriptionRow } from '../../store/subscriptions.ts'
import type { TriggerRow, Triggers, TriggerTarget } from '../../store/triggers.ts'
import type { Scope } from '../access/places.ts'
import type { AgentService } from '../agents/agent-service.ts'
import type { Changes } from '../changes/changes.ts'
import type { ConnectionService } from '../connections/connection-service.ts'
import type { EngineEvents } from '../engine-events.ts'
import type { Registry } from '../registry.ts'
import type { ToolService } from '../tools/tool-service.ts'
import type { UpstreamPages } from '../upstream/upstream-pages.ts'
import { triggerView } from './trigger-views.ts'
import type { WebhookSubscriptions } from './webhook-subscriptions.ts'

export type { TriggerTarget }

export interface NewTrigger {
  trigger: string
  connectionId: string
  config: Record<string, unknown>
  target?: TriggerTarget
  pollIntervalMs?: number
}

export interface ListeningTrigger {
  row: TriggerRow
  def: TriggerDefinition
  config: Record<string, unknown>
  target: TriggerTarget
}

export const MIN_POLL_INTERVAL_MS = 10_000
export const DEFAULT_POLL_INTERVAL_MS = 60_000

export class TriggerService {
  /** The upstream webhooks instant triggers listen on. */
  readonly webhooks: WebhookSubscriptions
  #agents: Pick<AgentService, 'get'>
  #tools: Pick<ToolService, 'exists' | 'checkStartingTrigger'>
  #triggers: Triggers
  #registry: Registry
  #connections: ConnectionService
  /** Who listens on each webhook (subscription id), until a change to its triggers. */
  #listening = new Map<string, ListeningTrigger[]>()
  #changes: Changes
  /** Lowest poll interval allowed, per trigger (tests shorten it). */
  readonly minPollIntervalMs: number
  /** Reads page addresses in scoped config fields into identifiers (upstream/upstream-pages.ts). */
  #pages: UpstreamPages

  constructor(deps: {
    webhooks: WebhookSubscriptions
    triggers: Triggers
    registry: Registry
    connections: ConnectionService
    agents: Pick<AgentService, 'get'>
    tools: Pick<ToolService, 'exists' | 'checkStartingTrigger'>
    pages: UpstreamPages
    changes: Changes
    minPollIntervalMs?: number
    /** An agent's triggers (and, with the last of them, their upstream webhooks) go with it. */
    bus: EngineEvents
  }) {
    deps.bus.on('agentDeleted', (e) => this.deleteForAgent(e.workspaceId, e.agentId))
    this.webhooks = deps.webhooks
    this.minPollIntervalMs = deps.minPollIntervalMs ?? MIN_POLL_INTERVAL_MS
    this.#changes = deps.changes
    // Triggers added or removed on any instance: who listens on a webhook is read again.
    deps.changes.subscribe('triggers', (ids) => {
      if (ids.length === 0) this.#listening.clear()
      for (const id of ids) this.#listening.delete(id)
    })
    this.#agents = deps.agents
    this.#tools = deps.tools
    this.#pages = deps.pages
    this.#triggers = deps.triggers
    this.#registry = deps.registry
    this.#connections = deps.connections
  }

  async create(workspaceId: string, agentId: string, req: NewTrigger) {
    const registered = this.#registry.triggers.get(req.trigger)
    if (!registered)
      throw new PatchbayError('TRIGGER_NOT_FOUND', `There is no trigger "${req.trigger}".`, {
        hint: 'Trigger ids are listed in GET /v1/catalog (e.g. taskboard.card_moved).',
      })
    const { connector, trigger } = registered
    const agent = await this.#agents.get(workspaceId, agentId)
    // The connection is checked before anything is read with it (a page address below).
    const loaded = await this.#connections.usable(workspaceId, req.connectionId, connector, req.trigger)
    if (!agent.connectionIds.includes(loaded.row.id))
      throw new PatchbayError(
        'CONNECTION_NOT_ALLOWED',
        `Agent ${agentId} may not use connection ${loaded.row.id}.`,
        {
          hint: "Add the connection to the agent's connectionIds first.",
        },
      )
    let raw: unknown = req.config ?? {}
    // A page address given for an identifier is read into the identifier.
    if (this.#pages.holdsPageAddress(connector, trigger.scoped, raw))
      raw = await this.#pages.resolve(connector, trigger.scoped ?? [], raw, loaded.credentials, 'config')
    const parsed = trigger.config.safeParse(raw)
    if (!parsed.success) throw validationError(parsed.error.issues, 'config')
    let config = parsed.data as Record<string, unknown>
    if (trigger.prepare)
      config = trigger.prepare(config, {
        id: loaded.row.account_id,
        name: loaded.row.account_name,
      }) as Record<string, unknown>
    this.#checkScope(agent.scope, trigger, config)

    const target: TriggerTarget = req.target ?? { type: 'agent' }
    if (target.type === 'tool' && !(await this.#tools.exists(workspaceId, agentId, target.toolId)))
      throw new PatchbayError('TOOL_NOT_FOUND', `Agent ${agentId} has no tool "${target.toolId}".`, {
        hint: 'Create the tool first (POST /v1/agents/{id}/tools), or target the agent.',
      })
    if (target.type === 'tool')
      await this.#tools.checkStartingTrigger(workspaceId, agentId, target.toolId, req.trigger)

    let subscriptionId: string | null = null
    let pollIntervalMs: number | null = null
    if (triggerMechanism(trigger, config).kind === 'webhook') {
      if (!connector.webhooks || !trigger.watch)
        throw new Error(`${req.trigger} is instant but has no webhook support`)
      const missing = connector.webhooks.cannotVerify?.(loaded.credentials)
      if (missing) throw new PatchbayError('CONNECTION_CANNOT_VERIFY_WEBHOOKS', missing)
      const sub = await this.webhooks.ensure(
        workspaceId,
        connector,
        loaded.row.id,
        trigger.watch(config, { id: loaded.row.account_id }).model,
      )
      subscriptionId = sub.id
    } else {
      pollIntervalMs = req.pollIntervalMs ?? trigger.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS
      if (pollIntervalMs < this.minPollIntervalMs)
        throw new PatchbayError(
          'POLL_INTERVAL_TOO_SHORT',
          `pollIntervalMs must be at least ${this.minPollIntervalMs} ms to stay within the upstream's rate budget.`,
        )
    }
    const row = await this.#triggers.insert({
      workspace_id: workspaceId,
      agent_id: agentId,
      trigger_key: req.trigger,
      connection_id: loaded.row.id,
      config,
      target,
      subscription_id: subscriptionId,
      poll_interval_ms: pollIntervalMs,
      next_poll_at: pollIntervalMs ? nowIso() : null,
    })
    if (subscriptionId) this.#changes.publish('triggers', [subscriptionId])
    return this.view(row)
  }

  async list(workspaceId: string, agentId?: string) {
    const rows = await this.#triggers.list(workspaceId, { agentId })
    return Promise.all(rows.map((r) => this.view(r)))
  }

  /** An agent's triggers, oldest first, a page at a time (GET /v1/agents/{id}/triggers). */
  async page(workspaceId: string, agentId: string, page: PageRequest) {
    const { items, next } = await this.#triggers.page(workspaceId, { agentId }, page)
    return { triggers: await Promise.all(items.map((r) => this.view(r))), next }
  }

  async get(workspaceId: string, id: string) {
    return this.view(await this.requireRow(workspaceId, id))
  }

  async requireRow(workspaceId: string, id: string): Promise<TriggerRow> {
    const row = await this.#triggers.get(workspaceId, id)
    if (!row)
      throw new PatchbayError('TRIGGER_NOT_FOUND', `There is no trigger "${id}" in this workspace.`, {
        hint: 'List them with GET /v1/agents/{id}/triggers.',
      })
    return row
  }

  /** Deletes the trigger; an upstream cleanup that fails is reported, never blocking. */
  async delete(
    workspaceId: string,
    id: string,
  ): Promise<{ deleted: true; cleanup: { ok: boolean; error?: string } }> {
    const row = await this.requireRow(workspaceId, id)
    await this.#triggers.delete(row.id)
    let cleanup: { ok: boolean; error?: string } = { ok: true }
    if (row.subscription_id) {
      this.#changes.publish('triggers', [row.subscription_id])
      cleanup = await this.webhooks.release(row.subscription_id)
    }
    return { deleted: true, cleanup }
  }

  /** Removes every trigger of an agent (the agent is being deleted). */
  async deleteForAgent(workspaceId: string, agentId: string) {
    for (const row of await this.#triggers.list(workspaceId, { agentId }))
      await this.delete(workspaceId, row.id)
  }

  /** Disconnecting: the connection's triggers and upstream webhooks go with it. */
  async removeForConnection(connectionId: string): Promise<{ triggers: number; cleanupErrors: string[] }> {
    const rows = await this.#triggers.forConnection(connectionId)
    const errors: string[] = []
    for (const row of rows) {
      const r = await this.delete(row.workspace_id, row.id)
      if (!r.cleanup.ok && r.cleanup.error) errors.push(r.cleanup.error)
    }
    return { triggers: rows.length, cleanupErrors: errors }
  }

  /**
   * The triggers listening on a subscription (cached for the webhook source); `fresh` reads them
   * from the store whatever is cached (and caches that).
   */
  async listeningOn(subscriptionId: string, opts: { fresh?: boolean } = {}): Promise<ListeningTrigger[]> {
    let list = opts.fresh ? undefined : this.#listening.get(subscriptionId)
    if (!list) {
      const { version, rows } = await this.#triggers.forSubscription(subscriptionId)
      list = rows.flatMap((row) => {
        const reg = this.#registry.triggers.get(row.trigger_key)
        // A paused trigger (its connection lapsed) hears nothing until the reconnect resumes it.
        if (!reg || row.paused_at) return []
        return [
          {
            row,
            def: reg.trigger,
            config: row.config,
            target: row.target,
          },
        ]
      })
      versions.set(list, version)
      this.#listening.set(subscriptionId, list)
    }
    return list
  }

  /**
   * Whether listeners read earlier are those listening on their webhook in the store now (issue
   * 29: a change in effect everywhere when the API answers). A trigger created or deleted through
   * another instance reaches this one's cache by a change message a few milliseconds after its
   * request answered; an event received meanwhile was matched with the listeners as they were. The
   * store is read once for a whole group of deliveries (a version per webhook, migration 0022);
   * `current(sub, list)` then says, for each, whether the listeners it was read with still hold.
   */
  async listenersNow(
    subscriptionIds: string[],
  ): Promise<(subscriptionId: string, list: ListeningTrigger[]) => boolean> {
    const now = await this.#triggers.listenerVersions(subscriptionIds)
    return (subscriptionId, list) => versions.has(list) && versions.get(list) === now.get(subscriptionId)
  }

  /**
   * The listeners a group of deliveries was read with, to be held against the store in the
   * statement that stores them (events.insertWithDeliveries): a version per webhook. Null when two
   * deliveries of one webhook were read with different listeners (a change arrived between them),
   * or with listeners not read here: the group is then checked first (listenersNow).
   */
  heldListeners(read: Array<{ subscriptionId: string; list: ListeningTrigger[] }>): HeldListeners | null {
    const held = new Map<string, number | undefined>()
    for (const { subscriptionId, list } of read) {
      if (!versions.has(list)) return null
      const version = versions.get(list)
      if (held.has(subscriptionId) && held.get(subscriptionId) !== version) return null
      held.set(subscriptionId, version)
    }
    return { versions: held }
  }

  /** The webhook a callback names (for the webhook source). */
  subscription(id: string) {
    return this.webhooks.get(id)
  }

  subscriptionSecret(sub: SubscriptionRow): string {
    return this.webhooks.secret(sub)
  }

  callbackUrl(connector: string, subscriptionId: string): string {
    return this.webhooks.callbackUrl(connector, subscriptionId)
  }

  async view(row: TriggerRow) {
    const sub = row.subscription_id ? await this.webhooks.get(row.subscription_id) : undefined
    return triggerView(this.#registry, row, sub)
  }

  #checkScope(scope: Scope, trigger: TriggerDefinition, config: Record<string, unknown>) {
    const places = this.#registry.places
    for (const f of trigger.scoped ?? []) {
      // Only places are decided here (as compared by their kind: a repository without regard to
      // case); what is placed by a lookup is checked by the scope guard.
      if (!places.kind(f.kind)) continue
      const given = f.value ? f.value(config) : f.field ? config[f.field] : undefined
      for (const value of Array.isArray(given) ? given : [given]) {
        if (typeof value !== 'string' || !value) continue
        if (!places.contains(scope, { kind: f.kind, id: value }))
          throw new PatchbayError('SCOPE_DENIED', `The ${f.kind} ${value} is outside the agent's scope.`, {
            hint: `Add it to the agent's scope (PATCH /v1/agents/{id}) or watch a ${f.kind} the agent may touch.`,
          })
      }
    }
  }
}

/**
 * The version of its webhook's listeners each list was read at (Triggers.forSubscription;
 * undefined: the webhook is not stored); kept with the list, as long as it is.
 */
const versions = new WeakMap<ListeningTrigger[], number | undefined>()
