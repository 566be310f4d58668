// Connections: check credentials with the upstream's identity call, keep them sealed in the
// vault, hand decrypted credentials to the step runner from a small cache, and mark a
// connection lapsed when the upstream refuses it.
import type { ConnectorDefinition, Credentials } from '../../kit/define.ts'
import type { EgressGuard } from '../../kit/egress.ts'
import { PatchbayError, validationError } from '../../kit/errors.ts'
import type { UpstreamClient } from '../../kit/http.ts'
import type { Budget } from '../../kit/pacer.ts'
import type { ConnectionRow, Connections } from '../../store/connections.ts'
import type { Vault } from '../../store/vault.ts'
import type { Changes } from '../changes/changes.ts'
import type { Registry } from '../registry.ts'
import type { UpstreamClients } from '../upstream/upstream-clients.ts'

export interface ConnectionView {
  id: string
  connector: string
  authMethod: string
  accountName: string
  accountId: string
  status: 'active' | 'lapsed'
  statusReason: string | null
  createdAt: string
  updatedAt: string
}

export interface LoadedConnection {
  row: ConnectionRow
  credentials: Credentials
}

export interface NewConnection {
  connector: string
  authMethod: string
  credentials: Record<string, unknown>
}

export function connectionView(row: ConnectionRow): ConnectionView {
  return {
    id: row.id,
    connector: row.connector,
    authMethod: row.auth_method,
    accountName: row.account_name,
    accountId: row.account_id,
    status: row.status,
    statusReason: row.status_reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

export class ConnectionService {
  /** Runs after a reconnect put new credentials in place (the engine re-registers webhooks). */
  onReplaced: (connectionId: string, previous: Credentials) => Promise<void> = async () => {}
  #repo: Connections
  #vault: Vault
  #registry: Registry
  #clients: UpstreamClients
  #cache = new Map<string, LoadedConnection>()
  #changes: Changes

  #egress: EgressGuard
  constructor(deps: {
    repo: Connections
    vault: Vault
    registry: Registry
    clients: UpstreamClients
    changes: Changes
    egress: EgressGuard
  }) {
    this.#egress = deps.egress
    this.#changes = deps.changes
    // A connection replaced, lapsed or deleted on any instance is read again here.
    deps.changes.subscribe('connections', (ids) => {
      if (ids.length === 0) this.#cache.clear()
      for (const id of ids) this.#cache.delete(id)
    })
    this.#repo = deps.repo
    this.#vault = deps.vault
    this.#registry = deps.registry
    this.#clients = deps.clients
  }

  async create(workspaceId: string, input: NewConnection): Promise<ConnectionView> {
    const { credentials, identity } = await this.#verify(input)
    const row = await this.#repo.insert({
      workspace_id: workspaceId,
      connector: input.connector,
      auth_method: input.authMethod,
      account_name: identity.accountName,
      account_id: identity.accountId,
      secret: this.#vault.seal(credentials),
    })
    return connectionView(row)
  }

  /**
   * Stores credentials a sign-in flow produced (engine/oauth-flows.ts): there is no credentials
   * schema to check them against, so they are only identified upstream, sealed and listed.
   */
  async createVerified(workspaceId: string, input: NewConnection): Promise<ConnectionView> {
    const { credentials, identity } = await this.#verify(input, true)
    const row = await this.#repo.insert({
      workspace_id: workspaceId,
      connector: input.connector,
      auth_method: input.authMethod,
      account_name: identity.accountName,
      account_id: identity.accountId,
      secret: this.#vault.seal(credentials),
    })
    return connectionView(row)
  }

  /** A sign-in flow's reconnect in place (same id, same account). */
  async reconnectVerified(
    workspaceId: string,
    id: string,
    input: Omit<NewConnection, 'connector'>,
  ): Promise<ConnectionView> {
    return this.reconnect(workspaceId, id, input, true)
  }

  /** Puts new credentials on an existing connection, keeping its id (and so its triggers). */
  async reconnect(
    workspaceId: string,
    id: string,
    input: Omit<NewConnection, 'connector'>,
    fromFlow = false,
  ): Promise<ConnectionView> {
    const row = await this.#requireRow(workspaceId, id)
    const { credentials, identity } = await this.#verify({ ...input, connector: row.connector }, fromFlow)
    if (identity.accountId !== row.account_id)
      throw new PatchbayError(
        'ACCOUNT_MISMATCH',
        `The credentials belong to ${identity.accountName}, but connection ${id} is for ${row.account_name}.`,
        { hint: 'Reconnect with the same account, or create a new connection for the other account.' },
      )
    const previous = this.#vault.open<Credentials>(row.secret)
    await this.#repo.replaceSecret(id, {
      secret: this.#vault.seal(credentials),
      account_name: identity.accountName,
      account_id: identity.accountId,
      auth_method: input.authMethod,
    })
    this.#changes.publish('connections', [id])
    await this.onReplaced(id, previous)
    return connectionView((await this.#repo.get(workspaceId, id))!)
  }

  async list(workspaceId: string, connector?: string): Promise<ConnectionView[]> {
    return (await this.#repo.list(workspaceId, { connector })).map(connectionView)
  }

  async get(workspaceId: string, id: string): Promise<ConnectionView> {
    return connectionView(await this.#requireRow(workspaceId, id))
  }

  async delete(workspaceId: string, id: string): Promise<void> {
    const deleted = await this.#repo.delete(workspaceId, id)
    this.#changes.publish('connections', [id])
    if (!deleted) throw connectionNotFound(id)
  }

  /** The connection with its decrypted credentials, for running a step. */
  async load(workspaceId: string, id: string): Promise<LoadedConnection> {
    const cached = this.#cache.get(id)
    if (cached && cached.row.workspace_id === workspaceId) return cached
    const row = await this.#requireRow(workspaceId, id)
    const loaded = { row, credentials: this.#vault.open<Credentials>(row.secret) }
    this.#cache.set(id, loaded)
    return loaded
  }

  /**
   * ctx.http with a stored connection's credentials: a 401 that refuses them marks the
   * connection lapsed. Every caller working for a connection builds its client here.
   */
  client(
    connectionId: string,
    connector: ConnectorDefinition,
    credentials: Credentials,
    opts: {
      paced: boolean
      pacing?: Budget
      onResponse?: (status: number, headers: Record<string, string>) => void
    },
  ): UpstreamClient {
    return this.#clients.create({
      ...opts,
      connector,
      credentials,
      storedConnection: true,
      onUnauthorized: (message) =>
        this.markLapsed(connectionId, `${connector.name} refused the credentials: ${message}`, credentials),
    })
  }

  /**
   * Marks the connection lapsed. Given the credentials the upstream refused, only while they are
   * still the connection's: an instance holding a token replaced since does not lapse the new one.
   */
  async markLapsed(id: string, reason: string, refused?: Credentials): Promise<void> {
    if (refused) {
      const row = await this.#repo.getById(id)
      if (!row) return
      const current = this.#vault.open<Credentials>(row.secret)
      if (JSON.stringify(current) !== JSON.stringify(refused)) return
    }
    await this.#repo.setStatus(id, 'lapsed', reason)
    this.#changes.publish('connections', [id])
  }

  async #requireRow(workspaceId: string, id: string): Promise<ConnectionRow> {
    const row = await this.#repo.get(workspaceId, id)
    if (!row) throw connectionNotFound(id)
    return row
  }

  async #verify(input: NewConnection, fromFlow = false) {
    const connector = this.#registry.connector(input.connector)
    if (!connector)
      throw new PatchbayError('UNKNOWN_CONNECTOR', `There is no connector "${input.connector}".`, {
        hint: `Use one of: ${this.#registry.connectors.map((c) => c.id).join(', ')}.`,
      })
    const method = connector.auth.find((a) => a.id === input.authMethod)
    if (fromFlow && method?.oauth) {
      const credentials = input.credentials as Credentials
      return { credentials, identity: await this.#identify(connector, credentials) }
    }
    if (!method?.credentials)
      throw new PatchbayError(
        'UNKNOWN_AUTH_METHOD',
        `The ${connector.name} connector has no credentials flow "${input.authMethod}".`,
        {
          hint: method?.oauth
            ? `"${method.id}" is a sign-in through ${connector.name}'s pages: start it with POST /v1/connections/oauth/start {"connector":"${connector.id}"}.`
            : `Use one of: ${connector.auth
                .filter((a) => a.credentials)
                .map((a) => a.id)
                .join(', ')}.`,
        },
      )
    const parsed = method.credentials.safeParse(input.credentials)
    if (!parsed.success) throw validationError(parsed.error.issues, 'credentials')
    const credentials = parsed.data as Credentials
    // An address the user gives (the http connector's base) passes the egress guard before anything is sent.
    const userBase = connector.baseUrlFrom?.(credentials)
    if (userBase) await this.#egress.check(userBase, 'credentials.baseUrl')
    return { credentials, identity: await this.#identify(connector, credentials) }
  }

  async #identify(connector: ConnectorDefinition, credentials: Credentials) {
    // Paced: the identity call spends the same per-token budget as the token's steps and polls.
    const http = this.#clients.create({ connector, credentials, paced: true, storedConnection: false })
    try {
      return await connector.identify(http, credentials)
    } catch (err) {
      if (err instanceof PatchbayError && (err.code === 'INVALID_CREDENTIALS' || err.status === 403))
        throw new PatchbayError(
          'INVALID_CREDENTIALS',
          `${connector.name} refused the credentials: ${err.message}. Nothing was stored.`,
          {
            hint: 'Check the credentials (and that they have not expired or been revoked), then try again.',
            upstream: err.upstream,
          },
        )
      throw err
    }
  }
}

export const connectionNotFound = (id: string) =>
  new PatchbayError('CONNECTION_NOT_FOUND', `There is no connection "${id}" in this workspace.`, {
    hint: 'List connections with GET /v1/connections.',
  })
