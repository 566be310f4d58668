// OAuth 1.0a request signing (RFC 5849), HMAC-SHA1 over node:crypto: the signature base string
// (§3.4.1), the signature (§3.4.2) and the `Authorization: OAuth …` header (§3.5.1). Used by
// connectors whose redirect sign-in is OAuth 1.0a (the task-board) to sign the request-token and
// access-token requests; any signed request can use it.
import { createHmac, randomBytes } from 'node:crypto'

export interface OAuth1Keys {
  consumerKey: string
  consumerSecret: string
  /** The request or access token, when the request is made with one. */
  token?: string
  tokenSecret?: string
}

export interface OAuth1Request {
  method: string
  /** The full address; its query parameters take part in the signature. */
  url: string
  /** Parameters of a form-encoded body (`application/x-www-form-urlencoded`), which are signed too. */
  form?: Record<string, string>
  /** Protocol parameters beyond the usual ones: `oauth_callback`, `oauth_verifier`. */
  oauth?: Record<string, string>
  /** Fixed for tests; fresh by default. */
  nonce?: string
  timestamp?: string
}

/** RFC 3986 percent-encoding (§3.6): everything but unreserved characters, hex in upper case. */
export function percentEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
}

/** The base string URI (§3.4.1.2): scheme and host in lower case, default ports and the query left out. */
export function baseStringUri(url: string): string {
  const u = new URL(url)
  const defaultPort =
    (u.protocol === 'http:' && u.port === '80') || (u.protocol === 'https:' && u.port === '443')
  const host = u.hostname.toLowerCase() + (u.port && !defaultPort ? `:${u.port}` : '')
  return `${u.protocol.toLowerCase()}//${host}${u.pathname}`
}

/** The signature base string (§3.4.1.1) over every parameter: query, form body and protocol. */
export function signatureBaseString(method: string, url: string, params: Array<[string, string]>): string {
  const normalized = params
    .map(([k, v]) => [percentEncode(k), percentEncode(v)] as const)
    .sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&')
  return [method.toUpperCase(), percentEncode(baseStringUri(url)), percentEncode(normalized)].join('&')
}

/** HMAC-SHA1 (§3.4.2) keyed with the encoded consumer secret and token secret. */
export function hmacSha1Signature(baseString: string, consumerSecret: string, tokenSecret = ''): string {
  return createHmac('sha1', `${percentEncode(consumerSecret)}&${percentEncode(tokenSecret)}`)
    .update(baseString)
    .digest('base64')
}

/** The protocol parameters of a request, signed: what goes into its Authorization header. */
export function signOAuth1(req: OAuth1Request, keys: OAuth1Keys): Record<string, string> {
  const oauth: Record<string, string> = {
    oauth_consumer_key: keys.consumerKey,
    oauth_nonce: req.nonce ?? randomBytes(16).toString('hex'),
    oauth_signature_method: 'HMAC-SHA1',
    oauth_timestamp: req.timestamp ?? String(Math.floor(Date.now() / 1000)),
    oauth_version: '1.0',
    ...(keys.token ? { oauth_token: keys.token } : {}),
    ...req.oauth,
  }
  const params: Array<[string, string]> = [...Object.entries(oauth)]
  for (const [k, v] of new URL(req.url).searchParams) params.push([k, v])
  for (const [k, v] of Object.entries(req.form ?? {})) params.push([k, v])
  const base = signatureBaseString(req.method, req.url, params)
  return { ...oauth, oauth_signature: hmacSha1Signature(base, keys.consumerSecret, keys.tokenSecret) }
}

/** `OAuth k="v", …` with every value percent-encoded (§3.5.1). */
export function oauth1AuthorizationHeader(signed: Record<string, string>): string {
  return `OAuth ${Object.entries(signed)
    .map(([k, v]) => `${percentEncode(k)}="${percentEncode(v)}"`)
    .join(', ')}`
}
