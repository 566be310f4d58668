// Agents: the automated actors. Each has a scope (the places it may touch), the
// connections it may use, a delivery target for its events, a Standard Webhooks signing secret
// sealed in the vault (shown once), and agent keys that act as it and nothing more.
import { randomBytes } from 'node:crypto'
import type { EgressGuard } from '../../kit/egress.ts'
import { PatchbayError, validationError } from '../../kit/errors.ts'
import type { AgentRow, Agents } from '../../store/agents.ts'
import type { ApiKeyRow, ApiKeys } from '../../store/api-keys.ts'
import type { EndUsers } from '../../store/end-users.ts'
import type { PageRequest } from '../../store/paging.ts'
import type { Vault } from '../../store/vault.ts'
import type { Caller } from '../access/caller.ts'
import type { KeyRevocations } from '../access/key-revocations.ts'
import type { Places } from '../access/places.ts'
import type { Changes } from '../changes/changes.ts'
import type { ConnectionService } from '../connections/connection-service.ts'
import type { EngineEvents } from '../engine-events.ts'
import type { Registry } from '../registry.ts'
import type { StepConnectionNeeded } from '../tools/tool-input.ts'
import {
  type AgentChanges,
  type AgentScope,
  agentInputs,
  type DeliveryTarget,
  type NewAgent,
  type ToolSelection,
} from './agent-input.ts'

export type { AgentScope, DeliveryTarget, ToolSelection } from './agent-input.ts'

export interface AgentView {
  id: string
  name: string
  scope: AgentScope
  connectionIds: string[]
  /** Connections it used that were disconnected (engine/connections/connection-bindings.ts). */
  connectionsNeeded: StepConnectionNeeded[]
  delivery: DeliveryTarget
  /** What it lists over MCP and function calling; null: everything, each listed (agent-toolbox.ts). */
  toolSelection: ToolSelection
  /** The end user it acts for: it uses only their connections. null: the workspace's own. */
  endUserId: string | null
  createdAt: string
  updatedAt: string
}

export interface AgentKeyView {
  id: string
  agentId: string
  name: string
  /** The first characters of the key, to tell keys apart. */
  keyPrefix: string
  createdAt: string
  lastUsedAt: string | null
  revokedAt: string | null
}

/** How long a rotated-out signing secret stays valid by default: 24 hours. */
export const DEFAULT_SECRET_OVERLAP_S = 24 * 60 * 60

export interface SigningSecrets {
  current: string
  /** The secret before the last rotation, while its overlap lasts (until: epoch ms). */
  previous: { secret: string; until: number } | null
}

// Agents are read on every step an agent key runs and for every event their triggers hear; a
// cache keeps that off the database. Every change to an agent is published (engine changes), which
// drops the entry on every instance at once (and everything, when the transport lost messages);
// the age limit is only a backstop. It is long enough that a workspace's agents stay cached between
// their events when thousands of agents share the traffic (issue 22: with 5 s, and still with 60 s,
// 10,000 agents at a few hundred events a second were read from the store for most events).
const CACHE_MS = 10 * 60_000
/** Agents cached at most; the oldest go first beyond it. */
const CACHE_MAX = 100_000

export function agentView(row: AgentRow, places: Places): AgentView {
  return {
    id: row.id,
    name: row.name,
    // Every declared kind's list, as it was written (a kind declared since: none of it).
    scope: places.copy(row.scope as AgentScope),
    connectionIds: row.connection_ids,
    connectionsNeeded: row.connections_needed,
    delivery: row.delivery,
    toolSelection: row.tool_selection,
    endUserId: row.end_user_id ?? null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

function keyView(row: ApiKeyRow): AgentKeyView {
  return {
    id: row.id,
    agentId: row.agent_id ?? '',
    name: row.name,
    keyPrefix: row.key_prefix,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  }
}

/** A Standard Webhooks secret: `whsec_` and the base64 of 24 random bytes. */
export function generateSigningSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`
}

export const agentNotFound = (id: string) =>
  new PatchbayError('AGENT_NOT_FOUND', `There is no agent "${id}" in this workspace.`, {
    hint: 'List agents with GET /v1/agents.',
  })

export class AgentService {
  #repo: Agents
  #keys: ApiKeys
  #vault: Vault
  #connections: ConnectionService
  #revocations: KeyRevocations
  #egress: EgressGuard
  #cache = new Map<string, { view: AgentView; workspaceId: string; at: number }>()
  #bus: EngineEvents
  /**
   * Counts the changes heard: a read that began before a change is not cached after it (it may
   * hold the row as it was before).
   */
  #generation = 0
  #changes: Changes
  #registry: Registry
  #endUsers: EndUsers

  constructor(deps: {
    /** Binding an agent to an end user adds the end user when the workspace has none of that id. */
    endUsers: EndUsers
    repo: Agents
    keys: ApiKeys
    vault: Vault
    connections: ConnectionService
    revocations: KeyRevocations
    changes: Changes
    /** Checks a webhook delivery address when it is saved (deliveries are checked again at connect time). */
    egress: EgressGuard
    /** The steps and connectors a tool selection may name. */
    registry: Registry
    /** Told when an agent is deleted (its triggers go with it: triggers/trigger-service.ts). */
    bus: EngineEvents
  }) {
    this.#bus = deps.bus
    this.#registry = deps.registry
    this.#egress = deps.egress
    this.#endUsers = deps.endUsers
    this.#changes = deps.changes
    // An agent changed or deleted on any instance is read again here.
    deps.changes.subscribe('agents', (ids) => {
      this.#generation++
      if (ids.length === 0) this.#cache.clear()
      for (const id of ids) this.#cache.delete(id)
    })
    this.#repo = deps.repo
    this.#keys = deps.keys
    this.#vault = deps.vault
    this.#connections = deps.connections
    this.#revocations = deps.revocations
  }

  /** Creates an agent; its signing secret is returned this once (only the sealed form is kept). */
  async create(workspaceId: string, input: NewAgent): Promise<{ agent: AgentView; signingSecret: string }> {
    const parsed = agentInputs(this.#registry.places).NewAgentInput.safeParse(input)
    if (!parsed.success) throw validationError(parsed.error.issues, '')
    const a = parsed.data
    const endUserId = a.endUserId ?? null
    await this.#checkConnections(workspaceId, a.connectionIds, endUserId)
    this.#checkToolSelection(a.toolSelection)
    if (a.delivery.type === 'webhook') await this.#egress.check(a.delivery.url, 'delivery.url')
    if (endUserId !== null) await this.#endUsers.put(workspaceId, endUserId, {})
    const signingSecret = generateSigningSecret()
    const row = await this.#repo.insert({
      workspace_id: workspaceId,
      end_user_id: endUserId,
      name: a.name,
      scope: a.scope,
      connection_ids: a.connectionIds,
      delivery: a.delivery,
      signing_secret: this.#vault.seal(signingSecret),
      tool_selection: a.toolSelection,
    })
    return { agent: agentView(row, this.#registry.places), signingSecret }
  }

  /** The workspace's agents, oldest first; `endUserId`: only those bound to that end user (by index). */
  async list(workspaceId: string, filter: { endUserId?: string } = {}): Promise<AgentView[]> {
    return (await this.#repo.list(workspaceId, filter)).map((row) => agentView(row, this.#registry.places))
  }

  /** The workspace's agents, oldest first, a page at a time (GET /v1/agents). */
  async page(workspaceId: string, page: PageRequest): Promise<{ agents: AgentView[]; next: string | null }> {
    const { items, next } = await this.#repo.page(workspaceId, page)
    return { agents: items.map((row) => agentView(row, this.#registry.places)), next }
  }

  /**
   * The connections an agent key may see (all for any other caller), as a filter of a list: null
   * for no filter.
   */
  async visibleConnectionIds(caller: Caller): Promise<string[] | null> {
    if (!caller.agentId) return null
    return (await this.forCaller(caller)).connectionIds
  }

  /** The agent as cached (what get() answers without reading), or undefined. */
  cached(workspaceId: string, agentId: string): AgentView | undefined {
    const hit = this.#cache.get(agentId)
    return hit && hit.workspaceId === workspaceId && Date.now() - hit.at < CACHE_MS ? hit.view : undefined
  }

  /** The agent, or AGENT_NOT_FOUND (404). */
  async get(workspaceId: string, agentId: string): Promise<AgentView> {
    const hit = this.cached(workspaceId, agentId)
    if (hit) return hit
    const generation = this.#generation
    const row = await this.#repo.get(workspaceId, agentId)
    if (!row) {
      this.#cache.delete(agentId)
      throw agentNotFound(agentId)
    }
    const view = agentView(row, this.#registry.places)
    if (generation === this.#generation) {
      // Re-set, the entry moves to the end: the first in the map is the longest unread.
      this.#cache.delete(agentId)
      this.#cache.set(agentId, { view, workspaceId, at: Date.now() })
      if (this.#cache.size > CACHE_MAX) this.#cache.delete(this.#cache.keys().next().value!)
    }
    return view
  }

  /** The agent an agent key acts as; refuses a caller that is not an agent. */
  async forCaller(caller: Caller): Promise<AgentView> {
    if (!caller.agentId)
      throw new PatchbayError(
        'AGENT_KEY_REQUIRED',
        'This action is for an agent; the key is not an agent key.',
        {
          hint: 'Use a key made with POST /v1/agents/{id}/keys.',
        },
      )
    try {
      return await this.get(caller.workspaceId, caller.agentId)
    } catch (err) {
      // The key outlived its agent (keys are revoked on delete, so only a race gets here).
      if (err instanceof PatchbayError && err.code === 'AGENT_NOT_FOUND')
        throw new PatchbayError('UNAUTHORIZED', 'The agent of this key no longer exists.', {
          hint: 'Use a key of an existing agent.',
        })
      throw err
    }
  }

  async update(workspaceId: string, agentId: string, changes: AgentChanges): Promise<AgentView> {
    const parsed = agentInputs(this.#registry.places).AgentChangesInput.safeParse(changes)
    if (!parsed.success) throw validationError(parsed.error.issues, '')
    const c = parsed.data
    if (c.toolSelection) this.#checkToolSelection(c.toolSelection)
    const before = await this.#repo.get(workspaceId, agentId)
    if (!before) throw agentNotFound(agentId)
    const endUserId = c.endUserId === undefined ? (before.end_user_id ?? null) : c.endUserId
    const rebound = endUserId !== (before.end_user_id ?? null)
    // Only a changed list is checked: a connection removed since must not block renaming. A new
    // binding checks the whole list against the new end user.
    if (c.connectionIds || rebound)
      await this.#checkConnections(workspaceId, c.connectionIds ?? before.connection_ids, endUserId)
    if (rebound && endUserId !== null) await this.#endUsers.put(workspaceId, endUserId, {})
    // A connection needed since a disconnect is met by any connection of its connector given now.
    let needed: StepConnectionNeeded[] | undefined
    if (c.connectionIds) {
      const given = await this.#connections.named(workspaceId, c.connectionIds)
      const connectors = new Set(given.map((x) => x.connector))
      needed = before.connections_needed.filter((n) => !connectors.has(n.connector))
    }
    if (c.delivery?.type === 'webhook') await this.#egress.check(c.delivery.url, 'delivery.url')
    await this.#repo.update(workspaceId, agentId, {
      name: c.name,
      scope: c.scope,
      connection_ids: c.connectionIds,
      connections_needed: needed,
      delivery: c.delivery,
      tool_selection: c.toolSelection,
      ...(rebound ? { end_user_id: endUserId } : {}),
    })
    this.#changes.publish('agents', [agentId])
    return this.get(workspaceId, agentId)
  }

  /** Removes the agent, its tools and tool runs, and revokes its keys at once. */
  async delete(workspaceId: string, agentId: string): Promise<void> {
    const revoked = await this.#keys.revokeForAgent(workspaceId, agentId)
    this.#revocations.publish(revoked)
    const deleted = await this.#repo.delete(workspaceId, agentId)
    this.#changes.publish('agents', [agentId])
    if (!deleted) throw agentNotFound(agentId)
    await this.#bus.emit('agentDeleted', { workspaceId, agentId })
  }

  /** The agent's Standard Webhooks signing secret in clear. */
  async signingSecret(agentId: string): Promise<string> {
    return (await this.signingSecrets(agentId)).current
  }

  /**
   * The secrets its pushes are signed with: the current one, and the one before the last rotation
   * while its overlap lasts (`previousUntil`, epoch ms). A push signs with both until then.
   */
  async signingSecrets(agentId: string): Promise<SigningSecrets> {
    const row = await this.#repo.getById(agentId)
    if (!row) throw agentNotFound(agentId)
    const until = row.previous_secret_expires_at ? Date.parse(row.previous_secret_expires_at) : 0
    return {
      current: this.#vault.open<string>(row.signing_secret),
      previous:
        row.previous_signing_secret && until > Date.now()
          ? { secret: this.#vault.open<string>(row.previous_signing_secret), until }
          : null,
    }
  }

  /**
   * A new signing secret, returned this once. The one it replaces stays valid for
   * `previousValidForSeconds` (default 24 h; 0 ends it at once): until then every push carries a
   * signature of each. The change reaches every instance's cached targets before this returns.
   */
  async rotateSigningSecret(
    workspaceId: string,
    agentId: string,
    opts: { previousValidForSeconds?: number } = {},
  ): Promise<{ signingSecret: string; previousSecretValidUntil: string | null }> {
    const row = await this.#repo.get(workspaceId, agentId)
    if (!row) throw agentNotFound(agentId)
    const overlapS = opts.previousValidForSeconds ?? DEFAULT_SECRET_OVERLAP_S
    const until = overlapS > 0 ? new Date(Date.now() + overlapS * 1000).toISOString() : null
    const signingSecret = generateSigningSecret()
    await this.#repo.update(workspaceId, agentId, {
      signing_secret: this.#vault.seal(signingSecret),
      previous_signing_secret: until ? row.signing_secret : null,
      previous_secret_expires_at: until,
    })
    await this.#changes.publishNow('agents', [agentId])
    return { signingSecret, previousSecretValidUntil: until }
  }

  /** Ends a rotation's overlap now: from here on pushes are signed with the current secret only. */
  async endSecretOverlap(workspaceId: string, agentId: string): Promise<void> {
    const ok = await this.#repo.update(workspaceId, agentId, {
      previous_signing_secret: null,
      previous_secret_expires_at: null,
    })
    if (!ok) throw agentNotFound(agentId)
    await this.#changes.publishNow('agents', [agentId])
  }

  /** A key that acts as the agent only; the key is returned this once (only its hash is kept). */
  async createKey(
    workspaceId: string,
    agentId: string,
    opts: { name?: string } = {},
  ): Promise<AgentKeyView & { key: string }> {
    const agent = await this.get(workspaceId, agentId)
    const { row, key } = await this.#keys.create({
      workspaceId,
      kind: 'agent',
      agentId,
      name: opts.name?.trim() || `${agent.name} key`,
    })
    return { ...keyView(row), key }
  }

  /** The agent's keys, oldest first, a page at a time (GET /v1/agents/{id}/keys). */
  async pageKeys(
    workspaceId: string,
    agentId: string,
    page: PageRequest,
  ): Promise<{ keys: AgentKeyView[]; next: string | null }> {
    await this.get(workspaceId, agentId)
    const { items, next } = await this.#keys.pageForAgent(workspaceId, agentId, page)
    return { keys: items.map(keyView), next }
  }

  /** Revokes one of the agent's keys; it is refused from the next request on. */
  async revokeKey(workspaceId: string, agentId: string, keyId: string): Promise<void> {
    await this.get(workspaceId, agentId)
    const key = (await this.#keys.listForAgent(workspaceId, agentId)).find((k) => k.id === keyId)
    if (!key)
      throw new PatchbayError('KEY_NOT_FOUND', `Agent ${agentId} has no key "${keyId}".`, {
        hint: `List its keys with GET /v1/agents/${agentId}/keys.`,
      })
    if (!key.revoked_at) await this.#keys.revoke(keyId)
    this.#revocations.publish([keyId])
  }

  /** Refuses (as not found) a connection an agent key may not use. */
  async assertConnectionVisible(caller: Caller, connectionId: string): Promise<void> {
    if (!caller.agentId) return
    if (!(await this.forCaller(caller)).connectionIds.includes(connectionId))
      throw new PatchbayError(
        'CONNECTION_NOT_FOUND',
        `There is no connection "${connectionId}" this agent may use.`,
        {
          hint: 'List the connections of this agent with GET /v1/connections.',
        },
      )
  }

  /** Each step of a selection is a step id or a connector id of the registry. */
  #checkToolSelection(selection: ToolSelection): void {
    const unknown = (selection?.steps ?? [])
      .map((id, i) => ({ id, i }))
      .filter(({ id }) => !this.#registry.steps.has(id) && !this.#registry.connector(id))
    if (unknown.length > 0)
      throw new PatchbayError(
        'VALIDATION_FAILED',
        `Invalid toolSelection: ${unknown.map(({ id, i }) => `steps.${i}: "${id}" is neither a step id nor a connector id`).join('; ')}.`,
        {
          hint: `Name steps as GET /v1/steps lists them (taskboard.create_card), or whole connectors (${this.#registry.connectors.map((c) => c.id).join(', ')}).`,
          details: unknown.map(({ id, i }) => ({
            field: `toolSelection.steps.${i}`,
            message: `no step or connector "${id}"`,
          })),
        },
      )
  }

  /**
   * The connections exist and belong to whom the agent acts for: the end user it is bound to, or
   * (unbound) the workspace itself. An end user's connection is never another's or the workspace's.
   */
  async #checkConnections(workspaceId: string, ids: string[], endUserId: string | null): Promise<void> {
    if (ids.length === 0) return
    const named = await this.#connections.named(workspaceId, ids)
    const known = new Set(named.map((c) => c.id))
    const missing = ids.map((id, i) => ({ id, i })).filter(({ id }) => !known.has(id))
    const foreign = named.filter((c) => c.endUserId !== endUserId)
    if (missing.length === 0 && foreign.length > 0)
      throw new PatchbayError(
        'CONNECTION_OF_OTHER_OWNER',
        `connectionIds names connections the agent may not use: ${foreign
          .map(
            (c) => `${c.id} (${c.endUserId === null ? "the workspace's own" : `end user "${c.endUserId}"`})`,
          )
          .join(
            ', ',
          )}; ${endUserId === null ? "an agent bound to no end user uses only the workspace's own connections" : `an agent bound to end user "${endUserId}" uses only that end user's connections`}.`,
        {
          hint:
            endUserId === null
              ? 'Bind the agent to the end user (endUserId) or name connections of the workspace (GET /v1/connections?endUserId=).'
              : `Name connections of that end user (GET /v1/connections?endUserId=${encodeURIComponent(endUserId)}).`,
        },
      )
    if (missing.length > 0)
      throw new PatchbayError(
        'CONNECTION_NOT_FOUND',
        `connectionIds names connections that do not exist in this workspace: ${missing
          .map(({ id, i }) => `connectionIds.${i} "${id}"`)
          .join(', ')}.`,
        { hint: 'List connections with GET /v1/connections, or connect the account first.', status: 400 },
      )
  }
}
