// Who is calling: the API key and token from the query, the `Authorization: OAuth ...` header or
// the body, checked in the order the real service checks them (key, then token, then signature).
import type { FastifyRequest } from 'fastify'
import type { Ctx } from './access.ts'
import { ApiError, invalidKey, invalidToken } from './errors.ts'
import { parseOAuthHeader, verifySignature } from './oauth1-signature.ts'
import type { Store } from './store.ts'

export interface Credentials {
  key?: string
  token?: string
  /** The header carried an oauth_signature, so the call is checked as a signed OAuth request. */
  signed: boolean
}

export function credentials(req: FastifyRequest): Credentials {
  const query = (req.query ?? {}) as Record<string, unknown>
  const body = req.body && typeof req.body === 'object' ? (req.body as Record<string, unknown>) : {}
  const header = parseOAuthHeader(req.headers.authorization) ?? {}
  const pick = (...vals: unknown[]) => vals.find((v): v is string => typeof v === 'string' && v !== '')
  return {
    key: pick(query.key, header.oauth_consumer_key, body.key),
    token: pick(query.token, header.oauth_token, body.token),
    signed: typeof header.oauth_signature === 'string',
  }
}

/** `pathToken` is the token named in `/1/tokens/{token}/...`, which stands in for a missing one. */
export function authenticate(s: Store, req: FastifyRequest, pathToken?: string): Ctx {
  s.sweepExpiredTokens()
  const creds = credentials(req)
  const app = creds.key ? s.apps.get(creds.key) : undefined
  if (!app) throw invalidKey()
  const value = creds.token ?? pathToken
  if (!value) return { app, token: null, member: null, scopes: new Set(['read']), internal: false }
  const token = s.tokens.get(value)
  if (!token || token.key !== app.key) throw invalidToken()
  if (creds.signed && !verifySignature(req, app.secret, token.secret ?? '')) {
    throw new ApiError(401, 'invalid signature')
  }
  const member = s.members.get(token.idMember)
  if (!member) throw invalidToken()
  return { app, token, member, scopes: new Set(token.scopes), internal: false }
}
