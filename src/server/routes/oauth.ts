// Sign-in through an upstream's web pages (OAuth) for any connector that declares a flow:
//   POST /v1/connections/oauth/start  → { authorizeUrl, state } (admin key)
//   GET  /v1/oauth/callback/:connector → the upstream sends the browser back here (no key: the
//        sealed state says whose sign-in it is). Redirect mode: 302 to returnTo with connectionId
//        or error. Pop-up mode: a page that posts {type:'patchbay:oauth', connectionId} (or
//        {type:'patchbay:oauth', error, code}) to window.opener and closes.
//   The hosted connect page (/connect, end-users.ts) starts sign-ins for end users through connect links.
import { randomBytes } from 'node:crypto'
import type { FastifyReply } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { OAuthOutcome } from '../../engine/connections/oauth-flows.ts'
import type { Engine } from '../../engine/engine.ts'
import { publicRoute } from '../authenticate.ts'
import { errorResponses } from '../schemas.ts'
import { esc, html, scriptJson } from './html-page.ts'

/** A parameter of the sign-in callback (given twice, the first counts). */
const callbackParam = z.union([z.string(), z.array(z.string())]).optional()

export const oauthRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    app.post(
      '/v1/connections/oauth/start',
      {
        schema: {
          operationId: 'startOAuth',
          tags: ['connections'],
          summary:
            "Start a sign-in through the upstream's pages: open authorizeUrl (in a pop-up for mode popup); the callback stores the connection",
          body: z.object({
            connector: z.string().describe('A connector with a sign-in flow, e.g. codehost.'),
            mode: z
              .enum(['redirect', 'popup'])
              .default('redirect')
              .describe(
                'popup: the callback page posts {type:"patchbay:oauth", connectionId} (or error) to window.opener and closes; redirect: the browser returns to returnTo with ?connectionId= or ?error=.',
              ),
            returnTo: z
              .string()
              .max(2048)
              .optional()
              .describe(
                'redirect mode: where the browser goes afterwards (a path on Patchbay or an http(s) address). popup mode: the page that opens the pop-up; its origin receives the message (default: Patchbay’s own origin).',
              ),
            connectionId: z
              .string()
              .optional()
              .describe('Reconnect this connection in place (same id, same account) instead of adding one.'),
            second: z
              .boolean()
              .optional()
              .describe(
                'Make a second connection even when the account already has one of this connector and method (otherwise the sign-in reconnects that one in place).',
              ),
            authMethod: z
              .string()
              .optional()
              .describe("The connector's sign-in method (default: its first)."),
          }),
          response: {
            200: z.object({
              authorizeUrl: z
                .string()
                .describe('Open this in the browser (pop-up) to sign in and grant access.'),
              state: z
                .string()
                .describe('The sealed state that comes back to the callback (valid 10 minutes).'),
              expiresAt: z.string(),
            }),
            ...errorResponses,
          },
        },
      },
      async (req) => {
        return engine.oauth.start(req.caller, req.body)
      },
    )

    app.get(
      '/v1/oauth/callback/:connector',
      {
        config: publicRoute,
        schema: {
          operationId: 'completeOAuth',
          tags: ['connections'],
          summary:
            'Where the upstream sends the browser after sign-in (no key: the state identifies the sign-in)',
          params: z.object({ connector: z.string() }),
          // What upstreams send back (OAuth 2 and OAuth 1.0a); others pass through to the connector.
          querystring: z.looseObject({
            state: callbackParam.describe('The sealed state of POST /v1/connections/oauth/start.'),
            code: callbackParam.describe('OAuth 2: the authorization code.'),
            error: callbackParam.describe('OAuth 2: why the sign-in ended, e.g. access_denied.'),
            error_description: callbackParam,
            oauth_token: callbackParam.describe('OAuth 1.0a: the request token.'),
            oauth_verifier: callbackParam.describe('OAuth 1.0a: the verifier.'),
          }),
          response: {
            200: {
              description:
                'A page saying whether the account is connected; in a pop-up it posts {type:"patchbay:oauth", connectionId} (or {error, code}) to window.opener and closes. A failed sign-in answers the same page with the error’s status.',
              content: { 'text/html': { schema: z.string() } },
            },
            302: z
              .null()
              .describe(
                'Redirect mode: back to returnTo with ?connectionId=&connector= or ?error=<code>&error_description=',
              ),
            ...errorResponses,
          },
        },
      },
      async (req, reply) => {
        const query: Record<string, string> = {}
        for (const [k, v] of Object.entries(req.query))
          if (typeof v === 'string') query[k] = v
          else if (Array.isArray(v)) query[k] = String(v[0] ?? '')
        const outcome = await engine.oauth.complete(req.params.connector, query)
        if (outcome.error)
          req.log.warn({ connector: outcome.connector, code: outcome.error.code }, 'sign-in failed')
        reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer')
        if (outcome.mode === 'redirect' && outcome.returnTo) return redirectBack(reply, outcome)
        return resultPage(reply, outcome)
      },
    )
  }

function message(o: OAuthOutcome): Record<string, unknown> {
  return o.error
    ? { type: 'patchbay:oauth', connector: o.connector, error: o.error.message, code: o.error.code }
    : {
        type: 'patchbay:oauth',
        connector: o.connector,
        connectionId: o.connection!.id,
        accountName: o.connection!.accountName,
        reconnected: Boolean(o.reconnected),
      }
}

function redirectBack(reply: FastifyReply, o: OAuthOutcome) {
  const base = o.returnTo!.startsWith('/') ? `http://patchbay.invalid${o.returnTo}` : o.returnTo!
  const url = new URL(base)
  if (o.error) {
    url.searchParams.set('error', o.error.code)
    url.searchParams.set('error_description', o.error.message)
  } else {
    url.searchParams.set('connectionId', o.connection!.id)
    url.searchParams.set('connector', o.connector)
  }
  const target = o.returnTo!.startsWith('/') ? `${url.pathname}${url.search}${url.hash}` : url.toString()
  return reply.redirect(target, 302)
}

/** The callback's answer: in a pop-up it hands the result to the opener and closes. */
function resultPage(reply: FastifyReply, o: OAuthOutcome) {
  const nonce = randomBytes(16).toString('base64')
  const text = o.error
    ? `<h1>Not connected</h1><p>${esc(o.error.message)}</p>${o.error.hint ? `<p>${esc(o.error.hint)}</p>` : ''}`
    : `<h1>Connected</h1><p>${esc(o.connection!.accountName)} is ${o.reconnected ? 'reconnected' : 'connected'} (connection <code>${esc(o.connection!.id)}</code>). You can close this window.</p>`
  const script =
    o.mode === 'popup'
      ? `<script nonce="${nonce}">
(function () {
  var message = ${scriptJson(message(o))};
  var origin = ${scriptJson(o.messageOrigin)};
  if (window.opener && !window.opener.closed) {
    window.opener.postMessage(message, origin);
    window.close();
  }
})();
</script>`
      : ''
  return html(
    reply,
    o.error ? o.error.status : 200,
    nonce,
    o.error ? 'Not connected' : 'Connected',
    text + script,
  )
}
