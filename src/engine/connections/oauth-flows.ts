// Sign-in through the upstream's web pages (OAuth), for every connector that declares a flow
// (AuthMethod.oauth). Start: a sealed state (AES-GCM through the vault: workspace, connector,
// mode, return address, the connection being reconnected, expiry) and the upstream's authorize
// address. Callback: the state is opened (a forged or altered one does not open), checked for
// its connector, expiry and single use; the connector turns the answer into credentials; the
// account is identified and the connection stored — or, for a reconnect, refreshed in place.
import { randomBytes } from 'node:crypto'
import type { AuthMethod, ConnectorDefinition, OAuthContext } from '../../kit/define.ts'
import { neverReachable } from '../../kit/egress.ts'
import { PatchbayError } from '../../kit/errors.ts'
import type { ConnectSessions } from '../../store/end-users.ts'
import type { OAuthFlowRows } from '../../store/oauth-flows.ts'
import type { Vault } from '../../store/vault.ts'
import type { Caller } from '../access/caller.ts'
import type { PublicAddress } from '../public-address.ts'
import type { Registry } from '../registry.ts'
import type { UpstreamClients } from '../upstream/upstream-clients.ts'
import type { ConnectionService, ConnectionView } from './connection-service.ts'

export type OAuthMode = 'redirect' | 'popup'

export interface OAuthApp {
  clientId: string
  clientSecret: string
}

export interface OAuthStartRequest {
  connector: string
  /** popup: the callback page hands the result to its opener and closes; redirect: back to returnTo. */
  mode?: OAuthMode
  /** Where the browser goes afterwards (redirect mode); in popup mode, the opener's page (its origin gets the message). */
  returnTo?: string
  /** Reconnect this connection in place instead of creating one. */
  connectionId?: string
  /**
   * Make a second connection even when the account already has one of this connector and method
   * (otherwise the sign-in reconnects that one in place).
   */
  second?: boolean
  /** Which of the connector's sign-in methods; the first with a flow by default. */
  authMethod?: string
  /** The end user the connection is for (a connect session's). */
  endUserId?: string
  /** The connect session it is made through: spent when the connection is made (single use). */
  connectSessionId?: string
}

export interface OAuthStarted {
  authorizeUrl: string
  state: string
  expiresAt: string
}

/** What the callback page needs to answer the browser. */
export interface OAuthOutcome {
  mode: OAuthMode
  returnTo: string | null
  /** The origin the pop-up's message is addressed to. */
  messageOrigin: string
  connector: string
  connection?: ConnectionView
  reconnected?: boolean
  error?: PatchbayError
}

interface SealedState {
  v: 1
  ws: string
  c: string
  a: string
  m: OAuthMode
  r?: string
  id?: string
  /** A second connection was asked for. */
  s?: true
  /** The end user the connection is for. */
  e?: string
  /** The connect session it is made through. */
  cs?: string
  n: string
  exp: number
}

export const OAUTH_STATE_TTL_MS = 10 * 60 * 1000

export class OAuthFlows {
  #registry: Registry
  #connections: ConnectionService
  #clients: UpstreamClients
  #vault: Vault
  #apps: Record<string, OAuthApp | undefined>
  #webUrls: Record<string, string | undefined>
  #address: PublicAddress
  /** How long a started sign-in may take (tests shorten it). */
  stateTtlMs = OAUTH_STATE_TTL_MS
  /** Flows under way, in the store (any instance completes them, once), by the state's nonce. */
  #flows: OAuthFlowRows
  #sessions: ConnectSessions

  constructor(deps: {
    /** Connect sessions a sign-in was started through (spent when it completes). */
    sessions: ConnectSessions
    registry: Registry
    connections: ConnectionService
    clients: UpstreamClients
    vault: Vault
    flows: OAuthFlowRows
    apps?: Record<string, OAuthApp | undefined>
    webUrls?: Record<string, string | undefined>
    /** Where the upstream sends the browser back (the callback address). */
    address: PublicAddress
  }) {
    this.#registry = deps.registry
    this.#connections = deps.connections
    this.#clients = deps.clients
    this.#vault = deps.vault
    this.#flows = deps.flows
    this.#sessions = deps.sessions
    this.#apps = deps.apps ?? {}
    this.#webUrls = deps.webUrls ?? {}
    this.#address = deps.address
  }

  callbackUrl(connector: string): string {
    return this.#address.of(`/v1/oauth/callback/${connector}`)
  }

  /** Whether the connector can be signed into through its web pages here (a flow and an app). */
  available(connectorId: string): boolean {
    const connector = this.#registry.connector(connectorId)
    return Boolean(connector?.auth.some((a) => a.oauth) && this.#apps[connectorId])
  }

  async start(caller: Pick<Caller, 'workspaceId'>, req: OAuthStartRequest): Promise<OAuthStarted> {
    const connector = this.#registry.connector(req.connector)
    if (!connector)
      throw new PatchbayError('UNKNOWN_CONNECTOR', `There is no connector "${req.connector}".`, {
        hint: `Use one of: ${this.#registry.connectors.map((c) => c.id).join(', ')}.`,
      })
    const method = this.#method(connector, req.authMethod)
    const mode = req.mode ?? 'redirect'
    const returnTo = req.returnTo === undefined ? undefined : checkReturnTo(req.returnTo)
    if (req.connectionId) {
      const existing = await this.#connections.get(caller.workspaceId, req.connectionId)
      if (existing.connector !== connector.id)
        throw new PatchbayError(
          'CONNECTION_CONNECTOR_MISMATCH',
          `Connection ${existing.id} is a ${existing.connector} connection, not ${connector.id}.`,
          { hint: `Reconnect it with connector "${existing.connector}".` },
        )
    }
    const ctx = this.#context(connector)
    const exp = Date.now() + this.stateTtlMs
    const sealed: SealedState = {
      v: 1,
      ws: caller.workspaceId,
      c: connector.id,
      a: method.id,
      m: mode,
      r: returnTo,
      id: req.connectionId,
      ...(req.second ? { s: true } : {}),
      ...(req.endUserId !== undefined ? { e: req.endUserId } : {}),
      ...(req.connectSessionId !== undefined ? { cs: req.connectSessionId } : {}),
      n: randomBytes(16).toString('base64url'),
      exp,
    }
    const state = this.#seal(sealed)
    const started = await method.oauth!.start(ctx, { callbackUrl: this.callbackUrl(connector.id), state })
    // What the flow keeps until the callback (an OAuth 1.0a request-token secret) goes to the
    // store, sealed, keyed by the state's nonce: the callback may reach another instance.
    await this.#flows.insert({
      state: sealed.n,
      connector: connector.id,
      data: this.#vault.seal(started.pending ?? {}),
      expires_at: new Date(exp).toISOString(),
    })
    const authorizeUrl = started.authorizeUrl
    return { authorizeUrl, state, expiresAt: new Date(exp).toISOString() }
  }

  /** The callback: never throws; the outcome says what to show the browser. */
  async complete(connectorId: string, query: Record<string, string>): Promise<OAuthOutcome> {
    const opened = this.#open(query.state)
    const base: OAuthOutcome = {
      mode: opened?.m ?? 'popup',
      returnTo: opened?.r ?? null,
      messageOrigin: this.#messageOrigin(opened?.r),
      connector: connectorId,
    }
    try {
      if (!opened)
        throw new PatchbayError(
          'OAUTH_STATE_INVALID',
          'The sign-in could not be matched to one Patchbay started (the state is missing or was altered).',
          { hint: 'Start the sign-in again from Patchbay.' },
        )
      if (opened.c !== connectorId)
        throw new PatchbayError('OAUTH_STATE_INVALID', 'The sign-in was started for another connector.', {
          hint: 'Start the sign-in again from Patchbay.',
        })
      if (Date.now() > opened.exp)
        throw new PatchbayError('OAUTH_STATE_EXPIRED', 'The sign-in took longer than 10 minutes.', {
          hint: 'Start the sign-in again.',
        })
      // Taken once across all instances: a second callback with this state finds nothing.
      const flow = await this.#flows.take(opened.n)
      if (!flow)
        throw new PatchbayError('OAUTH_STATE_USED', 'This sign-in has already been completed.', {
          hint: 'Start a new sign-in to connect again.',
        })
      const connector = this.#registry.connector(connectorId)!
      const method = this.#method(connector, opened.a)
      const credentials = await method.oauth!.finish(this.#context(connector), {
        callbackUrl: this.callbackUrl(connector.id),
        state: query.state,
        query,
        pending: this.#vault.open<Record<string, string>>(flow.data),
      })
      if (opened.id) {
        const connection = await this.#connections.reconnectVerified(opened.ws, opened.id, {
          authMethod: method.id,
          credentials,
        })
        return { ...base, connection, reconnected: true }
      }
      // A connect session connects once: spent before the connection is stored, given back if none is.
      if (opened.cs && !(await this.#sessions.spend(opened.cs, 'pending')))
        throw new PatchbayError(
          'CONNECT_SESSION_USED',
          'This connect link has already been used to connect an account.',
          {
            hint: 'Each link connects one account: ask the app that sent you here for a new one.',
          },
        )
      try {
        const { reconnected, ...connection } = await this.#connections.createVerified(opened.ws, {
          connector: connector.id,
          authMethod: method.id,
          credentials,
          second: opened.s === true,
          endUserId: opened.e ?? null,
        })
        if (opened.cs) await this.#sessions.settle(opened.cs, connection.id)
        return { ...base, connection, reconnected }
      } catch (err) {
        if (opened.cs) await this.#sessions.giveBack(opened.cs)
        throw err
      }
    } catch (err) {
      const error =
        err instanceof PatchbayError
          ? err
          : new PatchbayError('OAUTH_FAILED', 'The sign-in could not be completed.', {
              hint: 'Try again; if it persists, check the server log.',
              status: 500,
            })
      return { ...base, error }
    }
  }

  #method(connector: ConnectorDefinition, id: string | undefined): AuthMethod {
    const flows = connector.auth.filter((a) => a.oauth)
    const method = id ? flows.find((a) => a.id === id) : flows[0]
    if (!method)
      throw new PatchbayError(
        'OAUTH_NOT_SUPPORTED',
        id
          ? `The ${connector.name} connector has no sign-in flow "${id}".`
          : `The ${connector.name} connector has no sign-in through its web pages.`,
        {
          hint: flows.length
            ? `Use one of: ${flows.map((f) => f.id).join(', ')}.`
            : `Connect it with credentials instead (POST /v1/connections with one of: ${connector.auth.map((a) => a.id).join(', ')}).`,
        },
      )
    return method
  }

  #context(connector: ConnectorDefinition): OAuthContext {
    const app = this.#apps[connector.id]
    if (!app)
      throw new PatchbayError(
        'OAUTH_NOT_CONFIGURED',
        `Patchbay has no ${connector.name} OAuth app configured, so it cannot send users to sign in.`,
        {
          hint: `Set PATCHBAY_${connector.id.toUpperCase()}_CLIENT_ID and PATCHBAY_${connector.id.toUpperCase()}_CLIENT_SECRET (the app's callback address is ${this.callbackUrl(connector.id)}).`,
        },
      )
    const webUrl = this.#webUrls[connector.id] ?? this.#clients.baseUrl(connector)
    const web = this.#clients.create({
      connector,
      credentials: {},
      paced: false,
      storedConnection: false,
      baseUrl: webUrl,
    })
    return { app, webUrl, web }
  }

  #seal(s: SealedState): string {
    return this.#vault.seal(s)
  }

  #open(state: string | undefined): SealedState | null {
    if (!state || state.length > 8192) return null
    try {
      const s = this.#vault.open<SealedState>(state)
      return s && s.v === 1 && typeof s.ws === 'string' ? s : null
    } catch {
      return null
    }
  }

  #messageOrigin(returnTo: string | undefined): string {
    if (returnTo && /^https?:\/\//i.test(returnTo)) return new URL(returnTo).origin
    return new URL(this.#address.url).origin
  }
}

/** A path on Patchbay (`/dashboard/…`) or an http(s) address; nothing else is followed. */
function checkReturnTo(value: string): string {
  const refuse = (why: string) =>
    new PatchbayError('VALIDATION_FAILED', `Invalid body: returnTo: ${why}`, {
      hint: 'Give a path on Patchbay (/dashboard) or an http(s) address.',
    })
  if (/[\r\n\\]/.test(value)) throw refuse('must not contain line breaks or backslashes')
  if (value.startsWith('/')) {
    if (value.startsWith('//')) throw refuse('must not start with //')
    return value
  }
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw refuse('must be a path starting with / or an http(s) address')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse('must be an http(s) address')
  if (url.username || url.password) throw refuse('must not carry credentials')
  // The browser goes there, not Patchbay: a local app is fine, a metadata address never is.
  const never = neverReachable(url.hostname)
  if (never) throw refuse(`must not point at ${never}`)
  return url.toString()
}
