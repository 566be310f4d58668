// People's accounts and sessions: sign-up (as PATCHBAY_SIGNUP allows), sign-in with a password
// (failures limited per account and per address, counted in the store so every instance shares
// the limits), sessions (a random token in an HttpOnly cookie, stored hashed, ended one by one or
// all at once on every instance), the CSRF token each session's writes carry, and passwords
// changed (with the current one) or reset through a mailed link.
import { createHash, timingSafeEqual } from 'node:crypto'
import { PatchbayError } from '../../kit/errors.ts'
import type { Mailer } from '../../kit/mailer.ts'
import {
  hashPassword,
  needsRehash,
  PASSWORD_RULES,
  passwordProblem,
  verifyAgainstDecoy,
  verifyPassword,
} from '../../kit/passwords.ts'
import type { Store } from '../../store/database.ts'
import type { PageRequest } from '../../store/paging.ts'
import { normalizeEmail, type PersonRow } from '../../store/people.ts'
import { type PersonSessionRow, SignInAttempts } from '../../store/person-sessions.ts'
import type { Vault } from '../../store/vault.ts'
import type { Changes } from '../changes/changes.ts'
import type { PublicAddress } from '../public-address.ts'
import { type AuditActor, type AuditTrail, anonymous, type RequestOrigin } from './audit-trail.ts'
import type { Members } from './members.ts'

export type SignupMode = 'open' | 'invite' | 'off'

/** Failed sign-ins allowed per window: per account, and per address (many accounts, one place). */
export const SIGN_IN_LIMITS = { account: 5, address: 30, windowMs: 15 * 60_000 } as const

/** How long a mailed password-reset link works. */
export const PASSWORD_RESET_TTL_MS = 30 * 60_000

export interface AccountsOptions {
  store: Store
  members: Members
  changes: Changes
  audit: AuditTrail
  signup: SignupMode
  sessionTtlMs: number
  /** Mails password-reset links; null without SMTP (then resets are refused, with what to do). */
  mailer: Mailer | null
  /** The address people open Patchbay at (the link in the mail). */
  address: PublicAddress
  /** Keys the reset links (a MAC under the master key: nothing stored, every instance agrees). */
  vault: Vault
}

export interface PersonView {
  id: string
  email: string
  name: string
  emailVerified: boolean
  createdAt: string
}

export const personView = (p: PersonRow): PersonView => ({
  id: p.id,
  email: p.email,
  name: p.name,
  emailVerified: p.email_verified === 1,
  createdAt: p.created_at,
})

export interface SessionView {
  id: string
  method: PersonSessionRow['method']
  createdAt: string
  lastSeenAt: string
  expiresAt: string
  address: string | null
  userAgent: string | null
}

export const sessionView = (s: PersonSessionRow): SessionView => ({
  id: s.id,
  method: s.method,
  createdAt: s.created_at,
  lastSeenAt: s.last_seen_at,
  expiresAt: s.expires_at,
  address: s.address,
  userAgent: s.user_agent,
})

/** A new session: the token goes in the cookie (once), the CSRF token to the page. */
export interface StartedSession {
  person: PersonRow
  session: PersonSessionRow
  token: string
  csrfToken: string
}

/** A session a cookie named: who it is and which session. */
export interface SessionIdentity {
  person: PersonRow
  session: PersonSessionRow
}

/**
 * The CSRF token of a session: derived from its secret token (which page scripts cannot read: the
 * cookie is HttpOnly), so it needs no storage and another session's token never matches.
 */
export const csrfTokenOf = (sessionToken: string) =>
  createHash('sha256').update(`patchbay csrf\0${sessionToken}`).digest('base64url')

export function csrfTokenMatches(sessionToken: string, given: string | undefined): boolean {
  if (!given) return false
  const want = Buffer.from(csrfTokenOf(sessionToken))
  const got = Buffer.from(given)
  return want.length === got.length && timingSafeEqual(want, got)
}

const personActor = (p: PersonRow): AuditActor => ({ kind: 'person', id: p.id, label: p.email })

export class Accounts {
  readonly signup: SignupMode
  readonly sessionTtlMs: number
  #members: Members
  #changes: Changes
  #audit: AuditTrail
  #attempts: SignInAttempts
  #mailer: Mailer | null
  #address: PublicAddress
  #vault: Vault

  constructor(opts: AccountsOptions) {
    this.signup = opts.signup
    this.sessionTtlMs = opts.sessionTtlMs
    this.#members = opts.members
    this.#changes = opts.changes
    this.#audit = opts.audit
    this.#attempts = new SignInAttempts(opts.store.db)
    this.#mailer = opts.mailer
    this.#address = opts.address
    this.#vault = opts.vault
  }

  /** Whether a forgotten password can be reset by mail (SMTP configured). */
  get resetsByMail(): boolean {
    return this.#mailer !== null
  }

  get people() {
    return this.#members.people
  }

  get sessions() {
    return this.#members.sessions
  }

  /** The workspaces a person belongs to (audit entries about them go to each). */
  async #workspacesOf(personId: string): Promise<string[]> {
    return (await this.people.membershipsOf(personId)).map((m) => m.workspaceId)
  }

  /**
   * Creates an account and signs it in. PATCHBAY_SIGNUP decides: `open` lets anyone sign up,
   * `invite` only with an invitation token (whose email the account must use), `off` no one.
   * With an invitation the person joins its workspace at once, and their email counts as verified.
   */
  async signUp(
    input: { email: string; password: string; name: string; invitation?: string },
    origin: RequestOrigin,
    /** The owner-setup link checked already: the first person of an upgraded workspace signs up whatever PATCHBAY_SIGNUP says. */
    ownerSetup = false,
  ): Promise<StartedSession> {
    const email = normalizeEmail(input.email)
    const refuse = async (reason: string) =>
      this.#audit.record({
        workspaceIds: [],
        actor: { kind: 'anonymous', id: null, label: email },
        action: 'auth.sign_up',
        outcome: 'refused',
        detail: { reason },
        origin,
      })
    if (this.signup === 'off' && !ownerSetup) {
      await refuse('sign-up is off')
      throw new PatchbayError(
        'SIGN_UP_CLOSED',
        'Sign-up is turned off on this Patchbay (PATCHBAY_SIGNUP=off).',
        {
          hint: 'Ask the operator for an account, or sign in with single sign-on if it is offered.',
        },
      )
    }
    if (this.signup === 'invite' && !input.invitation && !ownerSetup) {
      await refuse('no invitation')
      throw new PatchbayError(
        'SIGN_UP_CLOSED',
        'Sign-up needs an invitation on this Patchbay (PATCHBAY_SIGNUP=invite): send its token as "invitation".',
      )
    }
    const invitation = input.invitation
      ? await this.#members.usableInvitation(input.invitation, origin, {
          kind: 'anonymous',
          id: null,
          label: email,
        })
      : null
    if (invitation && invitation.email !== email) {
      await refuse('another email than the invitation’s')
      throw new PatchbayError(
        'INVITATION_EMAIL_MISMATCH',
        `This invitation is for ${invitation.email}; sign up with that address.`,
      )
    }
    const problem = passwordProblem(input.password, email)
    if (problem) {
      await refuse('weak password')
      throw new PatchbayError('WEAK_PASSWORD', problem, { hint: PASSWORD_RULES })
    }
    const person = await this.people.create({
      email,
      name: input.name.trim() || email,
      passwordHash: await hashPassword(input.password),
      emailVerified: false,
    })
    if (!person) {
      await refuse('email taken')
      throw new PatchbayError('EMAIL_TAKEN', `An account with the email ${email} exists already.`)
    }
    await this.#audit.record({
      workspaceIds: invitation ? [invitation.workspace_id] : [],
      actor: personActor(person),
      action: 'auth.sign_up',
      object: { kind: 'person', id: person.id },
      outcome: 'ok',
      detail: { email, invitation: invitation?.id ?? null },
      origin,
    })
    if (input.invitation) await this.#members.accept(person, input.invitation, origin)
    return this.startSession(
      (await this.people.byId(person.id))!,
      input.invitation ? 'invitation' : 'password',
      origin,
    )
  }

  /**
   * Signs in with email and password. An unknown account and a wrong password get the same answer
   * after the same work; failures count against the account and the address, and past the limit
   * every try is refused until the window ends (Retry-After), whether the password is right or not.
   */
  async signIn(input: { email: string; password: string }, origin: RequestOrigin): Promise<StartedSession> {
    const email = normalizeEmail(input.email)
    const keys = [`account:${email}`, ...(origin.address ? [`address:${origin.address}`] : [])]
    const now = Date.now()
    const since = new Date(now - SIGN_IN_LIMITS.windowMs).toISOString()
    const counted = await this.#attempts.current(keys, since)
    const person = await this.people.byEmail(email)
    const workspaces = person ? await this.#workspacesOf(person.id) : []
    const actor: AuditActor = person ? personActor(person) : { ...anonymous, label: email }
    await this.#refuseIfLimited(
      counted,
      keys,
      workspaces,
      actor,
      origin,
      'auth.sign_in_failed',
      'failed sign-ins',
    )
    const ok = person?.password_hash
      ? await verifyPassword(input.password, person.password_hash)
      : await verifyAgainstDecoy(input.password)
    if (!person || !ok) {
      await this.#attempts.fail(keys, new Date(now).toISOString(), since)
      await this.#audit.record({
        workspaceIds: workspaces,
        actor,
        action: 'auth.sign_in_failed',
        outcome: 'refused',
        detail: { reason: person ? 'wrong password' : 'unknown account' },
        origin,
      })
      throw new PatchbayError('SIGN_IN_FAILED', 'The email or the password is wrong.')
    }
    await this.#attempts.clear(keys[0])
    if (needsRehash(person.password_hash!))
      await this.people.update(person.id, { password_hash: await hashPassword(input.password) })
    return this.startSession(person, 'password', origin)
  }

  /** Makes a session for a person who proved who they are (password, invitation, single sign-on). */
  async startSession(
    person: PersonRow,
    method: PersonSessionRow['method'],
    origin: RequestOrigin,
  ): Promise<StartedSession> {
    const { row, token } = await this.sessions.create({
      personId: person.id,
      ttlMs: this.sessionTtlMs,
      method,
      address: origin.address,
      userAgent: origin.userAgent,
    })
    await this.#audit.record({
      workspaceIds: await this.#workspacesOf(person.id),
      actor: personActor(person),
      action: 'auth.sign_in',
      object: { kind: 'session', id: row.id },
      outcome: 'ok',
      detail: { method },
      origin,
    })
    return { person, session: row, token, csrfToken: csrfTokenOf(token) }
  }

  /**
   * The person and session a cookie's token names, or why it names none: unknown (another
   * Patchbay's cookie, or made up), ended, expired.
   */
  async resolveSession(token: string): Promise<SessionIdentity | { refused: string }> {
    const session = await this.sessions.byToken(token)
    if (!session) return { refused: 'This session cookie is not known here (it may be of another Patchbay).' }
    if (session.ended_at) return { refused: 'This session has ended (signed out).' }
    if (session.expires_at <= new Date().toISOString()) return { refused: 'This session has expired.' }
    const person = await this.people.byId(session.person_id)
    if (!person) return { refused: 'The account of this session no longer exists.' }
    return { person, session }
  }

  /** A person's live sessions, newest first, a page at a time (GET /v1/me/sessions). */
  async pageSessions(
    personId: string,
    page: PageRequest,
  ): Promise<{ sessions: SessionView[]; next: string | null }> {
    const { items, next } = await this.sessions.pageLiveForPerson(personId, page)
    return { sessions: items.map(sessionView), next }
  }

  /** Ends one of a person's sessions, on every instance at once. */
  async endSession(
    person: PersonRow,
    sessionId: string,
    origin: RequestOrigin,
    action = 'auth.session_ended',
  ) {
    if (!(await this.sessions.end(person.id, sessionId)))
      throw new PatchbayError('SESSION_NOT_FOUND', `You have no live session ${sessionId}.`)
    this.#changes.publish('sessions', [sessionId])
    await this.#audit.record({
      workspaceIds: await this.#workspacesOf(person.id),
      actor: personActor(person),
      action,
      object: { kind: 'session', id: sessionId },
      outcome: 'ok',
      origin,
    })
  }

  /** Signs a person out everywhere: every session ends, on every instance. Returns how many. */
  async endAllSessions(person: PersonRow, origin: RequestOrigin): Promise<number> {
    const ended = await this.sessions.endAll(person.id)
    if (ended.length) this.#changes.publish('sessions', ended)
    await this.#audit.record({
      workspaceIds: await this.#workspacesOf(person.id),
      actor: personActor(person),
      action: 'auth.signed_out_everywhere',
      object: { kind: 'person', id: person.id },
      outcome: 'ok',
      detail: { sessions: ended.length },
      origin,
    })
    return ended.length
  }

  /**
   * Refuses (429, audited) when the account's or the address's counter (keys: the account's first,
   * then the address's) reached its limit in the window; Retry-After says when it ends.
   */
  async #refuseIfLimited(
    counted: Map<string, { failures: number; windowStartedAt: string }>,
    keys: string[],
    workspaces: string[],
    actor: AuditActor,
    origin: RequestOrigin,
    action: string,
    what: string,
  ): Promise<void> {
    const now = Date.now()
    for (const [key, limit] of [
      [keys[0], SIGN_IN_LIMITS.account],
      [keys[1], SIGN_IN_LIMITS.address],
    ] as const) {
      const c = key ? counted.get(key) : undefined
      if (!c || c.failures < limit) continue
      const retryAfterMs = Math.max(1000, Date.parse(c.windowStartedAt) + SIGN_IN_LIMITS.windowMs - now)
      const perAccount = key === keys[0]
      await this.#audit.record({
        workspaceIds: workspaces,
        actor,
        action,
        outcome: 'refused',
        detail: {
          reason: perAccount ? `too many ${what} for the account` : `too many ${what} from the address`,
        },
        origin,
      })
      const wait = Math.ceil(retryAfterMs / 1000)
      throw new PatchbayError(
        action === 'auth.sign_in_failed' ? 'SIGN_IN_RATE_LIMITED' : 'PASSWORD_RESET_RATE_LIMITED',
        perAccount
          ? `Too many ${what} for this account: try again in ${wait} seconds.`
          : `Too many ${what} from your address: try again in ${wait} seconds.`,
        { retryAfterMs },
      )
    }
  }

  /**
   * Changes a signed-in person's password, given the current one (a wrong one counts as a failed
   * sign-in, limited alike). Every other session of theirs ends, on every instance; this one stays.
   * Answers how many ended.
   */
  async changePassword(
    identity: SessionIdentity,
    input: { currentPassword: string; newPassword: string },
    origin: RequestOrigin,
  ): Promise<number> {
    const { person, session } = identity
    const workspaces = await this.#workspacesOf(person.id)
    const actor = personActor(person)
    const refuse = async (reason: string) =>
      this.#audit.record({
        workspaceIds: workspaces,
        actor,
        action: 'auth.password_changed',
        object: { kind: 'person', id: person.id },
        outcome: 'refused',
        detail: { reason },
        origin,
      })
    if (!person.password_hash) {
      await refuse('no password (single sign-on)')
      throw new PatchbayError(
        'PASSWORD_NOT_SET',
        'Your account signs in with single sign-on and has no password to change.',
        { hint: 'To have a password as well, ask for a reset link: POST /v1/auth/password-reset {"email"}.' },
      )
    }
    const keys = [`account:${person.email}`, ...(origin.address ? [`address:${origin.address}`] : [])]
    const now = new Date()
    const since = new Date(now.getTime() - SIGN_IN_LIMITS.windowMs).toISOString()
    await this.#refuseIfLimited(
      await this.#attempts.current(keys, since),
      keys,
      workspaces,
      actor,
      origin,
      'auth.sign_in_failed',
      'failed sign-ins',
    )
    if (!(await verifyPassword(input.currentPassword, person.password_hash))) {
      await this.#attempts.fail(keys, now.toISOString(), since)
      await refuse('wrong current password')
      throw new PatchbayError('CURRENT_PASSWORD_WRONG', 'The current password is wrong.')
    }
    const ended = await this.#setPassword(person, input.newPassword, refuse, { keepSession: session.id })
    await this.#audit.record({
      workspaceIds: workspaces,
      actor,
      action: 'auth.password_changed',
      object: { kind: 'person', id: person.id },
      outcome: 'ok',
      detail: { otherSessionsEnded: ended },
      origin,
    })
    return ended
  }

  /**
   * Sets a new password, if it follows the rules (else refused, audited by `refuse`): every session
   * of the person ends but `keepSession`, on every instance. Answers how many ended.
   */
  async #setPassword(
    person: PersonRow,
    password: string,
    refuse: (reason: string) => Promise<unknown>,
    opts: { keepSession?: string; verified?: boolean },
  ): Promise<number> {
    const problem = passwordProblem(password, person.email)
    if (problem) {
      await refuse('weak password')
      throw new PatchbayError('WEAK_PASSWORD', problem, { hint: PASSWORD_RULES })
    }
    await this.people.update(person.id, {
      password_hash: await hashPassword(password),
      ...(opts.verified ? { email_verified: 1 } : {}),
    })
    const ended = await this.sessions.endAll(person.id, opts.keepSession)
    if (ended.length) this.#changes.publish('sessions', ended)
    return ended.length
  }

  /**
   * The MAC of a reset link: over the person, the expiry and their current password hash, so the
   * link stops working once the password changes (single use) or the time passes, with nothing
   * stored. Every instance computes the same one under the master key.
   */
  #resetMac(person: PersonRow, expiresAt: number): string {
    return this.#vault.mac(`password-reset\0${person.id}\0${expiresAt}\0${person.password_hash ?? ''}`)
  }

  /**
   * Mails a password-reset link to the account with this email. The answer is the same whether
   * such an account exists or not (nothing to learn about who has an account), and the mail is
   * sent without being waited for (nor its time measured). Requests are limited per email and per
   * address like failed sign-ins.
   */
  async requestPasswordReset(emailGiven: string, origin: RequestOrigin): Promise<void> {
    const mailer = this.#mailer
    if (!mailer)
      throw new PatchbayError(
        'PASSWORD_RESET_UNAVAILABLE',
        'This Patchbay sends no mail (PATCHBAY_SMTP_URL is not set), so it cannot mail a reset link.',
      )
    const email = normalizeEmail(emailGiven)
    const keys = [`reset:${email}`, ...(origin.address ? [`reset-address:${origin.address}`] : [])]
    const now = Date.now()
    const since = new Date(now - SIGN_IN_LIMITS.windowMs).toISOString()
    const person = await this.people.byEmail(email)
    const workspaces = person ? await this.#workspacesOf(person.id) : []
    const actor: AuditActor = person ? personActor(person) : { ...anonymous, label: email }
    await this.#refuseIfLimited(
      await this.#attempts.current(keys, since),
      keys,
      workspaces,
      actor,
      origin,
      'auth.password_reset_requested',
      'password-reset requests',
    )
    await this.#attempts.fail(keys, new Date(now).toISOString(), since)
    await this.#audit.record({
      workspaceIds: workspaces,
      actor,
      action: 'auth.password_reset_requested',
      object: person ? { kind: 'person', id: person.id } : undefined,
      outcome: person ? 'ok' : 'refused',
      detail: person ? {} : { reason: 'unknown account (the same answer was given)' },
      origin,
    })
    if (!person) return
    const expiresAt = now + PASSWORD_RESET_TTL_MS
    const token = `${person.id}.${expiresAt}.${this.#resetMac(person, expiresAt)}`
    const link = this.#address.of(`/#/reset-password/${token}`)
    mailer
      .send({
        to: person.email,
        subject: 'Reset your Patchbay password',
        text: [
          `Someone (we hope you) asked to reset the password of the Patchbay account ${person.email}.`,
          '',
          `Choose a new password here (the link works once, until ${new Date(expiresAt).toISOString()}):`,
          link,
          '',
          'If it was not you, ignore this mail: your password stays as it is.',
        ].join('\n'),
      })
      .catch((err: unknown) =>
        this.#audit.record({
          workspaceIds: workspaces,
          actor,
          action: 'auth.password_reset_mail_failed',
          object: { kind: 'person', id: person.id },
          outcome: 'refused',
          detail: { reason: err instanceof Error ? err.message : String(err) },
          origin,
        }),
      )
  }

  /**
   * Sets a new password with a mailed reset link: every session of the person ends (on every
   * instance), their failed sign-ins are forgotten, and a new session starts. The link works once.
   */
  async resetPassword(
    input: { token: string; password: string },
    origin: RequestOrigin,
  ): Promise<StartedSession> {
    const last = input.token.lastIndexOf('.')
    const middle = input.token.lastIndexOf('.', last - 1)
    const personId = middle > 0 ? input.token.slice(0, middle) : ''
    const expiresAt = Number(input.token.slice(middle + 1, last))
    const person = personId ? await this.people.byId(personId) : undefined
    const given = Buffer.from(input.token.slice(last + 1))
    const expected =
      person && Number.isSafeInteger(expiresAt) ? Buffer.from(this.#resetMac(person, expiresAt)) : null
    const genuine = expected !== null && given.length === expected.length && timingSafeEqual(given, expected)
    const workspaces = person ? await this.#workspacesOf(person.id) : []
    const actor: AuditActor = person ? personActor(person) : anonymous
    const refuse = async (reason: string) =>
      this.#audit.record({
        workspaceIds: genuine ? workspaces : [],
        actor: genuine ? actor : anonymous,
        action: 'auth.password_reset',
        outcome: 'refused',
        detail: { reason },
        origin,
      })
    if (!person || !genuine) {
      await refuse('not a valid link (forged, or used already)')
      throw new PatchbayError(
        'PASSWORD_RESET_INVALID',
        'This password-reset link is not valid, or was used already.',
      )
    }
    if (expiresAt <= Date.now()) {
      await refuse('expired')
      throw new PatchbayError(
        'PASSWORD_RESET_INVALID',
        `This password-reset link expired at ${new Date(expiresAt).toISOString()}.`,
      )
    }
    // Opening the mailed link proves the mailbox.
    const ended = await this.#setPassword(person, input.password, refuse, { verified: true })
    await this.#attempts.clear(`account:${person.email}`)
    await this.#audit.record({
      workspaceIds: workspaces,
      actor,
      action: 'auth.password_reset',
      object: { kind: 'person', id: person.id },
      outcome: 'ok',
      detail: { sessionsEnded: ended },
      origin,
    })
    return this.startSession((await this.people.byId(person.id))!, 'password', origin)
  }

  /** Records a refused cookie-authenticated write (no or a wrong CSRF token). */
  async refusedCsrf(identity: SessionIdentity, route: string, origin: RequestOrigin): Promise<void> {
    await this.#audit.record({
      workspaceIds: await this.#workspacesOf(identity.person.id),
      actor: personActor(identity.person),
      action: 'auth.csrf_refused',
      object: { kind: 'session', id: identity.session.id },
      outcome: 'refused',
      detail: { route },
      origin,
    })
  }
}
