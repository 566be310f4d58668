// The OAuth web flow: an HTML login-and-approve page, a redirect with a single-use code valid 10
// minutes on the sandbox clock, and the code-for-token exchange with the upstream's error bodies
// (which arrive with status 200). Also the app-authenticated token check and revocation.
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Ctx } from './context.ts'
import { requireUserAgent, sendError } from './http.ts'
import { oauthToken } from './ids.ts'
import type { OAuthApp, Token } from './store.ts'
import { userView } from './views.ts'

const CODE_TTL_MS = 10 * 60 * 1000
const FORM_SECRET = 'codehost-sandbox-form-secret'
const SESSION_COOKIE = 'codehost_session'
const TROUBLESHOOTING =
  'https://docs.codehost.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors'

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

function parseScopes(raw: string | undefined): string[] {
  return [...new Set((raw ?? '').split(/[\s,]+/).filter(Boolean))]
}

function formToken(fields: Record<string, string>): string {
  const text = ['client_id', 'redirect_uri', 'scope', 'state'].map((k) => fields[k] ?? '').join('\n')
  return createHmac('sha256', FORM_SECRET).update(text).digest('base64url')
}

/** The registered callback accepts redirect URIs on the same host and port below its path. */
function redirectAllowed(app: OAuthApp, uri: string): boolean {
  if (app.callbackUrl === null) return true
  try {
    const cb = new URL(app.callbackUrl)
    const u = new URL(uri)
    return cb.protocol === u.protocol && cb.host === u.host && u.pathname.startsWith(cb.pathname)
  } catch {
    return false
  }
}

function withParams(uri: string, params: Record<string, string | undefined>): string {
  const u = new URL(uri)
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') u.searchParams.set(k, v)
  return u.toString()
}

function cookie(req: FastifyRequest, name: string): string | undefined {
  const raw = req.headers.cookie ?? ''
  for (const part of raw.split(';')) {
    const [k, ...v] = part.trim().split('=')
    if (k === name) return decodeURIComponent(v.join('='))
  }
  return undefined
}

function page(title: string, inner: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)} · Codehost</title></head>
<body><main>
${inner}
</main></body></html>`
}

function errorPage(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .send(page('Error', `<h1>${esc(message)}</h1>`))
}

export function registerOAuth(app: FastifyInstance, ctx: Ctx): void {
  const appByClient = (id: string | undefined) => [...ctx.store.apps.values()].find((a) => a.clientId === id)

  const renderAuthorize = (
    req: FastifyRequest,
    reply: FastifyReply,
    fields: Record<string, string>,
    flash?: string,
  ) => {
    const oauthApp = appByClient(fields.client_id)!
    const sessionUser = ctx.store.users.get(ctx.store.sessions.get(cookie(req, SESSION_COOKIE) ?? '') ?? -1)
    const scopes = parseScopes(fields.scope)
    const hidden = ['client_id', 'redirect_uri', 'scope', 'state']
      .map((k) => `<input type="hidden" name="${k}" value="${esc(fields[k] ?? '')}">`)
      .join('\n')
    const login = sessionUser
      ? `<p>Signed in as <strong id="signed-in-as">${esc(sessionUser.login)}</strong></p>`
      : `<label>Username or email address <input type="text" name="login" id="login_field" value="${esc(fields.login ?? '')}" autocomplete="username"></label>
<label>Password <input type="password" name="password" id="password" autocomplete="current-password"></label>`
    const body = `<h1>Authorize ${esc(oauthApp.name)}</h1>
${flash ? `<div class="flash-error" role="alert">${esc(flash)}</div>` : ''}
<p>${esc(oauthApp.name)} wants to access your Codehost account.</p>
<ul id="scopes">${scopes.length ? scopes.map((s) => `<li>${esc(s)}</li>`).join('') : '<li>(no scope) read-only access to public information</li>'}</ul>
<form action="/login/oauth/authorize" method="post" id="authorize-form">
<input type="hidden" name="authenticity_token" value="${formToken(fields)}">
${hidden}
${login}
<button type="submit" name="authorize" value="1" id="js-oauth-authorize-btn">Authorize ${esc(oauthApp.name)}</button>
<button type="submit" name="authorize" value="0" id="js-oauth-deny-btn">Cancel</button>
</form>`
    return reply
      .code(200)
      .header('content-type', 'text/html; charset=utf-8')
      .send(page(`Authorize ${oauthApp.name}`, body))
  }

  /** Checks client and redirect; answers the error itself and returns null when they are wrong. */
  const checkRequest = (reply: FastifyReply, fields: Record<string, string>) => {
    const oauthApp = appByClient(fields.client_id)
    if (!oauthApp) {
      errorPage(reply, 404, 'The client_id is not associated with an OAuth application.')
      return null
    }
    const redirect = fields.redirect_uri || oauthApp.callbackUrl
    if (!redirect) {
      errorPage(reply, 400, 'The redirect_uri parameter is required for this application.')
      return null
    }
    if (!redirectAllowed(oauthApp, redirect)) {
      if (oauthApp.callbackUrl)
        reply.redirect(
          withParams(oauthApp.callbackUrl, {
            error: 'redirect_uri_mismatch',
            error_description:
              'The redirect_uri MUST match the registered callback URL for this application.',
            error_uri: `${TROUBLESHOOTING}#redirect-uri-mismatch`,
            state: fields.state,
          }),
          302,
        )
      else errorPage(reply, 400, 'The redirect_uri is not valid.')
      return null
    }
    try {
      new URL(redirect)
    } catch {
      errorPage(reply, 400, 'The redirect_uri is not a valid URL.')
      return null
    }
    return { oauthApp, redirect }
  }

  app.get('/login/oauth/authorize', async (req, reply) => {
    const fields = Object.fromEntries(
      Object.entries((req.query ?? {}) as Record<string, unknown>).map(([k, v]) => [k, String(v)]),
    )
    if (!checkRequest(reply, fields)) return reply
    return renderAuthorize(req, reply, fields)
  })

  app.post('/login/oauth/authorize', async (req, reply) => {
    const raw = typeof req.body === 'object' && req.body !== null ? (req.body as Record<string, unknown>) : {}
    const fields = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, String(v)]))
    const checked = checkRequest(reply, fields)
    if (!checked) return reply
    const expected = Buffer.from(formToken(fields))
    const given = Buffer.from(fields.authenticity_token ?? '')
    if (expected.length !== given.length || !timingSafeEqual(expected, given))
      return errorPage(reply, 422, 'Your browser did something unexpected. Please try again.')
    const sid = cookie(req, SESSION_COOKIE)
    let user = ctx.store.users.get(ctx.store.sessions.get(sid ?? '') ?? -1)
    if (!user) {
      const login = fields.login ?? ''
      const candidate =
        ctx.store.userByLogin(login) ??
        [...ctx.store.users.values()].find((u) => u.email?.toLowerCase() === login.toLowerCase())
      if (candidate?.type !== 'User' || candidate.password !== fields.password)
        return renderAuthorize(req, reply, fields, 'Incorrect username or password.')
      user = candidate
      const newSid = ctx.store.rng.alnum(32)
      ctx.store.sessions.set(newSid, user.id)
      reply.header('set-cookie', `${SESSION_COOKIE}=${newSid}; Path=/; HttpOnly; SameSite=Lax`)
    }
    if (fields.authorize === '0')
      return reply.redirect(
        withParams(checked.redirect, {
          error: 'access_denied',
          error_description: 'The user has denied your application access.',
          error_uri: `${TROUBLESHOOTING}#access-denied`,
          state: fields.state,
        }),
        302,
      )
    const code = ctx.store.rng.hex(20)
    ctx.store.codes.set(code, {
      code,
      appId: checked.oauthApp.id,
      userId: user.id,
      scopes: parseScopes(fields.scope),
      redirectUri: fields.redirect_uri || null,
      expiresAt: ctx.emulator.clock.now() + CODE_TTL_MS,
      used: false,
    })
    return reply.redirect(withParams(checked.redirect, { code, state: fields.state }), 302)
  })

  app.post('/login/oauth/access_token', { onRequest: requireUserAgent }, async (req, reply) => {
    const q = (req.query ?? {}) as Record<string, unknown>
    let b: Record<string, unknown> = {}
    if (typeof req.body === 'object' && req.body !== null) b = req.body as Record<string, unknown>
    else if (typeof req.body === 'string' && req.body.trim()) {
      try {
        b = JSON.parse(req.body)
      } catch {
        b = Object.fromEntries(new URLSearchParams(req.body))
      }
    }
    const p = Object.fromEntries(Object.entries({ ...q, ...b }).map(([k, v]) => [k, String(v)]))
    const accept = String(req.headers.accept ?? '')
    const answer = (data: Record<string, string>) => {
      if (accept.includes('application/json')) return reply.code(200).send(data)
      if (accept.includes('xml')) {
        const xml = `<OAuth>${Object.entries(data)
          .map(([k, v]) => `<${k}>${esc(v)}</${k}>`)
          .join('')}</OAuth>`
        return reply.code(200).header('content-type', 'application/xml; charset=utf-8').send(xml)
      }
      return reply
        .code(200)
        .header('content-type', 'application/x-www-form-urlencoded; charset=utf-8')
        .send(new URLSearchParams(data).toString())
    }
    const oauthApp = appByClient(p.client_id)
    if (!oauthApp || oauthApp.clientSecret !== p.client_secret)
      return answer({
        error: 'incorrect_client_credentials',
        error_description: 'The client_id and/or client_secret passed are incorrect.',
        error_uri: `${TROUBLESHOOTING}#incorrect-client-credentials`,
      })
    const grant = ctx.store.codes.get(p.code ?? '')
    if (!grant || grant.used || grant.appId !== oauthApp.id || grant.expiresAt <= ctx.emulator.clock.now())
      return answer({
        error: 'bad_verification_code',
        error_description: 'The code passed is incorrect or expired.',
        error_uri: `${TROUBLESHOOTING}#bad-verification-code`,
      })
    if (p.redirect_uri && grant.redirectUri && p.redirect_uri !== grant.redirectUri)
      return answer({
        error: 'redirect_uri_mismatch',
        error_description: 'The redirect_uri MUST match the registered callback URL for this application.',
        error_uri: `${TROUBLESHOOTING}#redirect-uri-mismatch`,
      })
    grant.used = true
    const token = issueOAuthToken(ctx, oauthApp, grant.userId, grant.scopes)
    return answer({ access_token: token.value, token_type: 'bearer', scope: token.scopes.join(',') })
  })

  // App-authenticated token check and revocation (Basic client_id:client_secret).
  const appAuth = (req: FastifyRequest): OAuthApp | null => {
    const m = /^basic\s+(\S+)$/i.exec(req.headers.authorization ?? '')
    if (!m) return null
    const [id, secret] = Buffer.from(m[1], 'base64').toString().split(':')
    const a = appByClient(id)
    const params = req.params as Record<string, string>
    return a && a.clientSecret === secret && a.clientId === params.client_id ? a : null
  }
  const tokenBody = (req: FastifyRequest) => {
    const b = (typeof req.body === 'object' && req.body ? req.body : {}) as Record<string, unknown>
    return typeof b.access_token === 'string' ? b.access_token : ''
  }
  app.post('/applications/:client_id/token', { onRequest: requireUserAgent }, async (req, reply) => {
    const a = appAuth(req)
    if (!a) return sendError(reply, 404, 'Not Found')
    const t = ctx.store.tokens.get(tokenBody(req))
    if (!t || t.appId !== a.id) return sendError(reply, 404, 'Not Found')
    return {
      id: t.id,
      url: `${ctx.url}/authorizations/${t.id}`,
      scopes: t.scopes,
      token: t.value,
      token_last_eight: t.value.slice(-8),
      app: { client_id: a.clientId, name: a.name, url: ctx.webUrl },
      created_at: t.createdAt,
      updated_at: t.createdAt,
      expires_at: t.expiresAt ? new Date(t.expiresAt).toISOString() : null,
      user: userView(ctx, ctx.store.user(t.userId)),
    }
  })
  app.delete('/applications/:client_id/token', async (req, reply) => {
    const a = appAuth(req)
    if (!a) return sendError(reply, 404, 'Not Found')
    const t = ctx.store.tokens.get(tokenBody(req))
    if (t && t.appId === a.id) ctx.store.tokens.delete(t.value)
    return reply.code(204).send()
  })
}

export function issueOAuthToken(ctx: Ctx, oauthApp: OAuthApp, userId: number, scopes: string[]): Token {
  const token: Token = {
    id: ctx.store.nextId('token', 1),
    value: oauthToken(ctx.store.rng),
    kind: 'oauth',
    userId,
    scopes,
    ownerId: null,
    repoIds: null,
    permissions: null,
    expiresAt: null,
    appId: oauthApp.id,
    note: null,
    createdAt: ctx.emulator.clock.iso(),
  }
  ctx.store.tokens.set(token.value, token)
  return token
}
