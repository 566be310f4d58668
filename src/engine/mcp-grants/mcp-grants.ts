// MCP grants: an MCP client's OAuth access to one agent of a workspace (and so to its end user, if
// the agent is bound to one), given on the consent page by a person of the workspace, or by an end
// user arriving with a connect session that allows it (then only to an agent bound to them; a token
// of such a grant is refused once the agent acts for anyone else). The OAuth
// side (clients, codes, tokens) is the authorization server's (server/mcp/authorization-server.ts,
// oidc-provider over store/mcp-grants.ts); this is what Patchbay decides: who may grant, what a
// token of a grant acts as, listing and revoking. A revoked grant's tokens are refused at the
// next request on every instance: each /mcp request with a token reads its grant from the store.

import { PatchbayError } from '../../kit/errors.ts'
import type { McpGrantRow, McpGrantRows, ProviderRecords } from '../../store/mcp-grants.ts'
import type { PageRequest } from '../../store/paging.ts'
import type { Caller } from '../access/caller.ts'
import type { AgentService } from '../agents/agent-service.ts'

export interface McpGrantView {
  id: string
  agent: { id: string; name: string | null }
  endUserId: string | null
  client: { id: string; name: string | null }
  grantedBy: string | null
  connectSessionId: string | null
  resource: string
  scope: string
  createdAt: string
  lastUsedAt: string | null
}

/** How often a grant's "last used" time is written at most (per grant and instance). */
const LAST_USED_EVERY_MS = 60_000

export const grantNotFound = (id: string) =>
  new PatchbayError('MCP_GRANT_NOT_FOUND', `This workspace has no MCP grant "${id}".`)

const tokenRefused = (message: string) =>
  new PatchbayError('UNAUTHORIZED', message, {
    hint: 'Sign in again from the MCP client (it starts the OAuth flow anew), or use an agent key.',
  })

export class McpGrants {
  readonly rows: McpGrantRows
  readonly records: ProviderRecords
  #agents: AgentService
  #lastUsed = new Map<string, number>()

  constructor(deps: { rows: McpGrantRows; records: ProviderRecords; agents: AgentService }) {
    this.rows = deps.rows
    this.records = deps.records
    this.#agents = deps.agents
  }

  /**
   * Records a grant a person (or an end user, through `connectSessionId`) just gave; the provider's
   * grant of the same id holds its scopes.
   */
  async create(grant: {
    id: string
    workspaceId: string
    agentId: string
    personId: string | null
    /** With connectSessionId: the end user who gave it, whom the agent must act for. */
    endUserId?: string
    connectSessionId?: string | null
    clientId: string
    clientName: string | null
    resource: string
    scope: string
  }): Promise<McpGrantView> {
    const agent = await this.#agents.get(grant.workspaceId, grant.agentId)
    if (grant.endUserId !== undefined && agent.endUserId !== grant.endUserId)
      throw new PatchbayError(
        'MCP_AGENT_NOT_END_USERS',
        `The agent "${agent.id}" does not act for end user "${grant.endUserId}" (any more).`,
      )
    const row: McpGrantRow = {
      id: grant.id,
      workspace_id: grant.workspaceId,
      agent_id: agent.id,
      end_user_id: agent.endUserId,
      person_id: grant.personId,
      client_id: grant.clientId,
      client_name: grant.clientName,
      resource: grant.resource,
      scope: grant.scope,
      created_at: new Date().toISOString(),
      last_used_at: null,
      revoked_at: null,
      revoked_by: null,
      connect_session_id: grant.connectSessionId ?? null,
    }
    await this.rows.insert(row)
    return this.#view(row, agent.name)
  }

  /** The live grants, newest first, a page at a time (GET /v1/mcp-grants). */
  async page(
    workspaceId: string,
    page: PageRequest,
  ): Promise<{ grants: McpGrantView[]; next: string | null }> {
    const { items, next } = await this.rows.page(workspaceId, page)
    const names = new Map<string, string | null>()
    for (const id of new Set(items.map((r) => r.agent_id)))
      names.set(id, (await this.#agents.get(workspaceId, id).catch(() => null))?.name ?? null)
    return { grants: items.map((r) => this.#view(r, names.get(r.agent_id) ?? null)), next }
  }

  /**
   * Revokes a grant: it is marked revoked (every instance refuses its tokens from the next
   * request on) and its codes and tokens are deleted from the authorization server's records.
   */
  async revoke(caller: Caller, id: string): Promise<McpGrantView> {
    const row = await this.rows.get(id)
    if (!row || row.workspace_id !== caller.workspaceId || row.revoked_at) throw grantNotFound(id)
    if (!(await this.rows.revoke(caller.workspaceId, id, caller.personId ?? caller.keyId)))
      throw grantNotFound(id)
    await this.records.deleteGrant(id)
    const agent = await this.#agents.get(row.workspace_id, row.agent_id).catch(() => null)
    return this.#view(row, agent?.name ?? null)
  }

  /** Ends the grants of a deleted agent (revoked, their codes and tokens deleted); how many. */
  async endForAgent(workspaceId: string, agentId: string): Promise<number> {
    const ids = await this.rows.revokeForAgent(workspaceId, agentId)
    for (const id of ids) await this.records.deleteGrant(id)
    return ids.length
  }

  /** Ends the grants an end user gave through connect sessions (the end user was deleted); how many. */
  async endForEndUser(workspaceId: string, endUserId: string): Promise<number> {
    const ids = await this.rows.revokeForEndUser(workspaceId, endUserId)
    for (const id of ids) await this.records.deleteGrant(id)
    return ids.length
  }

  /**
   * The caller an access token of grant `grantId` acts as: the grant's agent, as an agent key
   * would (its scope, connections and end user), or why it may not. `audience` is the token's,
   * checked against `resource` (this Patchbay's /mcp).
   */
  async callerOf(grantId: string, token: { audience: unknown; resource: string }): Promise<Caller> {
    const aud = token.audience
    if (aud !== token.resource && !(Array.isArray(aud) && aud.length === 1 && aud[0] === token.resource))
      throw tokenRefused('This access token is for another resource, not this Patchbay’s /mcp.')
    const row = await this.rows.get(grantId)
    if (!row) throw tokenRefused('This access token’s grant no longer exists.')
    if (row.revoked_at) throw tokenRefused('This access token’s grant was revoked.')
    if (row.resource !== token.resource) throw tokenRefused('This access token is for another resource.')
    // An end user granted an agent bound to them: the token acts for that end user or not at all.
    if (row.connect_session_id) {
      const agent = await this.#agents.get(row.workspace_id, row.agent_id).catch(() => null)
      if (!agent || agent.endUserId !== row.end_user_id)
        throw tokenRefused(
          'This access token’s agent no longer acts for the end user who allowed it (it was deleted or bound to someone else).',
        )
    }
    const now = Date.now()
    if (
      now - (this.#lastUsed.get(grantId) ?? (row.last_used_at ? Date.parse(row.last_used_at) : 0)) >=
      LAST_USED_EVERY_MS
    ) {
      if (this.#lastUsed.size > 10_000) this.#lastUsed.clear()
      this.#lastUsed.set(grantId, now)
      this.rows.touch(grantId, new Date(now).toISOString()).catch(() => {})
    }
    return {
      workspaceId: row.workspace_id,
      kind: 'agentKey',
      role: null,
      keyId: row.id,
      personId: row.person_id,
      agentId: row.agent_id,
    }
  }

  #view(r: McpGrantRow, agentName: string | null): McpGrantView {
    return {
      id: r.id,
      agent: { id: r.agent_id, name: agentName },
      endUserId: r.end_user_id,
      client: { id: r.client_id, name: r.client_name },
      grantedBy: r.person_id,
      connectSessionId: r.connect_session_id,
      resource: r.resource,
      scope: r.scope,
      createdAt: r.created_at,
      lastUsedAt: r.last_used_at,
    }
  }
}
