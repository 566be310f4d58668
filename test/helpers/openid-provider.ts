// A real OpenID Connect provider (the oidc-provider package) on loopback, with its development
// sign-in pages (any login name signs in as that account), and a browser-like walk through them:
// fetch with manual redirects and a cookie jar per site.
import { generateKeyPairSync } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import Provider, { type ClientMetadata } from 'oidc-provider'
import { CookieJar } from './person.ts'

export interface OpenIdAccount {
  email: string
  emailVerified: boolean
  name: string
}

export interface OpenIdProvider {
  issuer: string
  provider: Provider
  /** Accounts by login name (the `sub`). */
  accounts: Map<string, OpenIdAccount>
  /** The client id and secret registered for Patchbay. */
  client: { id: string; secret: string }
  /** Registers Patchbay's redirect address (known once Patchbay listens). */
  register(redirectUri: string): void
  /** Issues the next ID tokens for another client (a provider that gets the audience wrong). */
  wrongAudience: boolean
  close(): Promise<void>
}

/** Starts a provider; its clients are registered with register() (Patchbay's address comes later). */
export async function startOpenIdProvider(): Promise<OpenIdProvider> {
  const server = http.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const accounts = new Map<string, OpenIdAccount>()
  const client = { id: 'patchbay', secret: `secret-${Math.random().toString(36).slice(2)}` }
  const signing = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' })
  const state: OpenIdProvider = {
    issuer,
    provider: null as unknown as Provider,
    accounts,
    client,
    wrongAudience: false,
    register(redirectUri) {
      const clients = [client.id, 'another-app'].map(
        (id): ClientMetadata => ({
          client_id: id,
          client_secret: id === client.id ? client.secret : 'another-secret',
          redirect_uris: [redirectUri],
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_post',
        }),
      )
      const provider = new Provider(issuer, {
        clients,
        jwks: { keys: [{ ...signing, kid: 'test', use: 'sig', alg: 'RS256' } as never] },
        cookies: { keys: ['test-cookie-key'] },
        claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
        features: { devInteractions: { enabled: true } },
        async findAccount(_ctx, sub) {
          const a = accounts.get(sub)
          if (!a) return undefined
          return {
            accountId: sub,
            claims: async () => ({ sub, email: a.email, email_verified: a.emailVerified, name: a.name }),
          }
        },
      })
      // A provider that misbehaves on purpose: the ID token names another client as its audience.
      const IdToken = provider.IdToken as unknown as {
        prototype: { issue: (this: { client: unknown }, ...args: unknown[]) => Promise<string> }
      }
      const issue = IdToken.prototype.issue
      IdToken.prototype.issue = async function (this: { client: unknown }, ...args: unknown[]) {
        if (state.wrongAudience) this.client = await provider.Client.find('another-app')
        return issue.apply(this, args)
      }
      state.provider = provider
      server.on('request', provider.callback())
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  return state
}

export interface Hop {
  url: string
  status: number
  location: string | null
  body: string
}

/**
 * A browser's walk: follows redirects across sites (one cookie jar per origin), signing in on the
 * provider's development pages as `login` and giving consent. `rewrite` may change an address
 * before it is requested (a tampered redirect). Stops at the first answer that is not a redirect
 * or the provider's page; returns every hop.
 */
export async function browse(
  start: string,
  opts: { login: string; jars: Map<string, CookieJar>; rewrite?: (url: URL) => URL; accept?: string },
): Promise<Hop[]> {
  const hops: Hop[] = []
  const jar = (u: URL) => {
    let j = opts.jars.get(u.origin)
    if (!j) {
      j = new CookieJar()
      opts.jars.set(u.origin, j)
    }
    return j
  }
  let url = new URL(start)
  let method = 'GET'
  let body: string | undefined
  for (let i = 0; i < 20; i++) {
    if (opts.rewrite && method === 'GET') url = opts.rewrite(url)
    const j = jar(url)
    const headers: Record<string, string> = {}
    const cookie = j.header()
    if (cookie) headers.cookie = cookie
    if (body) headers['content-type'] = 'application/x-www-form-urlencoded'
    if (opts.accept) headers.accept = opts.accept
    const res = await fetch(url, { method, headers, body, redirect: 'manual' })
    j.take(res.headers)
    const text = await res.text()
    const location = res.headers.get('location')
    hops.push({ url: url.href, status: res.status, location, body: text })
    if (location && res.status >= 300 && res.status < 400) {
      url = new URL(location, url)
      method = 'GET'
      body = undefined
      continue
    }
    // The provider's development page: sign in, or give consent.
    const prompt = /name="prompt" value="(\w+)"/.exec(text)?.[1]
    if (res.status === 200 && prompt && url.pathname.startsWith('/interaction/')) {
      method = 'POST'
      body = new URLSearchParams(
        prompt === 'login' ? { prompt, login: opts.login, password: 'any' } : { prompt },
      ).toString()
      continue
    }
    return hops
  }
  throw new Error(`too many redirects: ${hops.map((h) => `${h.status} ${h.url}`).join('\n')}`)
}
