// A connection of the generic http connector: the base address of an API (a self-hosted
// code-host installation, say) and how to authenticate to it, sealed in the vault like any
// other credentials. The address is checked so a connection cannot point Patchbay at the
// cloud metadata service or smuggle credentials or a query into it; the egress guard
// (kit/egress.ts) checks it again, resolved, when the connection is saved and at connect time.
import { z } from 'zod'
import type { AuthMethod, Credentials, OutgoingRequest } from '../../kit/define.ts'
import { neverReachable } from '../../kit/egress.ts'

const AUTH_TYPES = ['none', 'bearer', 'header', 'basic', 'query'] as const

const baseUrl = z
  .string()
  .max(2048)
  .superRefine((v, ctx) => {
    let u: URL
    try {
      u = new URL(v)
    } catch {
      ctx.addIssue({
        code: 'custom',
        message: 'must be an http(s) address, e.g. https://codehost.example.com/api/v3',
      })
      return
    }
    const why =
      u.protocol !== 'http:' && u.protocol !== 'https:'
        ? 'must use http or https'
        : u.username || u.password
          ? 'must not carry credentials (give them as the authentication instead)'
          : u.search || u.hash || v.includes('?') || v.includes('#')
            ? 'must not have a query or fragment (give query parameters in the step)'
            : /\/_sandbox(\/|$)/i.test(u.pathname)
              ? "must not name a sandbox's control API"
              : neverReachable(u.hostname) && `must not point at ${neverReachable(u.hostname)}`
    if (why) ctx.addIssue({ code: 'custom', message: why })
  })
  .describe('The API base address; every request goes below it, e.g. https://codehost.example.com/api/v3.')

export const customAuth: AuthMethod = {
  id: 'custom',
  name: 'Base address and custom authentication',
  description:
    'For APIs without a connector of their own, such as a self-hosted code-host installation (its API at https://<host>/api/v3, a token as bearer). Give the base address and one authentication: none, bearer (a token), header (a named header and its value), basic (username and password) or query (a named query parameter and its value). checkPath, when given, is read once to check the credentials (and name the account when it answers with a login).',
  credentials: z
    .object({
      baseUrl,
      authType: z.enum(AUTH_TYPES).describe('none, bearer, header, basic or query.'),
      token: z
        .string()
        .min(1)
        .optional()
        .describe('bearer: the token (sent as Authorization: Bearer <token>).'),
      headerName: z
        .string()
        .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be a header name')
        .optional()
        .describe('header: the header name, e.g. Private-Token or X-Api-Key.'),
      headerValue: z
        .string()
        .min(1)
        .regex(/^[^\r\n]*$/, 'must be one line')
        .optional()
        .describe('header: its value.'),
      username: z.string().min(1).optional().describe('basic: the user name.'),
      password: z.string().min(1).optional().describe('basic: the password.'),
      queryParam: z
        .string()
        .regex(/^[A-Za-z0-9._~-]+$/, 'must be a query parameter name')
        .optional()
        .describe('query: the parameter name, e.g. api_key.'),
      queryValue: z.string().min(1).optional().describe('query: its value.'),
      name: z.string().min(1).max(100).optional().describe('A name to list the connection under.'),
      checkPath: z
        .string()
        .regex(/^\/[^\s?#]*$/, 'must be a path starting with /')
        .optional()
        .describe('A path read once when connecting, to check the credentials, e.g. /user.'),
    })
    .superRefine((c, ctx) => {
      const need: Record<(typeof AUTH_TYPES)[number], string[]> = {
        none: [],
        bearer: ['token'],
        header: ['headerName', 'headerValue'],
        basic: ['username', 'password'],
        query: ['queryParam', 'queryValue'],
      }
      for (const f of need[c.authType])
        if (!(c as Record<string, unknown>)[f])
          ctx.addIssue({ code: 'custom', path: [f], message: `is required for authType ${c.authType}` })
      if (
        c.authType === 'header' &&
        /^(host|content-length|transfer-encoding|connection)$/i.test(c.headerName ?? '')
      )
        ctx.addIssue({
          code: 'custom',
          path: ['headerName'],
          message: 'cannot be a header Patchbay sets itself',
        })
    }),
}

/** Adds the connection's authentication; the caller's own headers or query never override it. */
export function authorizeHttp(req: OutgoingRequest, c: Credentials): void {
  switch (c.authType) {
    case 'bearer':
      req.headers.authorization = `Bearer ${c.token}`
      break
    case 'header':
      req.headers[c.headerName.toLowerCase()] = c.headerValue
      break
    case 'basic':
      req.headers.authorization = `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`
      break
    case 'query':
      req.query.set(c.queryParam, c.queryValue)
      break
  }
}
