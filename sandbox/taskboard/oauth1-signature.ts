// OAuth 1.0a request signing (RFC 5849, HMAC-SHA1): parameter collection, the signature base
// string and the check. Used by the three-legged flow and by signed API calls.
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { FastifyRequest } from 'fastify'

/** RFC 3986 percent-encoding, which encodeURIComponent falls short of for !'()*. */
export function percentEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase())
}

/** The `key="value"` pairs of an `Authorization: OAuth ...` header, or null for other schemes. */
export function parseOAuthHeader(header: string | undefined): Record<string, string> | null {
  if (!header || !/^OAuth\s/i.test(header)) return null
  const out: Record<string, string> = {}
  for (const m of header.slice(6).matchAll(/([A-Za-z0-9_.-]+)\s*=\s*"([^"]*)"/g)) {
    try {
      out[m[1]!] = decodeURIComponent(m[2]!)
    } catch {
      out[m[1]!] = m[2]!
    }
  }
  return out
}

export function baseUrl(req: FastifyRequest): string {
  const proto = req.protocol
  let host = String(req.headers.host ?? '').toLowerCase()
  if ((proto === 'http' && host.endsWith(':80')) || (proto === 'https' && host.endsWith(':443'))) {
    host = host.slice(0, host.lastIndexOf(':'))
  }
  return `${proto}://${host}${req.originalUrl.split('?')[0]}`
}

export function signatureBaseString(method: string, url: string, params: [string, string][]): string {
  const normalized = params
    .map(([k, v]) => [percentEncode(k), percentEncode(v)] as const)
    .sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&')
  return [method.toUpperCase(), percentEncode(url), percentEncode(normalized)].join('&')
}

export function hmacSha1(consumerSecret: string, tokenSecret: string, text: string): string {
  return createHmac('sha1', `${percentEncode(consumerSecret)}&${percentEncode(tokenSecret)}`)
    .update(text)
    .digest('base64')
}

/**
 * The request's OAuth parameters (from the header, the query or a form body) and every parameter
 * that takes part in the signature.
 */
export function collectParams(req: FastifyRequest): {
  oauth: Record<string, string>
  signed: [string, string][]
} {
  const signed: [string, string][] = []
  const oauth: Record<string, string> = {}
  const header = parseOAuthHeader(req.headers.authorization)
  for (const [k, v] of Object.entries(header ?? {})) {
    if (k === 'realm') continue
    signed.push([k, v])
  }
  const sent = req.originalUrl
  const query = sent.includes('?') ? sent.slice(sent.indexOf('?') + 1) : ''
  for (const [k, v] of new URLSearchParams(query)) signed.push([k, v])
  const type = String(req.headers['content-type'] ?? '')
  if (type.startsWith('application/x-www-form-urlencoded') && req.rawBody) {
    for (const [k, v] of new URLSearchParams(req.rawBody)) signed.push([k, v])
  }
  for (const [k, v] of signed) if (k.startsWith('oauth_')) oauth[k] = v
  return { oauth, signed: signed.filter(([k]) => k !== 'oauth_signature') }
}

export function verifySignature(req: FastifyRequest, consumerSecret: string, tokenSecret: string): boolean {
  const { oauth, signed } = collectParams(req)
  const given = oauth.oauth_signature
  if (!given || (oauth.oauth_signature_method ?? 'HMAC-SHA1') !== 'HMAC-SHA1') return false
  const expected = hmacSha1(
    consumerSecret,
    tokenSecret,
    signatureBaseString(req.method, baseUrl(req), signed),
  )
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}
