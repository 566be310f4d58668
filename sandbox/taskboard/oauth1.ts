// The OAuth 1.0a three-legged flow: request token (signed with the app's key and secret), the
// login-and-approve page, and the access token (signed again, with the verifier). The access
// token is an ordinary API token with the approved scope and expiration.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, invalidKey, invalidToken, invalidValue } from './errors.ts'
import { approvePage, messagePage, verifierPage } from './html.ts'
import { collectParams, verifySignature } from './oauth1-signature.ts'
import type { Params } from './params.ts'
import type { Deps } from './routes/helpers.ts'
import type { RequestToken, Store } from './store.ts'
import { parseExpiration, parseScopes } from './token-page.ts'

const REQUEST_TOKEN_TTL_MS = 3600_000
const MAX_NONCES = 100_000

function checkSigned(
  s: Store,
  req: FastifyRequest,
  consumerSecret: string,
  tokenSecret: string,
): Record<string, string> {
  const { oauth } = collectParams(req)
  if (!verifySignature(req, consumerSecret, tokenSecret)) throw new ApiError(401, 'invalid signature')
  // A replayed nonce is refused; the check comes after the signature so forgeries cannot burn nonces.
  const nonce = `${oauth.oauth_consumer_key}:${oauth.oauth_nonce}:${oauth.oauth_timestamp}`
  if (!oauth.oauth_nonce || s.usedNonces.has(nonce)) throw new ApiError(401, 'invalid nonce')
  if (s.usedNonces.size >= MAX_NONCES) s.usedNonces.clear()
  s.usedNonces.add(nonce)
  return oauth
}

function formReply(reply: FastifyReply, values: Record<string, string>) {
  return reply.type('application/x-www-form-urlencoded').send(new URLSearchParams(values).toString())
}

function liveRequestToken(s: Store, value: unknown): RequestToken {
  const rt = typeof value === 'string' ? s.requestTokens.get(value) : undefined
  if (!rt || rt.created + REQUEST_TOKEN_TTL_MS <= s.clock.now()) throw invalidToken()
  return rt
}

export function registerOAuth1(app: FastifyInstance, { store: s }: Deps): void {
  const getRequestToken = async (req: FastifyRequest, reply: FastifyReply) => {
    const { oauth } = collectParams(req)
    const consumer = s.apps.get(oauth.oauth_consumer_key ?? '')
    if (!consumer) throw invalidKey()
    checkSigned(s, req, consumer.secret, '')
    const callback = oauth.oauth_callback
    if (!callback) throw invalidValue('oauth_callback')
    if (callback !== 'oob') {
      try {
        new URL(callback)
      } catch {
        throw invalidValue('oauth_callback')
      }
    }
    const rt: RequestToken = {
      token: s.rng.hex(32),
      secret: s.rng.hex(32),
      key: consumer.key,
      callback,
      verifier: null,
      idMember: null,
      scopes: ['read'],
      expiration: '30days',
      name: consumer.name,
      created: s.clock.now(),
    }
    s.requestTokens.set(rt.token, rt)
    return formReply(reply, {
      oauth_token: rt.token,
      oauth_token_secret: rt.secret,
      oauth_callback_confirmed: 'true',
    })
  }
  app.post('/1/OAuthGetRequestToken', getRequestToken)
  app.get('/1/OAuthGetRequestToken', getRequestToken)

  const render = (reply: FastifyReply, p: Params, status = 200, error?: string) => {
    const rt = liveRequestToken(s, p.oauth_token)
    const scopes = parseScopes(p.scope)
    const expiration = parseExpiration(p.expiration)
    const name = typeof p.name === 'string' && p.name !== '' ? p.name : rt.name
    const hidden: Record<string, string> = { oauth_token: rt.token }
    for (const k of ['name', 'scope', 'expiration']) if (typeof p[k] === 'string') hidden[k] = p[k] as string
    return reply
      .code(status)
      .type('text/html; charset=utf-8')
      .send(
        approvePage({ appName: name, scopes, expiration, action: '/1/OAuthAuthorizeToken', hidden, error }),
      )
  }

  app.get('/1/OAuthAuthorizeToken', async (req, reply) => render(reply, req.query as Params))

  app.post('/1/OAuthAuthorizeToken', async (req, reply) => {
    const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Params
    const p = { ...(req.query as Params), ...body }
    const rt = liveRequestToken(s, p.oauth_token)
    const scopes = parseScopes(p.scope)
    const expiration = parseExpiration(p.expiration)
    const callback = (params: Record<string, string>) => {
      const u = new URL(rt.callback)
      for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v)
      return u.toString()
    }
    if (p.approve === 'Deny') {
      s.requestTokens.delete(rt.token)
      if (rt.callback === 'oob')
        return reply
          .type('text/html; charset=utf-8')
          .send(messagePage('Access denied', 'No access was given.'))
      return reply.redirect(callback({ oauth_token: rt.token, oauth_problem: 'user_refused' }), 302)
    }
    const member = typeof p.username === 'string' ? s.findMember(p.username) : undefined
    if (!member || member.password !== p.password)
      return render(reply, p, 401, 'Invalid username or password')
    rt.verifier = s.rng.hex(32)
    rt.idMember = member.id
    rt.scopes = scopes
    rt.expiration = expiration
    if (typeof p.name === 'string' && p.name !== '') rt.name = p.name
    if (rt.callback === 'oob') return reply.type('text/html; charset=utf-8').send(verifierPage(rt.verifier))
    return reply.redirect(callback({ oauth_token: rt.token, oauth_verifier: rt.verifier }), 302)
  })

  const getAccessToken = async (req: FastifyRequest, reply: FastifyReply) => {
    const { oauth } = collectParams(req)
    const consumer = s.apps.get(oauth.oauth_consumer_key ?? '')
    if (!consumer) throw invalidKey()
    const rt = liveRequestToken(s, oauth.oauth_token)
    if (rt.key !== consumer.key) throw invalidToken()
    checkSigned(s, req, consumer.secret, rt.secret)
    if (!rt.verifier || !rt.idMember || oauth.oauth_verifier !== rt.verifier)
      throw new ApiError(401, 'invalid verifier')
    s.requestTokens.delete(rt.token)
    const token = s.addToken(consumer.key, rt.idMember, rt.scopes, rt.expiration, rt.name, {
      secret: s.rng.hex(32),
    })
    return formReply(reply, { oauth_token: token.value, oauth_token_secret: token.secret! })
  }
  app.post('/1/OAuthGetAccessToken', getAccessToken)
  app.get('/1/OAuthGetAccessToken', getAccessToken)
}
