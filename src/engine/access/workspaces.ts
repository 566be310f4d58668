// Workspaces: made by a person (who becomes its owner), renamed and configured by its admins,
// deleted by an owner with everything it owns: its connections' upstream webhooks are
// unregistered while their credentials can still do it, then every row of the workspace goes in
// one transaction (sealed credentials and signing secrets with them), its keys stop working on
// every instance at once, and its members lose it from their next request on.
import { timingSafeEqual } from 'node:crypto'
import { PatchbayError } from '../../kit/errors.ts'
import type { ApiKeys } from '../../store/api-keys.ts'
import type { PageRequest } from '../../store/paging.ts'
import type { Role } from '../../store/schema.ts'
import type { Vault } from '../../store/vault.ts'
import type { WorkspaceRow, Workspaces } from '../../store/workspaces.ts'
import type { AgentService } from '../agents/agent-service.ts'
import type { Changes } from '../changes/changes.ts'
import type { ConnectionService } from '../connections/connection-service.ts'
import type { TriggerService } from '../triggers/trigger-service.ts'
import type { KeyRevocations } from './key-revocations.ts'
import type { MembershipService } from './memberships.ts'

export interface WorkspaceView {
  id: string
  name: string
  /** The caller's role in it (null when listed for no one). */
  role: Role | null
  settings: WorkspaceSettings
  createdAt: string
  updatedAt: string
}

/** What a workspace's admins set (sign-in adds its own, e.g. the email domain it claims). */
export type WorkspaceSettings = Record<string, unknown>

export interface WorkspaceRemoval {
  workspaceId: string
  removed: {
    connections: number
    /** Upstream webhooks unregistered with the connections' credentials before they went. */
    triggers: number
    agents: number
    keys: number
    tools: number
    toolRuns: number
    events: number
    deliveries: number
    stepRuns: number
    creditEntries: number
    members: number
    invitations: number
    auditEntries: number
  }
  /** Upstream webhooks that could not be unregistered (the rest was removed all the same). */
  cleanupErrors: string[]
}

export const workspaceNotFound = (id: string) =>
  new PatchbayError('WORKSPACE_NOT_FOUND', `There is no workspace "${id}" that you belong to.`)

const view = (row: WorkspaceRow, role: Role | null): WorkspaceView => ({
  id: row.id,
  name: row.name,
  role,
  settings: row.settings,
  createdAt: row.created_at,
  updatedAt: row.updated_at ?? row.created_at,
})

export class WorkspaceService {
  #repo: Workspaces
  #keys: ApiKeys
  #memberships: MembershipService
  #connections: ConnectionService
  #triggers: TriggerService
  #agents: AgentService
  #revocations: KeyRevocations
  #changes: Changes
  #vault: Vault

  constructor(d: {
    vault: Vault
    repo: Workspaces
    keys: ApiKeys
    memberships: MembershipService
    connections: ConnectionService
    triggers: TriggerService
    agents: AgentService
    revocations: KeyRevocations
    changes: Changes
  }) {
    this.#repo = d.repo
    this.#keys = d.keys
    this.#memberships = d.memberships
    this.#connections = d.connections
    this.#triggers = d.triggers
    this.#agents = d.agents
    this.#revocations = d.revocations
    this.#changes = d.changes
    this.#vault = d.vault
  }

  async get(id: string, role: Role | null): Promise<WorkspaceView> {
    const row = await this.#repo.get(id)
    if (!row) throw workspaceNotFound(id)
    return view(row, role)
  }

  /** A person's workspaces with their role in each, oldest membership first. */
  /** The same, a page at a time (GET /v1/workspaces). */
  async pageOfPerson(
    personId: string,
    page: PageRequest,
  ): Promise<{ workspaces: WorkspaceView[]; next: string | null }> {
    const { items, next } = await this.#repo.pageOfPerson(personId, page)
    return { workspaces: items.map((r) => view(r, r.role)), next }
  }

  /** Makes a workspace with `personId` as its owner. */
  async create(name: string, personId: string): Promise<WorkspaceView> {
    const row = await this.#repo.insert(name)
    await this.#memberships.put(row.id, personId, 'owner')
    return view(row, 'owner')
  }

  async update(
    id: string,
    role: Role | null,
    changes: { name?: string; settings?: WorkspaceSettings },
  ): Promise<WorkspaceView> {
    const row = await this.#repo.get(id)
    if (!row) throw workspaceNotFound(id)
    const settings =
      changes.settings === undefined
        ? undefined
        : Object.fromEntries(
            Object.entries({ ...row.settings, ...changes.settings }).filter(([, v]) => v !== null),
          )
    await this.#repo.update(id, { name: changes.name, settings })
    return this.get(id, role)
  }

  /**
   * The one-time owner-setup token of a workspace no person owns yet (a database from before
   * people, or a first start): printed at start so the first person can claim the workspace; null
   * once someone owns it. It is a keyed digest of the workspace id, the same on every instance and
   * every start, and stops working the moment a person owns the workspace.
   */
  async ownerSetupToken(workspaceId: string): Promise<string | null> {
    if (await this.#hasOwner(workspaceId)) return null
    return `${workspaceId}.${this.#vault.mac(`owner-setup:${workspaceId}`)}`
  }

  /**
   * The workspace an owner-setup token names, while it has no owner; refuses a forged token, and
   * one whose workspace has an owner already (nothing is changed either way).
   */
  async ownerSetupWorkspace(token: string): Promise<string> {
    const dot = token.lastIndexOf('.')
    const workspaceId = token.slice(0, dot)
    const given = Buffer.from(token.slice(dot + 1))
    const expected = Buffer.from(this.#vault.mac(`owner-setup:${workspaceId}`))
    if (dot <= 0 || given.length !== expected.length || !timingSafeEqual(given, expected))
      throw new PatchbayError('OWNER_SETUP_INVALID', 'This owner-setup link is not valid.', {
        hint: 'Use the link the service printed at its start, whole.',
      })
    if (await this.#hasOwner(workspaceId))
      throw new PatchbayError('OWNER_SETUP_INVALID', 'This workspace already has an owner.', {
        status: 409,
        hint: 'Ask its owner for an invitation.',
      })
    return workspaceId
  }

  /** Makes `personId` the owner of the workspace the owner-setup token names (once). */
  async claimOwner(token: string, personId: string): Promise<WorkspaceView> {
    const workspaceId = await this.ownerSetupWorkspace(token)
    const claimed = await this.#repo.claimOwner(workspaceId, personId)
    if (!claimed)
      throw new PatchbayError('OWNER_SETUP_INVALID', 'This workspace already has an owner.', { status: 409 })
    this.#changes.publish('memberships', [personId])
    return this.get(workspaceId, 'owner')
  }

  async #hasOwner(workspaceId: string): Promise<boolean> {
    return (await this.#memberships.list(workspaceId)).some((m) => m.role === 'owner')
  }

  /** Deletes a workspace and everything it owns; says what was removed. */
  async delete(id: string): Promise<WorkspaceRemoval> {
    if (!(await this.#repo.get(id))) throw workspaceNotFound(id)
    const cleanupErrors: string[] = []
    let triggers = 0
    // Upstream webhooks first, while the connections' credentials can still remove them.
    const connections = await this.#connections.list(id)
    for (const c of connections) {
      const r = await this.#triggers.removeForConnection(c.id)
      triggers += r.triggers
      cleanupErrors.push(...r.cleanupErrors)
      await this.#connections.delete(id, c.id).catch(() => {})
    }
    const agents = await this.#agents.list(id)
    for (const a of agents) await this.#agents.delete(id, a.id).catch(() => {})
    const keyIds = (await this.#keys.listWorkspace(id, { includeAgentKeys: true })).map((k) => k.id)
    const people = (await this.#memberships.list(id)).map((m) => m.person_id)
    const rows = await this.#repo.deleteEverything(id)
    if (keyIds.length > 0) this.#revocations.publish(keyIds)
    if (people.length > 0) this.#changes.publish('memberships', people)
    this.#changes.publish(
      'connections',
      connections.map((c) => c.id),
    )
    return {
      workspaceId: id,
      removed: {
        connections: connections.length,
        triggers: triggers + rows.triggers,
        agents: agents.length,
        keys: keyIds.length,
        tools: rows.tools,
        toolRuns: rows.tool_runs,
        events: rows.events,
        deliveries: rows.deliveries,
        stepRuns: rows.step_runs,
        creditEntries: rows.credit_ledger,
        members: people.length,
        invitations: rows.invitations,
        auditEntries: rows.audit_log,
      },
      cleanupErrors,
    }
  }
}
