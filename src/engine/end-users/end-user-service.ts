// End users: the operator's own customers, named by the operator's id. A backend makes a connect
// session for one (a single-use token and the address of the hosted connect page); the end user
// connects an account there without any workspace key, and the connection is theirs. Agents bound
// to an end user use only their connections (agent-service.ts checks every connectionIds).
// Deleting an end user removes their connections (upstream webhooks first, then the sealed
// credentials with the row), the bindings of agents to them, their events and their sessions.
import { createHash, randomBytes } from 'node:crypto'
import type { ExpressionBuilder, Kysely } from 'kysely'
import { PatchbayError } from '../../kit/errors.ts'
import type { ConnectSessionRow, ConnectSessions, EndUserRow, EndUsers } from '../../store/end-users.ts'
import { ofWorkspace } from '../../store/event-log.ts'
import type { Database } from '../../store/schema.ts'
import type { Caller } from '../access/caller.ts'
import type { AgentService, AgentView } from '../agents/agent-service.ts'
import type { ConnectionService, ConnectionView } from '../connections/connection-service.ts'
import type { OAuthFlows, OAuthStarted } from '../connections/oauth-flows.ts'
import type { McpGrants } from '../mcp-grants/mcp-grants.ts'
import { type AuditEntry, type AuditTrail, anonymous } from '../people/audit-trail.ts'
import type { PublicAddress } from '../public-address.ts'
import type { Registry } from '../registry.ts'
import type { TriggerService } from '../triggers/trigger-service.ts'
import type { EndUserSettings } from './end-user-settings.ts'

export const MAX_SESSION_TTL_SECONDS = 3600

export interface EndUserView {
  id: string
  displayName: string | null
  email: string | null
  createdAt: string
  updatedAt: string
}

export interface NewConnectSession {
  endUserId: string
  displayName?: string
  email?: string
  connectors?: string[]
  authMethods?: string[]
  returnTo?: string
  ttlSeconds?: number
  /** The end user may spend it on the MCP consent page, allowing an MCP client one of their agents. */
  allowMcpGrant?: boolean
}

export interface ConnectSessionMade {
  id: string
  endUserId: string
  /** Single use; shown this once (only its hash is kept). */
  token: string
  /** The hosted connect page, for the end user's browser (the token rides in the #fragment). */
  url: string
  expiresAt: string
}

/** What the hosted page shows: the workspace and what may be connected. */
export interface ConnectSessionInfo {
  workspaceName: string
  endUserId: string
  expiresAt: string
  returnTo: string | null
  /** Made with allowMcpGrant: the address an MCP client adds (its sign-in page takes this link). */
  mcp: { url: string } | null
  connectors: Array<{
    id: string
    name: string
    methods: Array<{
      id: string
      name: string
      description: string
      kind: 'credentials' | 'signIn'
      fields: Array<{ name: string; description: string; secret: boolean }>
    }>
  }>
}

export interface EndUserRemoval {
  endUserId: string
  connections: Array<{ id: string; connector: string; accountName: string }>
  triggers: number
  webhookCleanupErrors: string[]
  agentsUnbound: string[]
  events: number
  deliveries: number
  connectSessions: number
  mcpGrants: number
}

/** What the MCP consent page shows an end user arriving with a connect link: the agents they may grant. */
export interface McpConsentForEndUser {
  workspaceName: string
  endUserId: string
  displayName: string | null
  expiresAt: string
  agents: AgentView[]
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('base64url')

export const endUserNotFound = (id: string) =>
  new PatchbayError('END_USER_NOT_FOUND', `There is no end user "${id}" in this workspace.`, {
    hint: 'List end users with GET /v1/end-users.',
  })

export function endUserView(row: EndUserRow): EndUserView {
  return {
    id: row.id,
    displayName: row.display_name,
    email: row.email,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

const SECRET_FIELD = /token|secret|key|password/i

export class EndUserService {
  #rows: EndUsers
  #sessions: ConnectSessions
  #settings: EndUserSettings
  #connections: ConnectionService
  #agents: AgentService
  #oauth: OAuthFlows
  #triggers: TriggerService
  #registry: Registry
  #db: Kysely<Database>
  #address: PublicAddress
  #audit: AuditTrail
  #mcpGrants: McpGrants

  constructor(deps: {
    /** Connect links made and refused, connections made through them. */
    audit: AuditTrail
    rows: EndUsers
    sessions: ConnectSessions
    settings: EndUserSettings
    connections: ConnectionService
    agents: AgentService
    oauth: OAuthFlows
    triggers: TriggerService
    registry: Registry
    db: Kysely<Database>
    /** Where the connect page is (connect links). */
    address: PublicAddress
    /** MCP grants an end user gave (ended when they are deleted). */
    mcpGrants: McpGrants
  }) {
    this.#rows = deps.rows
    this.#sessions = deps.sessions
    this.#settings = deps.settings
    this.#connections = deps.connections
    this.#agents = deps.agents
    this.#oauth = deps.oauth
    this.#triggers = deps.triggers
    this.#registry = deps.registry
    this.#db = deps.db
    this.#address = deps.address
    this.#audit = deps.audit
    this.#mcpGrants = deps.mcpGrants
  }

  async #record(entry: Omit<AuditEntry, 'workspaceId'> & { workspaceIds: Array<string | null> }) {
    await this.#audit.record(entry)
  }

  /** Records a refusal in the audit log, then throws it. */
  async #refuse(err: unknown, workspaceId: string | null, action: string, actor = anonymous): Promise<never> {
    if (err instanceof PatchbayError)
      await this.#record({
        workspaceIds: workspaceId ? [workspaceId] : [],
        actor,
        action,
        outcome: 'refused',
        detail: { code: err.code, message: err.message },
      })
    throw err
  }

  get settings(): EndUserSettings {
    return this.#settings
  }

  async list(
    workspaceId: string,
    q: { cursor?: string; limit: number },
  ): Promise<{ endUsers: EndUserView[]; next: string | null }> {
    const page = await this.#rows.page(workspaceId, q)
    return { endUsers: page.items.map(endUserView), next: page.next }
  }

  async get(
    workspaceId: string,
    id: string,
  ): Promise<EndUserView & { connections: ConnectionView[]; agents: AgentView[] }> {
    const row = await this.#rows.get(workspaceId, id)
    if (!row) throw endUserNotFound(id)
    return {
      ...endUserView(row),
      connections: await this.#connections.list(workspaceId, undefined, id),
      agents: await this.#agents.list(workspaceId, { endUserId: id }),
    }
  }

  async createSession(caller: Caller, input: NewConnectSession): Promise<ConnectSessionMade> {
    const workspaceId = caller.workspaceId
    const actor = { kind: 'key' as const, id: caller.keyId ?? caller.personId, label: null }
    const ttl = input.ttlSeconds ?? 1800
    let connectors: string[] | null = null
    let returnTo: string | null = null
    try {
      connectors = input.connectors ? this.#checkConnectors(input.connectors) : null
      if (input.authMethods) this.#checkMethods(input.authMethods, connectors)
      returnTo = input.returnTo ? await this.#settings.checkReturnTo(workspaceId, input.returnTo) : null
    } catch (err) {
      return this.#refuse(err, workspaceId, 'connect_session.created', actor)
    }
    await this.#rows.put(workspaceId, input.endUserId, { displayName: input.displayName, email: input.email })
    const token = `pbcs_${randomBytes(32).toString('base64url')}`
    const row = await this.#sessions.insert({
      token_hash: hashToken(token),
      workspace_id: workspaceId,
      end_user_id: input.endUserId,
      connectors,
      auth_methods: input.authMethods ?? null,
      return_to: returnTo,
      expires_at: new Date(Date.now() + ttl * 1000).toISOString(),
      allow_mcp_grant: input.allowMcpGrant ? 1 : 0,
    })
    await this.#record({
      workspaceIds: [workspaceId],
      actor,
      action: 'connect_session.created',
      object: { kind: 'connect_session', id: row.id },
      outcome: 'ok',
      detail: {
        endUserId: input.endUserId,
        connectors,
        returnTo,
        expiresAt: row.expires_at,
        allowMcpGrant: input.allowMcpGrant ?? false,
      },
    })
    return {
      id: row.id,
      endUserId: input.endUserId,
      token,
      url: this.#address.of(`/connect#${token}`),
      expiresAt: row.expires_at,
    }
  }

  /**
   * The session of a token, refused when the token is not one given out (CONNECT_SESSION_INVALID),
   * has expired (CONNECT_SESSION_EXPIRED) or connected an account already (CONNECT_SESSION_USED).
   */
  async openSession(token: string | undefined): Promise<ConnectSessionRow> {
    const row = token && token.length < 200 ? await this.#sessions.byTokenHash(hashToken(token)) : undefined
    try {
      return this.#usable(row)
    } catch (err) {
      return this.#refuse(
        await this.#backToApp(err, row),
        row?.workspace_id ?? null,
        'connect_session.refused',
      )
    }
  }

  /**
   * A dead link (expired or used) whose session was made with a returnTo still on the workspace's
   * allowed origins: the refusal names where the hosted page sends the browser back, with
   * `?error=<code>&error_description=` (as a failed sign-in comes back). A forged token has no
   * session, so no returnTo: the page says what happened in words.
   */
  async #backToApp(err: unknown, row: ConnectSessionRow | undefined): Promise<unknown> {
    if (!(err instanceof PatchbayError) || !row?.return_to) return err
    let returnTo: string
    try {
      returnTo = await this.#settings.checkReturnTo(row.workspace_id, row.return_to)
    } catch {
      return err
    }
    const url = new URL(returnTo)
    url.searchParams.set('error', err.code)
    url.searchParams.set('error_description', err.message)
    return new PatchbayError(err.code, err.message, {
      hint: err.hint,
      details: { returnTo: url.toString() },
    })
  }

  #usable(row: ConnectSessionRow | undefined): ConnectSessionRow {
    if (!row)
      throw new PatchbayError(
        'CONNECT_SESSION_INVALID',
        'This connect link is not valid: it is not one Patchbay gave out, or it was altered.',
        { hint: 'Ask the app that sent you here for a new connect link.' },
      )
    if (Date.parse(row.expires_at) <= Date.now())
      throw new PatchbayError('CONNECT_SESSION_EXPIRED', `This connect link expired at ${row.expires_at}.`, {
        hint: 'Ask the app that sent you here for a new connect link.',
      })
    if (row.used_at)
      throw new PatchbayError(
        'CONNECT_SESSION_USED',
        row.connection_id
          ? 'This connect link has already been used to connect an account.'
          : 'This connect link has already been used to allow an MCP client.',
        {
          hint: 'Each link is good once: ask the app that sent you here for a new one.',
        },
      )
    return row
  }

  /**
   * The session of a connect token presented on the MCP consent page: usable (not forged, expired
   * or used) and made to allow MCP clients. Not spent: granting spends it (spendOnMcpGrant). The
   * caller audits a refusal (as an OAuth refusal); the session, when there is one, names the workspace.
   */
  async mcpSession(
    token: string | undefined,
  ): Promise<{ session: ConnectSessionRow | undefined; refusal: PatchbayError | null }> {
    const row = token && token.length < 200 ? await this.#sessions.byTokenHash(hashToken(token)) : undefined
    try {
      this.#usable(row)
    } catch (err) {
      if (err instanceof PatchbayError) return { session: row, refusal: err }
      throw err
    }
    if (!row?.allow_mcp_grant)
      return {
        session: row,
        refusal: new PatchbayError(
          'CONNECT_SESSION_NOT_FOR_MCP',
          'This connect link lets you connect an account, not allow an MCP client.',
          {
            hint: 'Ask the app that sent you here for a link that allows MCP clients (its backend makes one with POST /v1/connect-sessions {"allowMcpGrant": true}).',
          },
        ),
      }
    return { session: row, refusal: null }
  }

  /** What the consent page shows the end user of a usable MCP session: the agents bound to them. */
  async mcpConsent(s: ConnectSessionRow): Promise<McpConsentForEndUser> {
    const user = await this.#rows.get(s.workspace_id, s.end_user_id)
    return {
      workspaceName: await this.#settings.workspaceName(s.workspace_id),
      endUserId: s.end_user_id,
      displayName: user?.display_name ?? null,
      expiresAt: s.expires_at,
      agents: await this.#agents.list(s.workspace_id, { endUserId: s.end_user_id }),
    }
  }

  /**
   * The agent an end user chose on the consent page, when it is bound to them; refused otherwise
   * (the same answer whether the agent is another end user's, the workspace's own, or not there).
   */
  async mcpAgent(s: ConnectSessionRow, agentId: string): Promise<AgentView | PatchbayError> {
    const agent = await this.#agents.get(s.workspace_id, agentId).catch(() => null)
    if (agent && agent.endUserId === s.end_user_id) return agent
    return new PatchbayError(
      'MCP_AGENT_NOT_END_USERS',
      `The agent "${agentId}" does not act for you (end user "${s.end_user_id}"): you may allow an MCP client only an agent bound to you.`,
      {
        hint: 'Choose one of the agents this page lists for you; if there is none, ask the app that sent you here for one.',
      },
    )
  }

  /** Spends an MCP session (single use, even when two requests race); false when it was spent already. */
  spendOnMcpGrant(s: ConnectSessionRow): Promise<boolean> {
    return this.#sessions.spend(s.id, null)
  }

  /** Gives an MCP session back when the grant could not be recorded. */
  giveBackMcpSession(s: ConnectSessionRow): Promise<void> {
    return this.#sessions.giveBackUnsettled(s.id)
  }

  async describeSession(token: string | undefined): Promise<ConnectSessionInfo> {
    const s = await this.openSession(token)
    const allowedConnectors = s.connectors
    const allowedMethods = s.auth_methods
    const connectors = this.#registry.connectors
      .filter((c) => (allowedConnectors ? allowedConnectors.includes(c.id) : c.id !== 'http'))
      .map((c) => ({
        id: c.id,
        name: c.name,
        methods: c.auth
          .filter((m) => !allowedMethods || allowedMethods.includes(m.id))
          .filter((m) => m.credentials || (m.oauth && this.#oauth.available(c.id)))
          .map((m) => ({
            id: m.id,
            name: m.name,
            description: m.description,
            kind: (m.credentials ? 'credentials' : 'signIn') as 'credentials' | 'signIn',
            fields: m.credentials
              ? Object.entries(m.credentials.shape).map(([name, schema]) => ({
                  name,
                  description: (schema as { description?: string }).description ?? '',
                  secret: SECRET_FIELD.test(name),
                }))
              : [],
          })),
      }))
      .filter((c) => c.methods.length > 0)
    return {
      workspaceName: await this.#settings.workspaceName(s.workspace_id),
      endUserId: s.end_user_id,
      expiresAt: s.expires_at,
      returnTo: s.return_to,
      mcp: s.allow_mcp_grant ? { url: this.#address.of('/mcp') } : null,
      connectors,
    }
  }

  /** Connects with credentials through a connect session: the connection is the end user's. */
  async connectWithCredentials(
    token: string | undefined,
    input: { connector: string; authMethod: string; credentials: Record<string, unknown> },
  ): Promise<{ connection: ConnectionView; reconnected: boolean; returnTo: string | null }> {
    const s = await this.openSession(token)
    this.#allowed(s, input.connector, input.authMethod)
    // Spent first (one use, even when two requests race); given back when nothing was connected.
    if (!(await this.#sessions.spend(s.id, 'pending')))
      throw new PatchbayError(
        'CONNECT_SESSION_USED',
        'This connect link has already been used to connect an account.',
        {
          hint: 'Each link connects one account: ask the app that sent you here for a new one.',
        },
      )
    try {
      const { reconnected, ...connection } = await this.#connections.create(s.workspace_id, {
        ...input,
        endUserId: s.end_user_id,
      })
      await this.#sessions.settle(s.id, connection.id)
      await this.#record({
        workspaceIds: [s.workspace_id],
        actor: { kind: 'anonymous', id: null, label: `end user ${s.end_user_id}` },
        action: reconnected ? 'connection.reconnected' : 'connection.created',
        object: { kind: 'connection', id: connection.id },
        outcome: 'ok',
        detail: { endUserId: s.end_user_id, connectSession: s.id, connector: connection.connector },
      })
      return { connection, reconnected, returnTo: s.return_to }
    } catch (err) {
      await this.#sessions.giveBack(s.id)
      throw err
    }
  }

  /**
   * Starts a sign-in through the upstream's pages for the session's end user: redirect (back to
   * the session's returnTo, or a page saying what happened) or pop-up (the result goes to the
   * hosted page, which opened it).
   */
  async startSignIn(
    token: string | undefined,
    input: { connector: string; authMethod?: string; mode?: 'redirect' | 'popup' },
  ): Promise<OAuthStarted> {
    const s = await this.openSession(token)
    this.#allowed(s, input.connector, input.authMethod)
    return this.#oauth.start(
      { workspaceId: s.workspace_id },
      {
        connector: input.connector,
        authMethod: input.authMethod,
        mode: input.mode ?? 'redirect',
        returnTo: input.mode === 'popup' ? '/connect' : (s.return_to ?? undefined),
        endUserId: s.end_user_id,
        connectSessionId: s.id,
      },
    )
  }

  async delete(workspaceId: string, id: string): Promise<EndUserRemoval> {
    if (!(await this.#rows.get(workspaceId, id))) throw endUserNotFound(id)
    const connections = await this.#connections.list(workspaceId, undefined, id)
    const ids = connections.map((c) => c.id)
    let triggers = 0
    const cleanupErrors: string[] = []
    // Their triggers and upstream webhooks go first, while the credentials can still remove them.
    for (const c of connections) {
      const r = await this.#triggers.removeForConnection(c.id)
      triggers += r.triggers
      cleanupErrors.push(...r.cleanupErrors)
    }
    // Agents bound to them keep their binding (so they never fall back to the workspace's
    // connections) but lose the connections, which are gone.
    const agentsUnbound: string[] = []
    for (const a of await this.#agents.list(workspaceId)) {
      if (!a.connectionIds.some((c) => ids.includes(c))) continue
      await this.#agents.update(workspaceId, a.id, {
        connectionIds: a.connectionIds.filter((c) => !ids.includes(c)),
      })
      agentsUnbound.push(a.id)
    }
    const { events, deliveries } = await this.#deleteEvents(workspaceId, id, ids)
    for (const c of connections)
      await this.#connections.delete(workspaceId, c.id, `end user "${id}" was deleted`)
    const connectSessions = await this.#sessions.deleteForEndUser(workspaceId, id)
    const mcpGrants = await this.#mcpGrants.endForEndUser(workspaceId, id)
    await this.#rows.delete(workspaceId, id)
    return {
      endUserId: id,
      connections: connections.map((c) => ({ id: c.id, connector: c.connector, accountName: c.accountName })),
      triggers,
      webhookCleanupErrors: cleanupErrors,
      agentsUnbound,
      events,
      deliveries,
      connectSessions,
      mcpGrants,
    }
  }

  /** Their events (stored under them as owner, or heard through their connections) and those events' deliveries. */
  async #deleteEvents(workspaceId: string, endUserId: string, connectionIds: string[]) {
    const theirs = (w: ExpressionBuilder<Database, 'events'>) =>
      connectionIds.length > 0
        ? w.or([w('owner', '=', endUserId), w('connection_id', 'in', connectionIds)])
        : w('owner', '=', endUserId)
    return this.#db.transaction().execute(async (tx) => {
      const eventIds = tx
        .selectFrom(ofWorkspace(tx, 'events', workspaceId, ['id', 'owner', 'connection_id']))
        .select('id')
        .where(theirs)
      const deliveryIds = tx.selectFrom('deliveries').select('id').where('event_id', 'in', eventIds)
      await tx.deleteFrom('delivery_attempts').where('delivery_id', 'in', deliveryIds).execute()
      const d = await tx.deleteFrom('deliveries').where('event_id', 'in', eventIds).executeTakeFirst()
      const e = await tx.deleteFrom('events').where('id', 'in', eventIds).executeTakeFirst()
      return { events: Number(e.numDeletedRows), deliveries: Number(d.numDeletedRows) }
    })
  }

  #allowed(s: ConnectSessionRow, connector: string, authMethod: string | undefined) {
    const connectors = s.connectors
    const methods = s.auth_methods
    if (
      (connectors && !connectors.includes(connector)) ||
      (authMethod && methods && !methods.includes(authMethod))
    )
      throw new PatchbayError(
        'CONNECT_NOT_ALLOWED',
        `This connect link does not allow ${authMethod ? `"${authMethod}" for ` : ''}${connector}.`,
        {
          hint: `It allows ${connectors ? connectors.join(', ') : 'every connector'}${methods ? ` with ${methods.join(', ')}` : ''}.`,
        },
      )
  }

  #checkConnectors(ids: string[]): string[] {
    const unknown = ids.filter((id) => !this.#registry.connector(id))
    if (unknown.length)
      throw new PatchbayError(
        'UNKNOWN_CONNECTOR',
        `There is no connector ${unknown.map((u) => `"${u}"`).join(', ')}.`,
        {
          hint: `Use some of: ${this.#registry.connectors.map((c) => c.id).join(', ')}.`,
        },
      )
    return [...new Set(ids)]
  }

  #checkMethods(ids: string[], connectors: string[] | null) {
    const known = new Set(
      this.#registry.connectors
        .filter((c) => !connectors || connectors.includes(c.id))
        .flatMap((c) => c.auth.map((a) => a.id)),
    )
    const unknown = ids.filter((id) => !known.has(id))
    if (unknown.length)
      throw new PatchbayError(
        'UNKNOWN_AUTH_METHOD',
        `No allowed connector has the auth method ${unknown.map((u) => `"${u}"`).join(', ')}.`,
        { hint: `Use some of: ${[...known].join(', ')}.` },
      )
  }
}
