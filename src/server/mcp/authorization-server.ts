// Patchbay as the OAuth 2.1 authorization server of its own /mcp (the MCP authorization
// specification), built on oidc-provider (panva; an OpenID-certified implementation) rather than
// on token code of our own:
//   - authorization server metadata (RFC 8414) at /.well-known/oauth-authorization-server;
//   - dynamic client registration (RFC 7591) at /oauth/register: redirect URIs https or loopback only;
//   - the authorization code grant with PKCE, S256 only, required of every client;
//   - resource indicators (RFC 8707): the one resource is this Patchbay's /mcp; access tokens are
//     opaque, short-lived (ACCESS_TOKEN_TTL_S), with that audience, bound to one grant;
//   - refresh tokens, rotated at each use.
// Its records (clients, grants, codes, tokens, interactions) and keys live in the store, sealed by
// the vault (store/mcp-grants.ts), so every instance shares them. The sign-in and consent step is
// our own page (mcp/consent-page.ts): a person of the workspace signs in (the dashboard's session),
// chooses the agent to grant and sees what it may touch; the grant is recorded by the engine
// (engine/mcp-grants), and an access token of it acts at /mcp as that agent, like its agent key.
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { Provider } from 'oidc-provider'
import type { Caller } from '../../engine/access/caller.ts'
import type { Engine } from '../../engine/engine.ts'
import { esc } from '../routes/html-page.ts'
import { MCP_SCOPE, mcpResource } from './protected-resource.ts'

/** Access tokens live ten minutes; clients refresh them (the refresh token rotates each time). */
export const ACCESS_TOKEN_TTL_S = 600
const REFRESH_TOKEN_TTL_S = 30 * 24 * 3600
/** The sign-in and consent step may take this long. */
const INTERACTION_TTL_S = 600

/** Where oidc-provider's endpoints are (all under /oauth, so one route mounts them). */
const ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  jwks: '/oauth/jwks',
  revocation: '/oauth/revoke',
  introspection: '/oauth/introspect',
  userinfo: '/oauth/userinfo',
  end_session: '/oauth/end-session',
  pushed_authorization_request: '/oauth/par',
  code_verification: '/oauth/device',
  device_authorization: '/oauth/device/auth',
  backchannel_authentication: '/oauth/backchannel',
  challenge: '/oauth/challenge',
  credential: '/oauth/credential',
}

const LOOPBACKS = new Set(['localhost', '127.0.0.1', '[::1]'])

/** Why a redirect URI is refused at registration, or null: https, or http on a loopback address. */
export function redirectUriProblem(uri: unknown): string | null {
  const parsed = typeof uri === 'string' ? URL.parse(uri) : null
  if (!parsed) return 'redirect_uris must be absolute URLs'
  if (parsed.protocol === 'https:') return null
  if (parsed.protocol === 'http:' && LOOPBACKS.has(parsed.hostname)) return null
  return `redirect_uris must use https, or http on a loopback address (127.0.0.1, [::1], localhost); ${parsed.protocol}//${parsed.host} is neither`
}

/** The authorization server of one Patchbay: made at the first request (it needs the public address). */
export class McpAuthorizationServer {
  #engine: Engine
  #provider: Promise<Provider> | undefined
  #handler: Promise<(req: FastifyRequest['raw'], res: FastifyReply['raw']) => unknown> | undefined
  #log: FastifyRequest['log'] | undefined

  constructor(engine: Engine) {
    this.#engine = engine
  }

  provider(log?: FastifyRequest['log']): Promise<Provider> {
    this.#log ??= log
    this.#provider ??= this.#make().catch((err) => {
      this.#provider = undefined
      throw err
    })
    return this.#provider
  }

  /** oidc-provider's own HTTP handler (a Koa app), for the routes it serves. */
  async handle(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    this.#handler ??= this.provider(req.log).then((p) => p.callback())
    const handler = await this.#handler
    for (const [name, value] of Object.entries(reply.getHeaders()))
      if (value !== undefined) reply.raw.setHeader(name, value as string | number | string[])
    reply.hijack()
    await handler(req.raw, reply.raw)
  }

  /**
   * The caller an access token acts as at /mcp (its grant's agent), undefined when it is no access
   * token of this server (then it may still be an API key), or a PatchbayError saying why a token
   * of ours is refused (its grant revoked, another resource).
   */
  async callerOfToken(token: string, log?: FastifyRequest['log']): Promise<Caller | undefined> {
    const provider = await this.provider(log)
    const found = await provider.AccessToken.find(token)
    if (!found?.grantId) return undefined
    return this.#engine.mcpGrants.callerOf(found.grantId, {
      audience: found.aud,
      resource: mcpResource(this.#engine),
    })
  }

  async #make(): Promise<Provider> {
    const engine = this.#engine
    const { default: ProviderClass, errors } = await import('oidc-provider')
    const issuer = engine.publicUrl
    const resource = mcpResource(engine)
    // Made by the first instance that needs them, sealed in the store, the same for every instance.
    const jwks = await engine.oauthProviderKeys.getOrCreate('jwks', () => {
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
      return {
        keys: [{ ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), use: 'sig', alg: 'RS256' }],
      }
    })
    const cookieKeys = await engine.oauthProviderKeys.getOrCreate('cookies', () => [
      randomBytes(32).toString('base64url'),
    ])
    const records = engine.mcpGrants.records
    const provider = new ProviderClass(issuer, {
      adapter: (name: string) => records.adapter(name),
      // biome-ignore lint/suspicious/noExplicitAny: the JWK shape is node:crypto's export
      jwks: jwks as any,
      cookies: { keys: cookieKeys },
      // Accounts are Patchbay's people: the grant names the person who gave it.
      findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
      // `mcp` is /mcp's resource scope (resourceIndicators below); listed so clients may register with it.
      scopes: ['openid', 'offline_access', MCP_SCOPE],
      claims: { openid: ['sub'] },
      responseTypes: ['code'],
      pkce: { required: () => true },
      features: {
        devInteractions: { enabled: false },
        registration: { enabled: true },
        revocation: { enabled: true },
        userinfo: { enabled: false },
        rpInitiatedLogout: { enabled: false },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => resource,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx, indicator) => {
            if (indicator !== resource)
              throw new errors.InvalidTarget(`this server grants access to ${resource} only`)
            return {
              scope: MCP_SCOPE,
              audience: resource,
              accessTokenTTL: ACCESS_TOKEN_TTL_S,
              accessTokenFormat: 'opaque',
            }
          },
        },
      },
      // A client registering gets refresh tokens whenever it may use the grant type.
      issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
      rotateRefreshToken: true,
      // Tokens live by their grant (revoked in Patchbay), not by the browser's sign-in session.
      expiresWithSession: async () => false,
      // Every authorization is consented to on our page (the agent is chosen each time).
      loadExistingGrant: async (ctx) => {
        const grantId = ctx.oidc.result?.consent?.grantId
        return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined
      },
      ttl: {
        AccessToken: ACCESS_TOKEN_TTL_S,
        AuthorizationCode: 60,
        RefreshToken: REFRESH_TOKEN_TTL_S,
        Interaction: INTERACTION_TTL_S,
        Session: 24 * 3600,
        Grant: REFRESH_TOKEN_TTL_S,
        IdToken: 3600,
      },
      routes: ROUTES,
      interactions: { url: (_ctx, interaction) => `/oauth/interaction/${interaction.uid}` },
      // Redirect URIs: https, or http on loopback (RFC 8252 native clients), nothing else.
      extraClientMetadata: {
        properties: ['redirect_uris'],
        validator: (_ctx, key, value) => {
          if (key !== 'redirect_uris') return
          for (const uri of (value as unknown[] | undefined) ?? []) {
            const problem = redirectUriProblem(uri)
            if (problem) throw new errors.InvalidClientMetadata(problem)
          }
        },
      },
      // A browser-facing error (an unknown client, a redirect URI not registered): our words, escaped.
      renderError: async (ctx, out) => {
        ctx.type = 'html'
        ctx.body = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Sign-in failed · Patchbay</title></head><body style="font:16px system-ui,sans-serif;margin:3rem auto;max-width:34rem"><h1>The MCP client's sign-in failed</h1><p><strong>${esc(String(out.error))}</strong>: ${esc(String(out.error_description ?? ''))}</p><p>Start again from the MCP client.</p></body></html>`
      },
      clientBasedCORS: (_ctx, origin, client) =>
        client.redirectUris?.some((uri: string) => URL.parse(uri)?.origin === origin) ?? false,
    })
    // Behind https the TLS is ended by a proxy: its X-Forwarded-Proto says the request was secure.
    provider.proxy = issuer.startsWith('https://')
    // A grant revoked through the OAuth revocation endpoint (a refresh token revoked) ends its MCP grant too.
    provider.on('grant.revoked', (_ctx, grantId: string) => {
      engine.mcpGrants.rows
        .get(grantId)
        .then((row) => (row ? engine.mcpGrants.rows.revoke(row.workspace_id, grantId, null) : false))
        .catch((err) => this.#log?.warn({ err }, 'could not mark an MCP grant revoked'))
    })
    // A refused request (a registration with a bad redirect URI, PKCE missing or wrong, another
    // resource, a used or revoked refresh token): logged, and written to the audit log — under no
    // workspace, none is known before a grant (the operator reads them in the store).
    const refused =
      (endpoint: string) =>
      (
        ctx: { ip?: string; get?: (h: string) => string; oidc?: { client?: { clientId?: string } } },
        err: { name?: string; error?: string; error_description?: string },
      ) => {
        const detail = {
          endpoint,
          error: err?.error ?? err?.name ?? null,
          description: err?.error_description ?? null,
          clientId: ctx?.oidc?.client?.clientId ?? null,
        }
        this.#log?.warn(detail, 'the MCP authorization server refused a request')
        engine.audit
          .record({
            workspaceId: null,
            actor: { kind: 'anonymous', id: null },
            action: 'mcp_oauth.refused',
            objectKind: 'mcp_client',
            objectId: detail.clientId,
            outcome: 'refused',
            detail,
            address: ctx?.ip ?? null,
            userAgent: ctx?.get?.('user-agent') || null,
          })
          .catch((e) => this.#log?.warn({ err: e }, 'could not audit a refused OAuth request'))
      }
    provider.on('registration_create.error', refused('registration'))
    provider.on('grant.error', refused('token'))
    provider.on('authorization.error', refused('authorization'))
    provider.on('server_error', (_ctx, err) =>
      this.#log?.error({ err }, 'the MCP authorization server failed a request'),
    )
    return provider
  }
}

/** oidc-provider's endpoints, mounted as they are (it reads its own bodies). */
export const authorizationServerRoutes =
  (server: McpAuthorizationServer): FastifyPluginAsync =>
  async (app) => {
    // The provider parses its bodies itself (form and JSON): the stream is left to it.
    app.removeAllContentTypeParsers()
    app.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined))
    const handle = (req: FastifyRequest, reply: FastifyReply) => server.handle(req, reply)
    const config = { operation: 'oauthAuthorizationServer' }
    app.route({
      method: ['GET', 'POST', 'OPTIONS'],
      url: '/oauth/*',
      schema: { hide: true },
      config,
      handler: handle,
    })
    for (const url of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'])
      app.route({ method: ['GET', 'OPTIONS'], url, schema: { hide: true }, config, handler: handle })
  }
