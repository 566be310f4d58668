// The OAuth 2 authorization-code web flow as data: a connector names its authorize and token
// pages, the scopes it asks for and how a token answer becomes credentials; the engine runs the
// rest (engine/oauth-flows.ts). Token answers that report errors with a 200 (as some upstreams
// do) are read like refusals.
import type { Credentials, OAuthFlow } from './define.ts'
import { PatchbayError } from './errors.ts'

export interface OAuth2WebFlowSpec {
  /** Path of the authorize page below the upstream's web address: `/login/oauth/authorize`. */
  authorizePath: string
  /** Path of the code-for-token exchange below the web address: `/login/oauth/access_token`. */
  tokenPath: string
  /** The permissions asked for, as the upstream writes them (`repo workflow`). */
  scopes: string
  /** Extra authorize parameters (`allow_signup=false` …). */
  authorizeParams?: Record<string, string>
  /** The token answer (JSON) → the connection's credentials. */
  credentials: (token: { access_token: string; token_type?: string; scope?: string }) => Credentials
}

export function oauth2WebFlow(spec: OAuth2WebFlowSpec): OAuthFlow {
  return {
    start: async (ctx, req) => {
      const url = new URL(`${ctx.webUrl.replace(/\/$/, '')}${spec.authorizePath}`)
      url.searchParams.set('client_id', ctx.app.clientId)
      url.searchParams.set('redirect_uri', req.callbackUrl)
      url.searchParams.set('scope', spec.scopes)
      url.searchParams.set('state', req.state)
      url.searchParams.set('response_type', 'code')
      for (const [k, v] of Object.entries(spec.authorizeParams ?? {})) url.searchParams.set(k, v)
      return { authorizeUrl: url.toString() }
    },
    finish: async (ctx, req) => {
      const { query } = req
      if (query.error) {
        if (query.error === 'access_denied')
          throw new PatchbayError(
            'OAUTH_DENIED',
            'The access request was declined at the upstream, so nothing was connected.',
          )
        throw new PatchbayError(
          'OAUTH_FAILED',
          `The upstream ended the sign-in with "${query.error}"${query.error_description ? `: ${query.error_description}` : ''}.`,
          { hint: 'Start the sign-in again and approve the requested access.', status: 400 },
        )
      }
      if (!query.code)
        throw new PatchbayError('OAUTH_FAILED', 'The upstream sent no authorization code back.', {
          hint: 'Start the sign-in again.',
          status: 400,
        })
      const res = await ctx.web.request<Record<string, string>>({
        method: 'POST',
        path: spec.tokenPath,
        headers: { accept: 'application/json' },
        body: {
          client_id: ctx.app.clientId,
          client_secret: ctx.app.clientSecret,
          code: query.code,
          redirect_uri: req.callbackUrl,
          grant_type: 'authorization_code',
        },
        // One code, one exchange: a repeated POST could only fail.
        idempotent: false,
      })
      const body = res.data ?? {}
      if (typeof body !== 'object' || body.error || !body.access_token)
        throw new PatchbayError(
          'OAUTH_TOKEN_EXCHANGE_FAILED',
          `The upstream refused to exchange the authorization code for a token: ${
            typeof body === 'object'
              ? `${body.error ?? 'no token in the answer'}${body.error_description ? ` (${body.error_description})` : ''}`
              : 'unreadable answer'
          }.`,
          {
            hint:
              body?.error === 'incorrect_client_credentials'
                ? "Check Patchbay's OAuth app client id and secret in the configuration."
                : 'Start the sign-in again (a code is valid once, for a few minutes).',
          },
        )
      return spec.credentials(body as { access_token: string; token_type?: string; scope?: string })
    },
  }
}
