// Connections: check credentials with the upstream's identity call, keep them sealed in the
// vault, hand decrypted credentials to the step runner from a small cache, and mark a
// connection lapsed when the upstream refuses it.
import type { ConnectorDefinition, Credentials } from '../../kit/define.ts'
import type { EgressGuard } from '../../kit/egress.ts'
import { PatchbayError, validationError } from '../../kit/errors.ts'
import type { UpstreamClient } from '../../kit/http.ts'
import type { Budget } from '../../kit/pacer.ts'
import type { ConnectionRow, Connections } from '../../store/connections.ts'
import type { DisconnectionRow, Disconnections } from '../../store/disconnections.ts'
import { nowIso } from '../../store/ids.ts'
import type { PageRequest } from '../../store/paging.ts'
import { type Db, transact } from '../../store/transaction.ts'
import type { Triggers } from '../../store/triggers.ts'
import type { Vault } from '../../store/vault.ts'
import type { Changes } from '../changes/changes.ts'
import type { EngineEvents } from '../engine-events.ts'
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
  /** When it lapsed; null while active. */
  lapsedAt: string | null
  /** The last check upstream, and why it could not be made (an unreachable upstream is no lapse). */
  checkedAt: string | null
  checkError: string | null
  createdAt: string
  updatedAt: string
  /** What tells it apart from other connections of the account (a code-host token's kind and reach). */
  details: Record<string, string>
  /**
   * Earlier connections of the same account, disconnected while agents, triggers or tool steps
   * used them: POST /v1/connections/{id}/restore puts those back on this one.
   */
  restorable: Restorable[]
  /** The end user who made it (through a connect session); null: the workspace's own. */
  endUserId: string | null
}

/** What happened to a connection, for the operator's lifecycle notices (end-users/operator-notices.ts). */
export type ConnectionLifecycleEvent =
  | 'connection.created'
  | 'connection.reconnected'
  | 'connection.lapsed'
  | 'connection.deleted'

export interface ConnectionLifecycle {
  connectionChanged(type: ConnectionLifecycleEvent, row: ConnectionRow, reason: string | null): void
}

export interface Restorable {
  /** The disconnected connection. */
  connectionId: string
  disconnectedAt: string
  agents: number
  triggers: number
  toolSteps: number
}

export interface LoadedConnection {
  row: ConnectionRow
  credentials: Credentials
}

export interface NewConnection {
  connector: string
  authMethod: string
  credentials: Record<string, unknown>
  /**
   * Make a second connection even when the account already has one of this connector and
   * method; otherwise that one is reconnected in place (same id, so its triggers and agents stay).
   */
  second?: boolean
  /**
   * The end user it is made for (a connect session): only their connection of the account is
   * reconnected in place; another end user's connection of the same account is never touched.
   */
  endUserId?: string | null
}

/** A connection made, or an existing one of the same account reconnected in place. */
export type ConnectResult = ConnectionView & { reconnected: boolean }

/** How often an instance writes a connection's alive_at at most. */
const ALIVE_WRITE_MS = 10_000

export function connectionView(
  row: ConnectionRow,
  details: Record<string, string> = {},
  restorable: Restorable[] = [],
): ConnectionView {
  return {
    id: row.id,
    connector: row.connector,
    authMethod: row.auth_method,
    accountName: row.account_name,
    accountId: row.account_id,
    status: row.status,
    statusReason: row.status_reason,
    lapsedAt: row.lapsed_at ?? null,
    checkedAt: row.checked_at ?? null,
    checkError: row.check_error ?? null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    details,
    endUserId: row.end_user_id ?? null,
    restorable,
  }
}

function restorableOf(d: DisconnectionRow): Restorable {
  const b = d.bindings
  return {
    connectionId: d.id,
    disconnectedAt: d.disconnected_at,
    agents: b.agents.length,
    triggers: b.triggers.length,
    toolSteps: b.tools.reduce((n, t) => n + t.steps.length, 0),
  }
}

/** How many connections' owners ownerOf remembers before starting again. */
const OWNERS_REMEMBERED = 10_000

export class ConnectionService {
  #db: Db
  #bus: EngineEvents
  #repo: Connections
  #triggers: Triggers
  #vault: Vault
  #registry: Registry
  #clients: UpstreamClients
  #cache = new Map<string, LoadedConnection>()
  /** Each connection's owner (ownerOf), by workspace and id. */
  #owners = new Map<string, string | null>()
  #changes: Changes
  #disconnections: Disconnections
  /** When this instance last wrote each connection's alive_at. */
  #aliveWritten = new Map<string, number>()

  #egress: EgressGuard
  #lifecycle: ConnectionLifecycle | undefined
  constructor(deps: {
    /** The database: a lapse (reconnect) and the pause (resume) of its triggers are one commit. */
    db: Db
    repo: Connections
    /** The connection's triggers, paused and resumed with it. */
    triggers: Triggers
    /** Told of a reconnect (connectionReplaced, connectionReconnected) and a lapse (connectionLapsed). */
    bus: EngineEvents
    /** Disconnected connections of the same accounts, offered for restoring. */
    disconnections: Disconnections
    vault: Vault
    registry: Registry
    clients: UpstreamClients
    changes: Changes
    egress: EgressGuard
    /** Told of every connection made, reconnected, lapsed or deleted (the operator's notices). */
    lifecycle?: ConnectionLifecycle
  }) {
    this.#egress = deps.egress
    this.#lifecycle = deps.lifecycle
    this.#changes = deps.changes
    this.#disconnections = deps.disconnections
    // A connection replaced, lapsed or deleted on any instance is read again here.
    deps.changes.subscribe('connections', (ids) => {
      if (ids.length === 0) this.#cache.clear()
      for (const id of ids) this.#cache.delete(id)
    })
    this.#db = deps.db
    this.#bus = deps.bus
    this.#repo = deps.repo
    this.#triggers = deps.triggers
    this.#vault = deps.vault
    this.#registry = deps.registry
    this.#clients = deps.clients
  }

  async create(workspaceId: string, input: NewConnection): Promise<ConnectResult> {
    return this.#connect(workspaceId, input, await this.#verify(input))
  }

  /**
   * Stores credentials a sign-in flow produced (engine/oauth-flows.ts): there is no credentials
   * schema to check them against, so they are only identified upstream, sealed and listed.
   */
  async createVerified(workspaceId: string, input: NewConnection): Promise<ConnectResult> {
    return this.#connect(workspaceId, input, await this.#verify(input, true))
  }

  /**
   * One connection per account: credentials for an account that already has a connection of this
   * connector and method replace that connection's in place, unless a second one is asked for.
   */
  async #connect(
    workspaceId: string,
    input: NewConnection,
    verified: { credentials: Credentials; identity: { accountName: string; accountId: string } },
  ): Promise<ConnectResult> {
    const { credentials, identity } = verified
    if (!input.second) {
      const [same] = await this.#repo.list(workspaceId, {
        connector: input.connector,
        endUserId: input.endUserId ?? null,
        account: { authMethod: input.authMethod, accountId: identity.accountId },
      })
      if (same)
        return { ...(await this.#replace(workspaceId, same, input.authMethod, verified)), reconnected: true }
    }
    const row = await this.#repo.insert({
      workspace_id: workspaceId,
      connector: input.connector,
      auth_method: input.authMethod,
      account_name: identity.accountName,
      account_id: identity.accountId,
      secret: this.#vault.seal(credentials),
      end_user_id: input.endUserId ?? null,
    })
    const restorable = (await this.#restorables(workspaceId, [row]))(row)
    this.#lifecycle?.connectionChanged('connection.created', row, null)
    return { ...this.#view(row, credentials, restorable), reconnected: false }
  }

  /** A sign-in flow's reconnect in place (same id, same account). */
  async reconnectVerified(
    workspaceId: string,
    id: string,
    input: Omit<NewConnection, 'connector'>,
  ): Promise<ConnectionView> {
    return this.reconnect(workspaceId, id, input, true)
  }

  /**
   * Puts new credentials on an existing connection, keeping its id (and so its triggers); the
   * connection's own auth method unless another is named.
   */
  async reconnect(
    workspaceId: string,
    id: string,
    given: Omit<NewConnection, 'connector' | 'authMethod'> & { authMethod?: string },
    fromFlow = false,
  ): Promise<ConnectionView> {
    const row = await this.#requireRow(workspaceId, id)
    const input = { ...given, authMethod: given.authMethod ?? row.auth_method }
    const { credentials, identity } = await this.#verify({ ...input, connector: row.connector }, fromFlow)
    if (identity.accountId !== row.account_id)
      throw new PatchbayError(
        'ACCOUNT_MISMATCH',
        `The credentials belong to ${identity.accountName}, but connection ${id} is for ${row.account_name}.`,
        { hint: 'Reconnect with the same account, or create a new connection for the other account.' },
      )
    return this.#replace(workspaceId, row, input.authMethod, { credentials, identity })
  }

  async #replace(
    workspaceId: string,
    row: ConnectionRow,
    authMethod: string,
    {
      credentials,
      identity,
    }: { credentials: Credentials; identity: { accountName: string; accountId: string } },
  ): Promise<ConnectionView> {
    const previous = this.#vault.open<Credentials>(row.secret)
    // Active again and its paused triggers resumed in one commit: no reader sees one without the other.
    const resumed = await transact(this.#db, async (tx) => {
      await this.#repo.replaceSecret(
        row.id,
        {
          secret: this.#vault.seal(credentials),
          account_name: identity.accountName,
          account_id: identity.accountId,
          auth_method: authMethod,
        },
        tx,
      )
      return this.#triggers.resumeForConnection(row.id, tx)
    })
    this.#cache.delete(row.id)
    this.#changes.publish('connections', [row.id])
    // Its webhooks are registered again with the new credentials (triggers/webhook-subscriptions.ts).
    await this.#bus.emit('connectionReplaced', { connectionId: row.id, previous })
    // From lapsed to working: its agents hear of it (connections/connection-health.ts).
    if (row.status === 'lapsed' || resumed.length > 0)
      await this.#bus.emit('connectionReconnected', { connectionId: row.id, resumed })
    const replaced = (await this.#repo.get(workspaceId, row.id))!
    this.#lifecycle?.connectionChanged(
      'connection.reconnected',
      replaced,
      row.status === 'lapsed'
        ? `was lapsed: ${row.status_reason ?? 'the upstream refused its credentials'}`
        : null,
    )
    return this.#view(replaced, credentials)
  }

  /** The connection as the API shows it, with what its credentials say about it. */
  #view(row: ConnectionRow, credentials?: Credentials, restorable: Restorable[] = []): ConnectionView {
    const describe = this.#registry.connector(row.connector)?.describeCredentials
    if (!describe) return connectionView(row, {}, restorable)
    return connectionView(row, describe(credentials ?? this.#open(row).credentials), restorable)
  }

  /**
   * What each of `rows` may restore: the open disconnections of its account and owner (connector,
   * account id, end user), read for those rows only.
   */
  async #restorables(
    workspaceId: string,
    rows: readonly ConnectionRow[],
  ): Promise<(row: ConnectionRow) => Restorable[]> {
    const open = await this.#disconnections.openFor(
      workspaceId,
      rows.map((r) => ({ connector: r.connector, accountId: r.account_id, endUserId: r.end_user_id })),
    )
    if (open.length === 0) return () => []
    return (row) =>
      open
        .filter(
          (d) =>
            d.connector === row.connector &&
            d.account_id === row.account_id &&
            d.end_user_id === row.end_user_id &&
            d.id !== row.id,
        )
        .map(restorableOf)
  }

  #open(row: ConnectionRow): LoadedConnection {
    const cached = this.#cache.get(row.id)
    if (cached && cached.row.secret === row.secret) return cached
    const loaded = { row, credentials: this.#vault.open<Credentials>(row.secret) }
    this.#cache.set(row.id, loaded)
    return loaded
  }

  /** endUserId: that end user's connections; null: the workspace's own; absent: all. */
  async list(workspaceId: string, connector?: string, endUserId?: string | null): Promise<ConnectionView[]> {
    return this.#views(workspaceId, await this.#repo.list(workspaceId, { connector, endUserId }))
  }

  /** The rows as the API shows them, each with what it may restore. */
  async #views(workspaceId: string, rows: readonly ConnectionRow[]): Promise<ConnectionView[]> {
    if (rows.length === 0) return []
    const restorable = await this.#restorables(workspaceId, rows)
    return rows.map((r) => this.#view(r, undefined, restorable(r)))
  }

  /**
   * Those of `ids` that are the workspace's connections (of `connector`, when given), oldest first
   * (an id of none is left out): read by id, so a request naming a few costs the same in a
   * workspace of thousands.
   */
  async named(workspaceId: string, ids: readonly string[], connector?: string): Promise<ConnectionView[]> {
    return this.#views(workspaceId, await this.#repo.list(workspaceId, { ids, connector }))
  }

  /**
   * The same list, oldest first, a page at a time (GET /v1/connections); `ids` keeps only those
   * (the ones an agent key may see).
   */
  async page(
    workspaceId: string,
    filter: { connector?: string; endUserId?: string | null; ids?: readonly string[] },
    page: PageRequest,
  ): Promise<{ connections: ConnectionView[]; next: string | null }> {
    const { items, next } = await this.#repo.page(workspaceId, filter, page)
    return { connections: await this.#views(workspaceId, items), next }
  }

  async get(workspaceId: string, id: string): Promise<ConnectionView> {
    const row = await this.#requireRow(workspaceId, id)
    return this.#view(row, undefined, (await this.#restorables(workspaceId, [row]))(row))
  }

  async delete(workspaceId: string, id: string, reason: string | null = null): Promise<void> {
    const row = await this.#repo.get(workspaceId, id)
    const deleted = await this.#repo.delete(workspaceId, id)
    this.#changes.publish('connections', [id])
    if (!deleted || !row) throw connectionNotFound(id)
    this.#cache.delete(id)
    this.#lifecycle?.connectionChanged('connection.deleted', row, reason)
  }

  /**
   * The end user a connection belongs to, null for the workspace's own (or a connection that is
   * gone): what its events are stored under (the recorder). A connection's owner never changes,
   * so it is remembered once read (a bounded map, no secrets).
   */
  async ownerOf(workspaceId: string, id: string): Promise<string | null> {
    const cached = this.#cache.get(id)
    if (cached && cached.row.workspace_id === workspaceId) return cached.row.end_user_id ?? null
    const key = `${workspaceId}\n${id}`
    const known = this.#owners.get(key)
    if (known !== undefined) return known
    const row = await this.#repo.get(workspaceId, id)
    if (!row) return null
    if (this.#owners.size >= OWNERS_REMEMBERED) this.#owners.clear()
    this.#owners.set(key, row.end_user_id ?? null)
    return row.end_user_id ?? null
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
   * The connection a step, trigger or picker of `connector` acts through, refused unless one was
   * given (CONNECTION_REQUIRED), it exists (CONNECTION_NOT_FOUND), it is of that connector
   * (CONNECTION_CONNECTOR_MISMATCH) and it has not lapsed (CONNECTION_LAPSED). `user` names who
   * needs it in the messages ("the step taskboard.get_card"). Every such check is this one.
   */
  async usable(
    workspaceId: string,
    id: string | null | undefined,
    connector: ConnectorDefinition,
    user: string,
  ): Promise<LoadedConnection> {
    return (
      this.usableNow(workspaceId, id, connector, user) ??
      usableOrRefused(await this.load(workspaceId, requiredId(id, connector, user)), connector, user)
    )
  }

  /**
   * usable() without waiting when the connection is in the cache; undefined when it is not (then
   * usable() reads it). The cache is the one usable() reads: a connection changed anywhere leaves it.
   */
  usableNow(
    workspaceId: string,
    id: string | null | undefined,
    connector: ConnectorDefinition,
    user: string,
  ): LoadedConnection | undefined {
    const cached = this.#cache.get(requiredId(id, connector, user))
    if (!cached || cached.row.workspace_id !== workspaceId) return undefined
    return usableOrRefused(cached, connector, user)
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
      // An answer that is no refusal proves the credentials alive (the health check can wait).
      onResponse: (status, headers) => {
        if (status !== 401) this.#alive(connectionId)
        opts.onResponse?.(status, headers)
      },
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
    const row = await this.#repo.getById(id)
    if (!row) return
    if (refused) {
      const current = this.#vault.open<Credentials>(row.secret)
      if (JSON.stringify(current) !== JSON.stringify(refused)) return
    }
    const at = nowIso()
    // Of every instance that meets the refusal, the one whose update made the change tells the rest.
    // Lapsed and its triggers paused in one commit: no reader sees a lapsed connection beside a
    // running trigger.
    const paused = await transact(this.#db, async (tx) => {
      if (!(await this.#repo.lapse(id, reason, at, tx))) return null
      return this.#triggers.pauseForConnection(
        id,
        `connection ${id} (${row.account_name}) lapsed at ${at}: ${reason}; reconnecting resumes it`,
        at,
        tx,
      )
    })
    this.#cache.delete(id)
    this.#changes.publish('connections', [id])
    if (!paused) return
    // Told once, when it goes from active to lapsed.
    const lapsedRow = await this.#repo.getById(id)
    if (lapsedRow) this.#lifecycle?.connectionChanged('connection.lapsed', lapsedRow, reason)
    // On the instance that made the change, after the commit (connections/connection-health.ts).
    await this.#bus.emit('connectionLapsed', { connectionId: id, reason, at, paused })
  }

  /**
   * Its credentials just worked (an answer that was no refusal): remembered in the store at most
   * every ALIVE_WRITE_MS per connection and instance, so a check upstream is not needed meanwhile.
   */
  #alive(id: string): void {
    const now = Date.now()
    const last = this.#aliveWritten.get(id) ?? 0
    if (now - last < ALIVE_WRITE_MS) return
    if (this.#aliveWritten.size > 10_000) this.#aliveWritten.clear()
    this.#aliveWritten.set(id, now)
    this.#repo.markAlive(id, new Date(now).toISOString()).catch(() => this.#aliveWritten.delete(id))
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
    if (fromFlow && method?.oauth) return this.#identified(connector, input.credentials as Credentials)
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
    return this.#identified(connector, credentials)
  }

  /** The credentials with what the identity call said to remember, and the account. */
  async #identified(connector: ConnectorDefinition, given: Credentials) {
    const { remember, ...identity } = await this.#identify(connector, given)
    return { credentials: remember ? { ...given, ...remember } : given, identity }
  }

  async #identify(connector: ConnectorDefinition, credentials: Credentials) {
    // Paced: the identity call spends the same per-token budget as the token's steps and polls.
    const http = this.#clients.create({ connector, credentials, paced: true, storedConnection: false })
    try {
      return await connector.identify(http, credentials)
    } catch (err) {
      // A refused address (EGRESS_REFUSED, 403 too) is not a refused credential: it is passed on as it is.
      if (
        err instanceof PatchbayError &&
        err.code !== 'EGRESS_REFUSED' &&
        (err.code === 'INVALID_CREDENTIALS' || err.status === 403)
      )
        throw new PatchbayError(
          'INVALID_CREDENTIALS',
          `${connector.name} refused the credentials: ${err.message.replace(/\.+$/, '')}. Nothing was stored.`,
          {
            hint: 'Check the credentials (and that they have not expired or been revoked), then try again.',
            upstream: err.upstream,
          },
        )
      throw err
    }
  }
}

function requiredId(id: string | null | undefined, connector: ConnectorDefinition, user: string): string {
  if (!id)
    throw new PatchbayError('CONNECTION_REQUIRED', `${capitalized(user)} needs a connectionId.`, {
      hint: `List ${connector.name} connections with GET /v1/connections?connector=${connector.id}.`,
    })
  return id
}

/** The connection, refused unless it is of `connector` and has not lapsed. */
function usableOrRefused(
  loaded: LoadedConnection,
  connector: ConnectorDefinition,
  user: string,
): LoadedConnection {
  if (loaded.row.connector !== connector.id) throw connectorMismatch(loaded.row, connector, user)
  if (loaded.row.status === 'lapsed')
    throw new PatchbayError(
      'CONNECTION_LAPSED',
      `Connection ${loaded.row.id} (${loaded.row.account_name}) has lapsed: ${loaded.row.status_reason ?? 'the upstream refused its credentials'}.`,
      {
        hint: `Reconnect it (the Reconnect button on the Connections page, or POST /v1/connections/${loaded.row.id}/reconnect), or disconnect and connect again.`,
      },
    )
  return loaded
}

export const connectionNotFound = (id: string) =>
  new PatchbayError('CONNECTION_NOT_FOUND', `There is no connection "${id}" in this workspace.`, {
    hint: 'List connections with GET /v1/connections.',
  })

/** A connection of another connector than `user` needs (also for checks of saved tools). */
export function connectorMismatch(
  connection: { id: string; connector: string },
  connector: ConnectorDefinition,
  user: string,
  opts: { at?: string } = {},
): PatchbayError {
  return new PatchbayError(
    'CONNECTION_CONNECTOR_MISMATCH',
    `${opts.at ? `${opts.at}: ` : ''}Connection ${connection.id} is a ${connection.connector} connection; ${user} needs a ${connector.id} connection.`,
    { hint: `List ${connector.name} connections with GET /v1/connections?connector=${connector.id}.` },
  )
}

const capitalized = (s: string) => s.charAt(0).toUpperCase() + s.slice(1)
