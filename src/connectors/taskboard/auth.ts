// The task-board's two ways in: an API key plus token (server-to-server), and OAuth 1.0a for
// user-facing connections (request token → the task-board's login-and-approve page → access token).
// Either way the connection ends up with the same credentials: key, token and the app secret that
// signs webhook deliveries.
import { z } from 'zod'
import type { AuthMethod, Credentials, OAuthContext, OutgoingRequest } from '../../kit/define.ts'
import { PatchbayError } from '../../kit/errors.ts'
import { oauth1AuthorizationHeader, signOAuth1 } from '../../kit/oauth1.ts'

/** What Patchbay asks for: read and write access to boards, lists and cards (the spec's permissions). */
const SCOPE = 'read,write'

export const apiKeyToken: AuthMethod = {
  id: 'api_key_token',
  name: 'API key plus token',
  description:
    'For server-to-server automation and service accounts: an API key from the task-board extension admin page and a token approved on the task-board’s token request page (the dashboard’s “Build the token request address”, or POST /v1/connectors/taskboard/token-url, builds that address).',
  credentials: z.object({
    key: z.string().min(1).describe("The extension's API key."),
    token: z.string().min(1).describe('The token approved for that key.'),
    secret: z
      .string()
      .min(1)
      .optional()
      .describe(
        "The API key's secret, shown beside the key. Needed for instant triggers: it verifies webhook deliveries.",
      ),
  }),
  tokenPage: {
    input: z.object({
      key: z
        .string()
        .regex(/^[0-9A-Za-z]{16,128}$/, 'must be an API key: letters and digits, as shown on the admin page')
        .describe('The API key from the extension admin page.'),
      name: z
        .string()
        .min(1)
        .max(100)
        .default('Patchbay')
        .describe('A label the approval page shows (and the token keeps), e.g. "Patchbay automation".'),
      expiration: z
        .enum(['1hour', '1day', '30days', 'never'])
        .default('never')
        .describe('How long the token lasts; "never" gives a token that does not expire (the default).'),
      scope: z
        .enum(['read,write', 'read,write,account'])
        .default(SCOPE)
        .describe('read,write (boards, lists and cards); add account to let it mark notifications read.'),
    }),
    url: (webUrl, input: { key: string; name: string; expiration: string; scope: string }) =>
      `${webUrl.replace(/\/$/, '')}/1/authorize?expiration=${input.expiration}&name=${encodeURIComponent(input.name)}&scope=${input.scope}&response_type=token&key=${encodeURIComponent(input.key)}`,
  },
}

/** Form-encoded answers of the OAuth endpoints (`oauth_token=…&oauth_token_secret=…`). */
function formAnswer(data: unknown): URLSearchParams {
  return new URLSearchParams(typeof data === 'string' ? data : '')
}

/** A signed POST to one of the OAuth endpoints below the task-board's web address. */
async function signedPost(
  ctx: OAuthContext,
  path: string,
  keys: { token?: string; tokenSecret?: string },
  oauth: Record<string, string>,
): Promise<URLSearchParams> {
  const url = `${ctx.webUrl.replace(/\/$/, '')}${path}`
  const signed = signOAuth1(
    { method: 'POST', url, oauth },
    { consumerKey: ctx.app.clientId, consumerSecret: ctx.app.clientSecret, ...keys },
  )
  try {
    const res = await ctx.web.request({
      method: 'POST',
      path,
      headers: { authorization: oauth1AuthorizationHeader(signed) },
    })
    return formAnswer(res.data)
  } catch (err) {
    if (!(err instanceof PatchbayError)) throw err
    throw new PatchbayError('OAUTH_FAILED', `The task-board refused the sign-in at ${path}: ${err.message}`, {
      hint:
        err.upstream?.status === 401 && /invalid key|signature/.test(err.upstream.body ?? '')
          ? "Check Patchbay's task-board OAuth app (PATCHBAY_TASKBOARD_CLIENT_ID and _CLIENT_SECRET)."
          : 'Start the sign-in again.',
      upstream: err.upstream,
    })
  }
}

export const oauth1: AuthMethod = {
  id: 'oauth1',
  name: 'OAuth (sign in with the task-board)',
  description:
    'For user-facing connections: the user is sent to the task-board, logs in, approves read and write access to boards, lists and cards, and comes back with the connection active (POST /v1/connections/oauth/start).',
  oauth: {
    start: async (ctx, req) => {
      // The state rides on the callback address; the task-board adds oauth_token and oauth_verifier.
      const callback = new URL(req.callbackUrl)
      callback.searchParams.set('state', req.state)
      const answer = await signedPost(
        ctx,
        '/1/OAuthGetRequestToken',
        {},
        { oauth_callback: callback.toString() },
      )
      const requestToken = answer.get('oauth_token')
      const requestTokenSecret = answer.get('oauth_token_secret')
      if (!requestToken || !requestTokenSecret || answer.get('oauth_callback_confirmed') !== 'true')
        throw new PatchbayError('OAUTH_FAILED', 'The task-board gave no request token.', {
          hint: 'Try again later.',
        })
      const authorize = new URL(`${ctx.webUrl.replace(/\/$/, '')}/1/OAuthAuthorizeToken`)
      authorize.searchParams.set('oauth_token', requestToken)
      authorize.searchParams.set('name', 'Patchbay')
      authorize.searchParams.set('scope', SCOPE)
      authorize.searchParams.set('expiration', 'never')
      return { authorizeUrl: authorize.toString(), pending: { requestToken, requestTokenSecret } }
    },
    finish: async (ctx, req): Promise<Credentials> => {
      const { query, pending } = req
      if (query.oauth_problem)
        throw new PatchbayError(
          'OAUTH_DENIED',
          query.oauth_problem === 'user_refused'
            ? 'Access was declined on the task-board, so nothing was connected.'
            : `The task-board ended the sign-in: ${query.oauth_problem}.`,
          { hint: 'Start the sign-in again and approve the requested access.' },
        )
      if (!pending?.requestToken)
        throw new PatchbayError(
          'OAUTH_STATE_INVALID',
          'This sign-in is not known here (it was started elsewhere, or Patchbay restarted since).',
          {
            hint: 'Start the sign-in again.',
          },
        )
      // The state and the request token were issued together; an answer for another request token is refused.
      if (query.oauth_token !== pending.requestToken)
        throw new PatchbayError(
          'OAUTH_STATE_INVALID',
          'The answer belongs to another sign-in than the one this state started.',
          {
            hint: 'Start the sign-in again.',
          },
        )
      if (!query.oauth_verifier)
        throw new PatchbayError('OAUTH_FAILED', 'The task-board sent no verifier back.', {
          hint: 'Start the sign-in again.',
          status: 400,
        })
      const answer = await signedPost(
        ctx,
        '/1/OAuthGetAccessToken',
        { token: pending.requestToken, tokenSecret: pending.requestTokenSecret },
        { oauth_verifier: query.oauth_verifier },
      )
      const token = answer.get('oauth_token')
      if (!token)
        throw new PatchbayError('OAUTH_FAILED', 'The task-board gave no access token.', {
          hint: 'Start the sign-in again.',
        })
      // The access token is used like any token; the app secret verifies the webhooks it makes.
      return { key: ctx.app.clientId, token, secret: ctx.app.clientSecret }
    },
  },
}

// Credentials travel in the Authorization header, never in the query string, so they cannot
// leak through logged URLs.
export function authorizeTaskboard(req: OutgoingRequest, credentials: Record<string, string>): void {
  // Requests made without a connection (the OAuth flow's own, signed ones) keep their header.
  if (!credentials.key) return
  req.headers.authorization = credentials.token
    ? `OAuth oauth_consumer_key="${credentials.key}", oauth_token="${credentials.token}"`
    : `OAuth oauth_consumer_key="${credentials.key}"`
  // The one path that names the token itself (listing the token's webhooks).
  if (req.path.includes('{token}'))
    req.path = req.path.replace('{token}', encodeURIComponent(credentials.token))
}
