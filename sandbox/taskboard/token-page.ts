// The token page, `{authUrl}/1/authorize`: the member logs in and approves in one form, and the
// new token goes back to `return_url#token=...` (fragment), to the opener (postMessage), or is shown.
import type { FastifyInstance, FastifyReply } from 'fastify'
import { invalidKey, invalidValue } from './errors.ts'
import { approvePage, messagePage, tokenPage } from './html.ts'
import type { Params } from './params.ts'
import type { Deps } from './routes/helpers.ts'
import { type App, EXPIRATIONS, type Expiration, SCOPES, type Scope, type Store } from './store.ts'

export function parseScopes(raw: unknown): Scope[] {
  const text = raw === undefined || raw === '' ? 'read' : raw
  if (typeof text !== 'string') throw invalidValue('scope')
  const scopes = text.split(',').map((x) => x.trim())
  for (const x of scopes) if (!(SCOPES as readonly string[]).includes(x)) throw invalidValue('scope')
  return SCOPES.filter((x) => scopes.includes(x))
}

export function parseExpiration(raw: unknown): Expiration {
  const v = raw === undefined || raw === '' ? '30days' : raw
  if (typeof v !== 'string' || !(EXPIRATIONS as readonly string[]).includes(v))
    throw invalidValue('expiration')
  return v as Expiration
}

interface Request {
  app: App
  name: string
  scopes: Scope[]
  expiration: Expiration
  returnUrl: URL | null
  callbackMethod: 'fragment' | 'postMessage'
  hidden: Record<string, string>
}

function parseRequest(s: Store, p: Params): Request {
  const app = typeof p.key === 'string' ? s.apps.get(p.key) : undefined
  if (!app) throw invalidKey()
  const scopes = parseScopes(p.scope)
  const expiration = parseExpiration(p.expiration)
  const responseType = p.response_type ?? 'token'
  if (responseType !== 'token' && responseType !== 'fragment') throw invalidValue('response_type')
  const callbackMethod = p.callback_method ?? 'fragment'
  if (callbackMethod !== 'fragment' && callbackMethod !== 'postMessage') throw invalidValue('callback_method')
  let returnUrl: URL | null = null
  if (p.return_url !== undefined && p.return_url !== '') {
    try {
      returnUrl = new URL(String(p.return_url))
    } catch {
      throw invalidValue('return_url')
    }
    if (returnUrl.protocol !== 'http:' && returnUrl.protocol !== 'https:') throw invalidValue('return_url')
    if (app.allowedOrigins.length > 0 && !app.allowedOrigins.includes(returnUrl.origin))
      throw invalidValue('return_url')
  }
  const name = typeof p.name === 'string' && p.name !== '' ? p.name : app.name
  const hidden: Record<string, string> = {}
  for (const k of ['key', 'name', 'expiration', 'scope', 'response_type', 'return_url', 'callback_method']) {
    if (typeof p[k] === 'string') hidden[k] = p[k] as string
  }
  return { app, name, scopes, expiration, returnUrl, callbackMethod, hidden }
}

function withFragment(url: URL, fragment: string): string {
  const u = new URL(url)
  u.hash = fragment
  return u.toString()
}

export function registerTokenPage(app: FastifyInstance, { store: s }: Deps): void {
  const render = (reply: FastifyReply, r: Request, status = 200, error?: string) =>
    reply
      .code(status)
      .type('text/html; charset=utf-8')
      .send(
        approvePage({
          appName: r.name,
          scopes: r.scopes,
          expiration: r.expiration,
          action: '/1/authorize',
          hidden: r.hidden,
          error,
        }),
      )

  app.get('/1/authorize', async (req, reply) => render(reply, parseRequest(s, req.query as Params)))

  app.post('/1/authorize', async (req, reply) => {
    const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Params
    const p = { ...(req.query as Params), ...body }
    const r = parseRequest(s, p)
    if (p.approve === 'Deny') {
      if (r.returnUrl && r.callbackMethod === 'fragment')
        return reply.redirect(withFragment(r.returnUrl, 'error=access_denied'), 302)
      return reply
        .type('text/html; charset=utf-8')
        .send(messagePage('Access denied', `${r.name} was not given access.`))
    }
    const member = typeof p.username === 'string' ? s.findMember(p.username) : undefined
    if (!member || member.password !== p.password)
      return render(reply, r, 401, 'Invalid username or password')
    const token = s.addToken(r.app.key, member.id, r.scopes, r.expiration, r.name)
    if (r.returnUrl && r.callbackMethod === 'fragment') {
      return reply.redirect(withFragment(r.returnUrl, `token=${token.value}`), 302)
    }
    const origin = r.callbackMethod === 'postMessage' ? (r.returnUrl?.origin ?? '*') : undefined
    return reply.type('text/html; charset=utf-8').send(tokenPage(token.value, origin))
  })
}
