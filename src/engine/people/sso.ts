// Single sign-on with OpenID Connect (openid-client): the authorization code flow with PKCE, a
// state bound to the browser that started it (a short-lived cookie, and the flow kept sealed in
// the store so the callback may land on any instance, taken once) and a nonce in the ID token.
// openid-client checks the ID token's signature, issuer, audience, nonce and times, and the
// authorization response's issuer (RFC 9207) when the provider sends it.
//
// Who gets in: a person already linked to the identity (issuer, subject); else a verified email,
// which joins its pending invitations, or (PATCHBAY_OIDC_JOIN_BY_DOMAIN=true) the workspaces whose
// settings claim its domain (`emailDomain`); with PATCHBAY_SIGNUP=open anyone with a verified
// email gets an account. An existing account with that verified email is linked.
import * as oidc from 'openid-client'
import { PatchbayError } from '../../kit/errors.ts'
import type { OAuthFlowRows } from '../../store/oauth-flows.ts'
import { normalizeEmail, type PersonRow } from '../../store/people.ts'
import type { Vault } from '../../store/vault.ts'
import type { PublicAddress } from '../public-address.ts'
import type { Accounts, StartedSession } from './accounts.ts'
import { type AuditActor, type AuditTrail, anonymous, type RequestOrigin } from './audit-trail.ts'
import type { Members } from './members.ts'

export interface SsoConfig {
  issuer: string
  clientId: string
  clientSecret: string
  /** Let a verified email join the workspaces that claim its domain. */
  joinByDomain: boolean
}

/** How long a started sign-in may take before its callback is refused. */
export const SSO_FLOW_TTL_MS = 10 * 60_000

interface FlowData {
  verifier: string
  nonce: string
  returnTo: string
}

export interface SingleSignOnOptions {
  config: SsoConfig
  accounts: Accounts
  members: Members
  flows: OAuthFlowRows
  vault: Vault
  audit: AuditTrail
  /** Where people reach Patchbay: the callback the identity provider sends them back to. */
  address: PublicAddress
}

export class SingleSignOn {
  readonly issuer: string
  #opts: SingleSignOnOptions
  #configuration: Promise<oidc.Configuration> | null = null

  constructor(opts: SingleSignOnOptions) {
    this.#opts = opts
    this.issuer = opts.config.issuer
  }

  get redirectUri(): string {
    return this.#opts.address.of('/v1/auth/sso/callback')
  }

  /** The provider's metadata, discovered once (again after a failure: it may not have been up). */
  #discover(): Promise<oidc.Configuration> {
    const { issuer, clientId, clientSecret } = this.#opts.config
    this.#configuration ??= oidc
      .discovery(
        new URL(issuer),
        clientId,
        clientSecret,
        undefined,
        // A provider at an http:// address (a test's, or one on a private network the operator
        // named) is allowed as configured; https is the norm.
        issuer.startsWith('http://') ? { execute: [oidc.allowInsecureRequests] } : undefined,
      )
      .catch((err: Error) => {
        this.#configuration = null
        throw new PatchbayError(
          'SSO_FAILED',
          `The identity provider at ${issuer} could not be reached or described itself wrongly (${err.message}).`,
          { status: 502, hint: 'Check PATCHBAY_OIDC_ISSUER and that the provider is up, then try again.' },
        )
      })
    return this.#configuration
  }

  /** Starts a sign-in: the provider's address to send the browser to, and the state for its cookie. */
  async start(returnTo: string | undefined): Promise<{ url: string; state: string }> {
    const config = await this.#discover()
    const verifier = oidc.randomPKCECodeVerifier()
    const state = oidc.randomState()
    const nonce = oidc.randomNonce()
    const data: FlowData = { verifier, nonce, returnTo: safeReturnTo(returnTo) }
    await this.#opts.flows.insert({
      state,
      connector: 'sso',
      data: this.#opts.vault.seal(data),
      expires_at: new Date(Date.now() + SSO_FLOW_TTL_MS).toISOString(),
    })
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri,
      scope: 'openid email profile',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    })
    return { url: url.href, state }
  }

  /**
   * Finishes a sign-in from the provider's answer (the callback's address) and the state this
   * browser's cookie kept. Every refusal is audited and changes nothing.
   */
  async finish(
    callbackUrl: URL,
    browserState: string | undefined,
    origin: RequestOrigin,
  ): Promise<StartedSession & { returnTo: string; joined: string[] }> {
    const refuse = async (reason: string, message: string, who: AuditActor = anonymous): Promise<never> => {
      await this.#opts.audit.record({
        workspaceIds: [],
        actor: who,
        action: 'auth.sso_failed',
        outcome: 'refused',
        detail: { reason, issuer: this.issuer },
        origin,
      })
      throw new PatchbayError('SSO_FAILED', message)
    }
    const given = callbackUrl.searchParams.get('state')
    if (!browserState)
      return refuse(
        'no state cookie',
        'No sign-in was started in this browser (its state cookie is missing or expired).',
      )
    if (given !== browserState)
      return refuse(
        'state mismatch',
        'The state of the answer does not match the sign-in this browser started: it may be forged or from another sign-in.',
      )
    const flow = await this.#opts.flows.take(browserState)
    if (flow?.connector !== 'sso' || flow.expires_at <= new Date().toISOString())
      return refuse('unknown state', 'This sign-in expired or was finished already.')
    const data = this.#opts.vault.open<FlowData>(flow.data)
    const config = await this.#discover()
    let claims: oidc.IDToken
    let profile: { email?: unknown; email_verified?: unknown; name?: unknown }
    try {
      const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: data.verifier,
        expectedState: browserState,
        expectedNonce: data.nonce,
        idTokenExpected: true,
      })
      claims = tokens.claims()!
      profile = claims as typeof profile
      // Many providers put the email in the UserInfo answer only (its subject is checked to be the
      // ID token's).
      if (typeof claims.email !== 'string' || claims.email_verified === undefined)
        profile = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub)
    } catch (err) {
      const what = describeOidcError(err)
      return refuse(what.reason, what.message)
    }
    const issuer = claims.iss
    const subject = claims.sub
    const email = typeof profile.email === 'string' ? normalizeEmail(profile.email) : null
    const verified = profile.email_verified === true
    const who: AuditActor = { kind: 'anonymous', id: null, label: email ?? `${issuer} ${subject}` }

    let person: PersonRow | null | undefined = await this.#opts.accounts.people.byIdentity(issuer, subject)
    if (!person) {
      if (!email || !verified)
        return refuse(
          'email not verified',
          'The identity provider did not vouch for an email address (email_verified): Patchbay cannot tell who you are.',
          who,
        ).catch(noAccess)
      person = await this.#personFor(email, profile, origin)
      if (!person)
        return refuse('no invitation or domain', `No invitation or workspace admits ${email}.`, who).catch(
          noAccess,
        )
      await this.#opts.accounts.people.linkIdentity(issuer, subject, person.id)
    }
    const joined = await this.#join(person, email !== null && verified && email === person.email, origin)
    const started = await this.#opts.accounts.startSession(person, 'sso', origin)
    return { ...started, returnTo: data.returnTo, joined }
  }

  /** The account of a verified email: existing, or made now if it will be let in somewhere. */
  async #personFor(
    email: string,
    claims: { name?: unknown },
    origin: RequestOrigin,
  ): Promise<PersonRow | null> {
    const existing = await this.#opts.accounts.people.byEmail(email)
    if (existing) return existing
    const pending = await this.#opts.members.invitations.pendingFor(email)
    const domainWorkspaces = this.#opts.config.joinByDomain
      ? await this.#opts.members.workspacesClaiming(email.split('@')[1] ?? '')
      : []
    if (pending.length === 0 && domainWorkspaces.length === 0 && this.#opts.accounts.signup !== 'open')
      return null
    const name = typeof claims.name === 'string' && claims.name.trim() ? claims.name.trim() : email
    const person =
      (await this.#opts.accounts.people.create({ email, name, passwordHash: null, emailVerified: true })) ??
      (await this.#opts.accounts.people.byEmail(email))!
    await this.#opts.audit.record({
      workspaceIds: [],
      actor: { kind: 'person', id: person.id, label: person.email },
      action: 'auth.sign_up',
      object: { kind: 'person', id: person.id },
      outcome: 'ok',
      detail: { email, method: 'sso', issuer: this.issuer },
      origin,
    })
    return person
  }

  /** Joins the pending invitations of a verified email, and the workspaces claiming its domain. */
  async #join(person: PersonRow, emailVerified: boolean, origin: RequestOrigin): Promise<string[]> {
    if (!emailVerified) return []
    const joined = await this.#opts.members.acceptPending(person, origin)
    if (this.#opts.config.joinByDomain) {
      for (const ws of await this.#opts.members.workspacesClaiming(person.email.split('@')[1] ?? '')) {
        await this.#opts.members.joinByDomain(ws, person, origin)
        joined.push(ws)
      }
    }
    return joined
  }
}

/** A refusal for want of access, not of a good answer: SSO_NO_ACCESS (403) instead of SSO_FAILED. */
function noAccess(err: unknown): never {
  if (err instanceof PatchbayError && err.code === 'SSO_FAILED')
    throw new PatchbayError('SSO_NO_ACCESS', err.message)
  throw err
}

/** Only a path on Patchbay itself (no open redirect to another site). */
export function safeReturnTo(returnTo: string | undefined): string {
  if (!returnTo?.startsWith('/') || returnTo.startsWith('//') || returnTo.includes('\\')) return '/'
  return returnTo
}

/** What openid-client refused, in words: which claim or parameter was wrong. */
function describeOidcError(err: unknown): { reason: string; message: string } {
  type Link = {
    message?: string
    code?: string
    claim?: string
    error?: string
    error_description?: string
    cause?: unknown
  }
  const chain: Link[] = []
  for (let e = err as Link | undefined; e && chain.length < 5; e = e.cause as Link | undefined) chain.push(e)
  const claim = chain.find((e) => typeof e.claim === 'string')?.claim
  if (claim === 'nonce')
    return {
      reason: 'nonce mismatch',
      message: 'The ID token’s nonce is not the one this sign-in sent: it may be replayed.',
    }
  if (claim === 'iss')
    return {
      reason: 'issuer mismatch',
      message: 'The answer comes from another issuer than the configured PATCHBAY_OIDC_ISSUER.',
    }
  if (claim === 'aud' || claim === 'azp')
    return {
      reason: 'audience mismatch',
      message: 'The ID token is not meant for this Patchbay (its audience is another client).',
    }
  const text = chain.map((e) => e.message ?? '').join(' ')
  if (/\biss\b|issuer/i.test(text))
    return {
      reason: 'issuer mismatch',
      message: 'The answer comes from another issuer than the configured PATCHBAY_OIDC_ISSUER.',
    }
  if (/\bstate\b/i.test(text))
    return {
      reason: 'state mismatch',
      message: 'The state of the answer does not match the sign-in this browser started.',
    }
  const provider = chain.find((e) => typeof e.error === 'string')
  if (provider)
    return {
      reason: `provider error ${provider.error}`,
      message: `The identity provider refused the sign-in: ${provider.error}${provider.error_description ? ` (${provider.error_description})` : ''}.`,
    }
  return {
    reason: 'invalid answer',
    message: `The identity provider’s answer was refused: ${chain[0]?.message ?? 'unknown'}.`,
  }
}
