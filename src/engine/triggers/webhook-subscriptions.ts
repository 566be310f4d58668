// Upstream webhook subscriptions: one per (connection, model), shared by every trigger on it,
// its upstream id always stored and an existing one adopted; removed with the last trigger on
// it; registered again after a reconnect; reconciled with what the upstream holds (on start and
// periodically, by one instance at a time), a connection the upstream refuses making its
// webhooks `missing`. The trigger service asks here for the webhook an instant trigger needs.
import { randomBytes } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { ConnectorDefinition, Credentials } from '../../kit/define.ts'
import { PatchbayError } from '../../kit/errors.ts'
import type { Http } from '../../kit/http.ts'
import type { SubscriptionRow, Subscriptions } from '../../store/subscriptions.ts'
import type { Triggers } from '../../store/triggers.ts'
import type { Vault } from '../../store/vault.ts'
import type { Changes } from '../changes/changes.ts'
import type { ConnectionService } from '../connections/connection-service.ts'
import type { EngineEvents } from '../engine-events.ts'
import type { PublicAddress } from '../public-address.ts'
import type { Registry } from '../registry.ts'
import type { UpstreamClients } from '../upstream/upstream-clients.ts'

/** How long a new webhook is left alone by reconciliation while its trigger is being saved. */
const SUBSCRIPTION_SETTLE_MS = 60_000

export class WebhookSubscriptions {
  /** The address upstreams call back; set once the server listens. */
  #address: PublicAddress
  #subs: Subscriptions
  #triggers: Triggers
  #registry: Registry
  #connections: ConnectionService
  #clients: UpstreamClients
  #vault: Vault
  #changes: Changes
  #log: FastifyBaseLogger
  #locks = new Map<string, Promise<unknown>>()

  constructor(deps: {
    subscriptions: Subscriptions
    triggers: Triggers
    registry: Registry
    connections: ConnectionService
    clients: UpstreamClients
    vault: Vault
    changes: Changes
    log: FastifyBaseLogger
    /** Every reconnect (credentials or sign-in) registers the connection's webhooks again. */
    bus: EngineEvents
    /** Where the upstreams reach this instance (the callback addresses of its webhooks). */
    address: PublicAddress
  }) {
    this.#address = deps.address
    deps.bus.on('connectionReplaced', (e) => this.reregisterForConnection(e.connectionId, e.previous))
    this.#subs = deps.subscriptions
    this.#triggers = deps.triggers
    this.#registry = deps.registry
    this.#connections = deps.connections
    this.#clients = deps.clients
    this.#vault = deps.vault
    this.#changes = deps.changes
    this.#log = deps.log
  }

  callbackUrl(connector: string, subscriptionId: string): string {
    return this.#address.of(`/hooks/${connector}/${subscriptionId}`)
  }

  async get(id: string) {
    return this.#subs.get(id)
  }

  secret(sub: SubscriptionRow): string {
    return this.#vault.open<string>(sub.secret)
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
    // Who listens on it is read again, on every instance.
    this.#changes.publish('triggers', [subscriptionId])
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
  async ensure(workspaceId: string, connector: ConnectorDefinition, connectionId: string, model: string) {
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
          // A refused credential and an unreachable callback have different fixes: say which it is.
          const refused =
            e.upstream?.status === 401 || e.upstream?.status === 403 || e.code === 'CONNECTION_LAPSED'
          throw new PatchbayError(
            'WEBHOOK_REGISTRATION_FAILED',
            refused
              ? `${connector.name} refused the connection's credentials when creating the webhook for ${model}: ${e.message}`
              : `${connector.name} could not create the webhook for ${model}: ${e.message}`,
            {
              hint: refused
                ? `The connection may not create webhooks on ${model}: reconnect it with an account that may (the Reconnect button on the Connections page, or POST /v1/connections/${connectionId}/reconnect).`
                : `The upstream must reach Patchbay's callback at ${this.callbackUrl(connector.id, sub.id).replace(/\/[^/]+$/, '/…')}: set PATCHBAY_PUBLIC_URL to an address it can reach, then add the trigger again.`,
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
      // A webhook made moments ago may still be on its way: its trigger row is written after the
      // upstream registration (here or on another instance). A reconcile running in between must
      // neither register it a second time nor remove it for having no trigger yet.
      const young = Date.now() - Date.parse(sub.created_at) < SUBSCRIPTION_SETTLE_MS
      if (!force && young && !sub.upstream_hook_id) return 'ok'
      if (!force && !young && (await this.#triggers.countForSubscription(sub.id)) === 0) {
        await this.release(sub.id)
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
      const id = await this.#registerUpstream(sub, this.secret(sub))
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
  async release(subscriptionId: string): Promise<{ ok: boolean; error?: string }> {
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
