// People's accounts and sessions: sign-up (as PATCHBAY_SIGNUP allows), sign-in with a password
// (failures limited per account and per address, counted in the store so every instance shares
// the limits), sessions (a random token in an HttpOnly cookie, stored hashed, ended one by one or
// all at once on every instance), and the CSRF token each session's writes carry.
import { createHash, timingSafeEqual } from 'node:crypto'
import { PatchbayError } from '../../kit/errors.ts'
import {
  hashPassword,
  needsRehash,
  PASSWORD_RULES,
  passwordProblem,
  verifyAgainstDecoy,
  verifyPassword,
} from '../../kit/passwords.ts'
import type { Store } from '../../store/database.ts'
import { normalizeEmail, type PersonRow } from '../../store/people.ts'
import { type PersonSessionRow, SignInAttempts } from '../../store/person-sessions.ts'
import type { Changes } from '../changes/changes.ts'
import { type AuditActor, type AuditTrail, anonymous, type RequestOrigin } from './audit-trail.ts'
import type { Members } from './members.ts'

export type SignupMode = 'open' | 'invite' | 'off'

/** Failed sign-ins allowed per window: per account, and per address (many accounts, one place). */
export const SIGN_IN_LIMITS = { account: 5, address: 30, windowMs: 15 * 60_000 } as const

export interface AccountsOptions {
  store: Store
  members: Members
  changes: Changes
  audit: AuditTrail
  signup: SignupMode
  sessionTtlMs: number
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

  constructor(opts: AccountsOptions) {
    this.signup = opts.signup
    this.sessionTtlMs = opts.sessionTtlMs
    this.#members = opts.members
    this.#changes = opts.changes
    this.#audit = opts.audit
    this.#attempts = new SignInAttempts(opts.store.db)
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
    for (const [key, limit] of [
      [keys[0], SIGN_IN_LIMITS.account],
      [keys[1], SIGN_IN_LIMITS.address],
    ] as const) {
      const c = key ? counted.get(key) : undefined
      if (!c || c.failures < limit) continue
      const retryAfterMs = Math.max(1000, Date.parse(c.windowStartedAt) + SIGN_IN_LIMITS.windowMs - now)
      await this.#audit.record({
        workspaceIds: workspaces,
        actor,
        action: 'auth.sign_in_failed',
        outcome: 'refused',
        detail: {
          reason: key.startsWith('account:')
            ? 'too many failures for the account'
            : 'too many failures from the address',
        },
        origin,
      })
      throw new PatchbayError(
        'SIGN_IN_RATE_LIMITED',
        key.startsWith('account:')
          ? `Too many failed sign-ins for this account: try again in ${Math.ceil(retryAfterMs / 1000)} seconds.`
          : `Too many failed sign-ins from your address: try again in ${Math.ceil(retryAfterMs / 1000)} seconds.`,
        { retryAfterMs },
      )
    }
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

  async listSessions(personId: string): Promise<SessionView[]> {
    return (await this.sessions.liveForPerson(personId)).map(sessionView)
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
