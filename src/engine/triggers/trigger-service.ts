// Triggers: an agent's subscription to an upstream event kind. Creating an instant trigger makes
// sure the upstream webhook for its (connection, model) exists — one per pair, shared by every
// trigger on it, its upstream id always stored, an existing one adopted — and deleting the last
// trigger on it removes it. Polled triggers get a schedule. The pipeline asks here which
// triggers listen on a subscription.
import { randomBytes } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import {
  type ConnectorDefinition,
  type Credentials,
  type TriggerDefinition,
  triggerMechanism,
} from '../../kit/define.ts'
import { PatchbayError, validationError } from '../../kit/errors.ts'
import type { Http } from '../../kit/http.ts'
import { nowIso } from '../../store/ids.ts'
import type { SubscriptionRow, Subscriptions } from '../../store/subscriptions.ts'
import type { TriggerRow, Triggers } from '../../store/triggers.ts'
import type { Vault } from '../../store/vault.ts'
import type { Changes } from '../changes/changes.ts'
import type { ConnectionService } from '../connections/connection-service.ts'
import type { Registry } from '../registry.ts'
import type { UpstreamClients } from '../upstream/upstream-clients.ts'
import type { UpstreamPages } from '../upstream/upstream-pages.ts'
import type { AgentDirectory, ToolRunner } from './directories.ts'

export type TriggerTarget = { type: 'agent' } | { type: 'tool'; toolId: string }

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
  config: any
  target: TriggerTarget
}

export const MIN_POLL_INTERVAL_MS = 10_000
export const DEFAULT_POLL_INTERVAL_MS = 60_000

export class TriggerService {
  #agents: AgentDirectory
  #tools: ToolRunner
  /** The address upstreams call back; set once the server listens. */
  publicUrl = ''
  #subs: Subscriptions
  #triggers: Triggers
  #registry: Registry
  #connections: ConnectionService
  #clients: UpstreamClients
  #vault: Vault
  #log: FastifyBaseLogger
  /** Who listens on each webhook (subscription id), until a change to its triggers. */
  #listening = new Map<string, ListeningTrigger[]>()
  #changes: Changes
  #locks = new Map<string, Promise<unknown>>()
  /** Lowest poll interval allowed, per trigger (tests shorten it). */
  minPollIntervalMs = MIN_POLL_INTERVAL_MS
  /** Reads page addresses in scoped config fields into identifiers (upstream/upstream-pages.ts). */
  #pages: UpstreamPages

  constructor(deps: {
    subscriptions: Subscriptions
    triggers: Triggers
    registry: Registry
    connections: ConnectionService
    clients: UpstreamClients
    vault: Vault
    log: FastifyBaseLogger
    agents: AgentDirectory
    tools: ToolRunner
    pages: UpstreamPages
    changes: Changes
  }) {
    this.#changes = deps.changes
    // Triggers added or removed on any instance: who listens on a webhook is read again.
    deps.changes.subscribe('triggers', (ids) => {
      if (ids.length === 0) this.#listening.clear()
      for (const id of ids) this.#listening.delete(id)
    })
    this.#agents = deps.agents
    this.#tools = deps.tools
    this.#pages = deps.pages
    this.#subs = deps.subscriptions
    this.#triggers = deps.triggers
    this.#registry = deps.registry
    this.#connections = deps.connections
    this.#clients = deps.clients
    this.#vault = deps.vault
    this.#log = deps.log
  }

  callbackUrl(connector: string, subscriptionId: string): string {
    return `${this.publicUrl}/hooks/${connector}/${subscriptionId}`
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
    const loaded = await this.#connections.load(workspaceId, req.connectionId)
    if (loaded.row.connector !== connector.id)
      throw new PatchbayError(
        'CONNECTION_CONNECTOR_MISMATCH',
        `Connection ${loaded.row.id} is a ${loaded.row.connector} connection; ${req.trigger} needs a ${connector.id} connection.`,
      )
    if (!agent.connectionIds.includes(loaded.row.id))
      throw new PatchbayError(
        'CONNECTION_NOT_ALLOWED',
        `Agent ${agentId} may not use connection ${loaded.row.id}.`,
        {
          hint: "Add the connection to the agent's connectionIds first.",
        },
      )
    if (loaded.row.status === 'lapsed')
      throw new PatchbayError(
        'CONNECTION_LAPSED',
        `Connection ${loaded.row.id} has lapsed; a trigger on it would never fire.`,
        {
          hint: 'Reconnect it first (POST /v1/connections/{id}/reconnect).',
        },
      )
    let raw: unknown = req.config ?? {}
    // A board's or card's page address given for its identifier is read into the identifier.
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

    let subscriptionId: string | null = null
    let pollIntervalMs: number | null = null
    if (triggerMechanism(trigger, config).kind === 'webhook') {
      if (!connector.webhooks || !trigger.watch)
        throw new Error(`${req.trigger} is instant but has no webhook support`)
      const missing = connector.webhooks.cannotVerify?.(loaded.credentials)
      if (missing) throw new PatchbayError('CONNECTION_CANNOT_VERIFY_WEBHOOKS', missing)
      const sub = await this.#ensureSubscription(
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
      config: JSON.stringify(config),
      target: JSON.stringify(target),
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
      cleanup = await this.#release(row.subscription_id)
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
   * After a reconnect: the connection's webhooks are registered again with the new credentials.
   * Where that made a new upstream webhook (task-board webhooks belong to a token), the one made
   * with the previous credentials is removed afterwards — after, so no change is missed between
   * the two, and best effort, since the old credentials may no longer work.
   */
  async reregisterForConnection(connectionId: string, previous?: Credentials): Promise<void> {
    for (const sub of await this.#subs.forConnection(connectionId)) {
      await this.#reconcileOne(sub)
      const now = await this.#subs.get(sub.id)
      if (!previous || !sub.upstream_hook_id || !now || now.upstream_hook_id === sub.upstream_hook_id)
        continue
      const connector = this.#registry.connector(sub.connector)!
      const old = this.#clients.create({
        connector,
        credentials: previous,
        paced: true,
        storedConnection: false,
      })
      await connector
        .webhooks!.unregister(old, sub.upstream_hook_id)
        .catch((err) =>
          this.#log.info(
            { subscription: sub.id, err: (err as Error).message },
            'the previous webhook could not be removed',
          ),
        )
    }
  }

  /** On start: every stored webhook exists upstream, and none is left without triggers. */
  async reconcile(): Promise<{
    checked: number
    reregistered: number
    removed: number
    missing: number
    errors: number
  }> {
    const stats = { checked: 0, reregistered: 0, removed: 0, missing: 0, errors: 0 }
    for (const sub of await this.#subs.all()) {
      stats.checked++
      const r = await this.#reconcileOne(sub)
      if (r === 'reregistered') stats.reregistered++
      if (r === 'removed') stats.removed++
      if (r === 'missing') stats.missing++
      if (r === 'error') stats.errors++
    }
    return stats
  }

  /**
   * The upstream refused the connection's credentials (a revoked or expired token): the webhooks
   * it made are gone with them (the upstream removes a token's webhooks), so the webhook is
   * `missing` until the connection is reconnected, which registers it again.
   */
  async markMissing(subscriptionId: string, connectionId: string): Promise<void> {
    await this.#subs.update(subscriptionId, {
      status: 'missing',
      last_error: `the upstream refused the connection's credentials (revoked or expired), and removes the webhooks made with them; reconnect connection ${connectionId} (POST /v1/connections/${connectionId}/reconnect) to register it again`,
    })
    this.#listening.delete(subscriptionId)
  }

  /** The triggers listening on a subscription (cached for the pipeline). */
  async listeningOn(subscriptionId: string): Promise<ListeningTrigger[]> {
    let list = this.#listening.get(subscriptionId)
    if (!list) {
      const rows = await this.#triggers.forSubscription(subscriptionId)
      list = rows.flatMap((row) => {
        const reg = this.#registry.triggers.get(row.trigger_key)
        if (!reg) return []
        return [
          {
            row,
            def: reg.trigger,
            config: JSON.parse(row.config),
            target: JSON.parse(row.target) as TriggerTarget,
          },
        ]
      })
      this.#listening.set(subscriptionId, list)
    }
    return list
  }

  async subscription(id: string) {
    return this.#subs.get(id)
  }

  subscriptionSecret(sub: SubscriptionRow): string {
    return this.#vault.open<string>(sub.secret)
  }

  async view(row: TriggerRow) {
    const reg = this.#registry.triggers.get(row.trigger_key)
    const sub = row.subscription_id ? await this.#subs.get(row.subscription_id) : undefined
    const config = JSON.parse(row.config)
    const delivery = reg ? triggerMechanism(reg.trigger, config) : null
    return {
      id: row.id,
      agentId: row.agent_id,
      trigger: row.trigger_key,
      name: reg?.trigger.name ?? row.trigger_key,
      instant: delivery?.kind === 'webhook',
      delivery,
      connectionId: row.connection_id,
      config,
      target: JSON.parse(row.target),
      webhook: sub
        ? {
            id: sub.id,
            model: sub.model,
            upstreamHookId: sub.upstream_hook_id,
            status: sub.status,
            lastError: sub.last_error,
          }
        : null,
      poll: row.poll_interval_ms
        ? {
            intervalMs: row.poll_interval_ms,
            lastPollAt: row.last_poll_at,
            nextPollAt: row.next_poll_at,
            lastError: row.last_poll_error,
          }
        : null,
      createdAt: row.created_at,
    }
  }

  #checkScope(
    scope: { boards: string[]; repositories: string[] },
    trigger: TriggerDefinition,
    config: Record<string, unknown>,
  ) {
    for (const f of trigger.scoped ?? []) {
      const given = f.value ? f.value(config) : f.field ? config[f.field] : undefined
      for (const value of Array.isArray(given) ? given : [given]) {
        if (typeof value !== 'string' || !value) continue
        // Repository names are case-insensitive upstream (and in the step scope checks).
        const allowed =
          f.kind === 'repository'
            ? scope.repositories.map((r) => r.toLowerCase())
            : f.kind === 'board'
              ? scope.boards
              : null
        const wanted = f.kind === 'repository' ? value.toLowerCase() : value
        if (allowed && !allowed.includes(wanted))
          throw new PatchbayError('SCOPE_DENIED', `The ${f.kind} ${value} is outside the agent's scope.`, {
            hint: `Add it to the agent's scope (PATCH /v1/agents/{id}) or watch a ${f.kind} the agent may touch.`,
          })
      }
    }
  }

  async #http(
    connectionId: string,
    workspaceId: string,
  ): Promise<{ http: Http; connector: ConnectorDefinition }> {
    const loaded = await this.#connections.load(workspaceId, connectionId)
    const connector = this.#registry.connector(loaded.row.connector)!
    const http = this.#connections.client(connectionId, connector, loaded.credentials, { paced: true })
    return { http, connector }
  }

  /** One webhook per (connection, model); concurrent creators wait for each other. */
  async #ensureSubscription(
    workspaceId: string,
    connector: ConnectorDefinition,
    connectionId: string,
    model: string,
  ) {
    const key = `${connectionId}|${model}`
    const previous = this.#locks.get(key) ?? Promise.resolve()
    const run = previous
      .catch(() => {})
      .then(async () => {
        const existing = await this.#subs.find(connectionId, model)
        if (existing) {
          if (existing.status !== 'active' || !existing.upstream_hook_id)
            await this.#reconcileOne(existing, true)
          return existing
        }
        const secret = randomBytes(32).toString('hex')
        const sub = await this.#subs.insert({
          workspace_id: workspaceId,
          connector: connector.id,
          connection_id: connectionId,
          model,
          secret: this.#vault.seal(secret),
        })
        try {
          const id = await this.#registerUpstream(sub, secret)
          await this.#subs.update(sub.id, { upstream_hook_id: id, status: 'active', last_error: null })
          this.#changes.publish('triggers', [sub.id])
          return { ...sub, upstream_hook_id: id }
        } catch (err) {
          await this.#subs.delete(sub.id)
          const e = err as PatchbayError
          // A connector that knows which permission is missing says so itself.
          if (e instanceof PatchbayError && e.code === 'WEBHOOK_PERMISSION_MISSING') throw e
          throw new PatchbayError(
            'WEBHOOK_REGISTRATION_FAILED',
            `${connector.name} refused to create the webhook for ${model}: ${e.message}`,
            {
              hint: 'Check that Patchbay is reachable from the upstream at PATCHBAY_PUBLIC_URL and that the connection can see the model.',
              upstream: e.upstream,
            },
          )
        }
      })
    this.#locks.set(key, run)
    try {
      return await run
    } finally {
      if (this.#locks.get(key) === run) this.#locks.delete(key)
    }
  }

  /** Registers the webhook upstream, adopting one that already exists for the same callback. */
  async #registerUpstream(sub: SubscriptionRow, secret: string): Promise<string> {
    const { http, connector } = await this.#http(sub.connection_id, sub.workspace_id)
    const hooks = connector.webhooks!
    const callbackUrl = this.callbackUrl(connector.id, sub.id)
    try {
      return (
        await hooks.register(http, {
          callbackUrl,
          model: sub.model,
          secret,
          description: `Patchbay ${sub.id}`,
        })
      ).id
    } catch (err) {
      if (err instanceof PatchbayError && err.code === 'UPSTREAM_REJECTED') {
        const existing = (await hooks.list(http, sub.model)).find(
          (h) => h.callbackUrl === callbackUrl && h.model === sub.model,
        )
        if (existing) return existing.id
      }
      throw err
    }
  }

  async #reconcileOne(
    sub: SubscriptionRow,
    force = false,
  ): Promise<'ok' | 'reregistered' | 'removed' | 'missing' | 'error'> {
    try {
      if (!force && (await this.#triggers.countForSubscription(sub.id)) === 0) {
        await this.#release(sub.id)
        return 'removed'
      }
      // A lapsed connection's webhooks went with its credentials; asking again would only be refused.
      const loaded = await this.#connections.load(sub.workspace_id, sub.connection_id)
      if (loaded.row.status === 'lapsed') {
        if (sub.status !== 'missing') await this.markMissing(sub.id, sub.connection_id)
        return 'missing'
      }
      const { http, connector } = await this.#http(sub.connection_id, sub.workspace_id)
      const upstream = await connector.webhooks!.list(http, sub.model)
      const callbackUrl = this.callbackUrl(connector.id, sub.id)
      const found =
        upstream.find((h) => h.id === sub.upstream_hook_id) ??
        upstream.find((h) => h.callbackUrl === callbackUrl && h.model === sub.model)
      if (found && found.callbackUrl === callbackUrl) {
        if (found.id !== sub.upstream_hook_id || sub.status !== 'active') {
          await this.#subs.update(sub.id, { upstream_hook_id: found.id, status: 'active', last_error: null })
          this.#changes.publish('triggers', [sub.id])
        }
        return 'ok'
      }
      const id = await this.#registerUpstream(sub, this.subscriptionSecret(sub))
      await this.#subs.update(sub.id, { upstream_hook_id: id, status: 'active', last_error: null })
      this.#changes.publish('triggers', [sub.id])
      return 'reregistered'
    } catch (err) {
      // A 401 marked the connection lapsed (its client does): the webhook is gone upstream.
      if (err instanceof PatchbayError && err.code === 'CONNECTION_LAPSED') {
        this.#log.warn(
          { subscription: sub.id },
          'webhook reconcile: the connection was refused; webhook missing',
        )
        await this.markMissing(sub.id, sub.connection_id)
        return 'missing'
      }
      const message = (err as Error).message
      this.#log.warn({ subscription: sub.id, err: message }, 'webhook reconcile failed')
      await this.#subs.update(sub.id, { status: 'error', last_error: message })
      this.#changes.publish('triggers', [sub.id])
      return 'error'
    }
  }

  /** Removes the webhook when no trigger listens on it any more. */
  async #release(subscriptionId: string): Promise<{ ok: boolean; error?: string }> {
    if ((await this.#triggers.countForSubscription(subscriptionId)) > 0) return { ok: true }
    const sub = await this.#subs.get(subscriptionId)
    if (!sub) return { ok: true }
    let result: { ok: boolean; error?: string } = { ok: true }
    if (sub.upstream_hook_id) {
      try {
        const { http, connector } = await this.#http(sub.connection_id, sub.workspace_id)
        await connector.webhooks!.unregister(http, sub.upstream_hook_id)
      } catch (err) {
        const message = `The upstream webhook ${sub.upstream_hook_id} could not be removed: ${(err as Error).message}. Remove it upstream by hand if it remains.`
        this.#log.warn({ subscription: sub.id }, message)
        result = { ok: false, error: message }
      }
    }
    await this.#subs.delete(sub.id)
    this.#changes.publish('triggers', [sub.id])
    return result
  }
}
