// A workspace's members and invitations. Who may call each route is the policy table's decision;
// what is checked here is what depends on the people involved: only an owner makes, changes or
// removes an owner; no change leaves a workspace without an owner; an invitation is taken once,
// before it expires, by the person it was sent to. A member removed, or whose role changed, is cut
// off at once on every instance: their sessions end and their personal keys in the workspace are
// revoked (both announced through the engine's changes).
import { type Kysely, sql } from 'kysely'
import { PatchbayError } from '../../kit/errors.ts'
import type { Mailer } from '../../kit/mailer.ts'
import type { ApiKeys } from '../../store/api-keys.ts'
import type { Store } from '../../store/database.ts'
import { type InvitationRow, Invitations } from '../../store/invitations.ts'
import { Memberships as MembershipRows } from '../../store/memberships.ts'
import type { Page, PageRequest } from '../../store/paging.ts'
import { type MemberWithPerson, normalizeEmail, People, type PersonRow } from '../../store/people.ts'
import { PersonSessions } from '../../store/person-sessions.ts'
import type { Database, Role } from '../../store/schema.ts'
import { Workspaces } from '../../store/workspaces.ts'
import { ROLES } from '../access/caller.ts'
import type { KeyRevocations } from '../access/key-revocations.ts'
import type { MembershipService } from '../access/memberships.ts'
import type { Changes } from '../changes/changes.ts'
import type { PublicAddress } from '../public-address.ts'
import type { AuditActor, AuditTrail, RequestOrigin } from './audit-trail.ts'

/** How long an invitation link works. */
export const INVITATION_TTL_MS = 7 * 24 * 3600_000

/** Who is acting on a workspace's members: their role there, and who they are for the audit log. */
export interface MemberActor {
  role: Role
  personId: string | null
  audit: AuditActor
  origin: RequestOrigin
}

export interface InvitationView {
  id: string
  email: string
  role: Role
  status: 'pending' | 'accepted' | 'revoked' | 'expired'
  invitedBy: string
  createdAt: string
  expiresAt: string
  acceptedAt: string | null
}

export const invitationView = (row: InvitationRow, now = new Date().toISOString()): InvitationView => ({
  id: row.id,
  email: row.email,
  role: row.role,
  status: row.accepted_at
    ? 'accepted'
    : row.revoked_at
      ? 'revoked'
      : row.expires_at <= now
        ? 'expired'
        : 'pending',
  invitedBy: row.invited_by,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  acceptedAt: row.accepted_at,
})

export interface MembersOptions {
  store: Store
  /** Adds, changes and removes memberships (every instance's cache of them follows at once). */
  memberships: MembershipService
  keys: ApiKeys
  revocations: KeyRevocations
  changes: Changes
  audit: AuditTrail
  mailer: Mailer | null
  /** The address people open Patchbay at (links in mail). */
  address: PublicAddress
}

export class Members {
  readonly people: People
  readonly invitations: Invitations
  readonly sessions: PersonSessions
  #db: Kysely<Database>
  #store: Store
  #workspaces: Workspaces
  #memberships: MembershipService
  #keys: ApiKeys
  #revocations: KeyRevocations
  #changes: Changes
  #audit: AuditTrail
  #mailer: Mailer | null
  #address: PublicAddress

  constructor(opts: MembersOptions) {
    this.#store = opts.store
    this.#db = opts.store.db
    this.#workspaces = new Workspaces(this.#db, opts.store.kind)
    this.people = new People(this.#db)
    this.#memberships = opts.memberships
    this.invitations = new Invitations(this.#db)
    this.sessions = new PersonSessions(this.#db)
    this.#keys = opts.keys
    this.#revocations = opts.revocations
    this.#changes = opts.changes
    this.#audit = opts.audit
    this.#mailer = opts.mailer
    this.#address = opts.address
  }

  /** Whether invitations are mailed (SMTP configured). */
  get mails(): boolean {
    return this.#mailer !== null
  }

  /** The members in the order they joined, a page at a time. */
  page(workspaceId: string, page: PageRequest): Promise<Page<MemberWithPerson>> {
    return this.people.pageMembersOf(workspaceId, page)
  }

  /** A person's role in a workspace, or null when they are not a member. */
  async roleOf(workspaceId: string, personId: string): Promise<Role | null> {
    return (await this.#memberships.find(workspaceId, personId))?.role ?? null
  }

  /** Adds a membership unless the person has one; returns whether it was added. */
  async #addIfNew(workspaceId: string, personId: string, role: Role): Promise<boolean> {
    if (await this.#memberships.find(workspaceId, personId)) return false
    await this.#memberships.put(workspaceId, personId, role)
    return true
  }

  /** Adds a person who has an account, by email, with a role. */
  async add(actor: MemberActor, workspaceId: string, input: { email: string; role: Role }) {
    await this.#mayGrant(actor, workspaceId, input.role, 'member.added', input.email)
    const person = await this.people.byEmail(input.email)
    if (!person) {
      await this.#refused(
        actor,
        workspaceId,
        'member.added',
        { email: normalizeEmail(input.email) },
        'no account',
      )
      throw new PatchbayError(
        'MEMBER_NOT_FOUND',
        `No account has the email ${normalizeEmail(input.email)}.`,
        {
          hint: `Invite them instead: POST /v1/workspaces/${workspaceId}/invitations {"email","role"}.`,
        },
      )
    }
    const added = await this.#addIfNew(workspaceId, person.id, input.role)
    if (!added) return this.#memberOrThrow(workspaceId, person.id)
    await this.#audit.record({
      workspaceIds: [workspaceId],
      actor: actor.audit,
      action: 'member.added',
      object: { kind: 'person', id: person.id },
      outcome: 'ok',
      detail: { email: person.email, role: input.role },
      origin: actor.origin,
    })
    return this.#memberOrThrow(workspaceId, person.id)
  }

  /** Changes a member's role; their sessions and personal keys stop working at once. */
  async setRole(actor: MemberActor, workspaceId: string, personId: string, role: Role) {
    const before = await this.#changeMember(actor, workspaceId, personId, 'member.role_changed', role)
    if (before === role) return this.#memberOrThrow(workspaceId, personId)
    await this.#audit.record({
      workspaceIds: [workspaceId],
      actor: actor.audit,
      action: 'member.role_changed',
      object: { kind: 'person', id: personId },
      outcome: 'ok',
      detail: { from: before, to: role },
      origin: actor.origin,
    })
    await this.#memberships.put(workspaceId, personId, role)
    await this.#cutOff(workspaceId, personId)
    return this.#memberOrThrow(workspaceId, personId)
  }

  /** Removes a member; their sessions and personal keys in the workspace stop working at once. */
  async remove(actor: MemberActor, workspaceId: string, personId: string): Promise<void> {
    const before = await this.#changeMember(actor, workspaceId, personId, 'member.removed', null)
    await this.#audit.record({
      workspaceIds: [workspaceId],
      actor: actor.audit,
      action: 'member.removed',
      object: { kind: 'person', id: personId },
      outcome: 'ok',
      detail: { role: before },
      origin: actor.origin,
    })
    await this.#memberships.remove(workspaceId, personId)
    await this.#cutOff(workspaceId, personId)
  }

  /**
   * Applies a role change (or a removal, role null) under a lock on the workspace's row, so two
   * owners demoting each other at once cannot leave it without one. Returns the role before;
   * the caller then tells the membership service (caches on every instance, the person's keys).
   */
  async #changeMember(
    actor: MemberActor,
    workspaceId: string,
    personId: string,
    action: string,
    role: Role | null,
  ): Promise<Role> {
    const refusal = await this.#db.transaction().execute(async (trx) => {
      if (this.#store.kind === 'postgres')
        await sql`SELECT id FROM workspaces WHERE id = ${workspaceId} FOR UPDATE`.execute(trx)
      const memberships = new MembershipRows(trx)
      const current = await memberships.find(workspaceId, personId)
      if (!current) return { error: 'missing' as const }
      if ((current.role === 'owner' || role === 'owner') && actor.role !== 'owner')
        return { error: 'owner' as const, before: current.role }
      const owners = (await memberships.ofWorkspace(workspaceId)).filter((m) => m.role === 'owner').length
      if (current.role === 'owner' && role !== 'owner' && owners <= 1)
        return { error: 'last' as const, before: current.role }
      if (role === null) await memberships.remove(workspaceId, personId)
      else if (role !== current.role) await memberships.put(workspaceId, personId, role)
      return { before: current.role }
    })
    if (!('error' in refusal)) return refusal.before
    const detail = { personId, role, current: refusal.before ?? null }
    if (refusal.error === 'missing') {
      await this.#refused(actor, workspaceId, action, detail, 'not a member')
      throw new PatchbayError('MEMBER_NOT_FOUND', `The workspace has no member ${personId}.`)
    }
    if (refusal.error === 'owner') {
      await this.#refused(actor, workspaceId, action, detail, 'owner role needed')
      throw new PatchbayError(
        'ROLE_FORBIDDEN',
        role === 'owner'
          ? 'Only an owner may make someone an owner; you are an admin.'
          : 'Only an owner may change or remove an owner; you are an admin.',
      )
    }
    await this.#refused(actor, workspaceId, action, detail, 'last owner')
    throw new PatchbayError(
      'LAST_OWNER',
      role === null
        ? 'This is the last owner of the workspace: removing them would leave it without one.'
        : `This is the last owner of the workspace: making them ${role} would leave it without one.`,
    )
  }

  /**
   * Ends the person's sessions and revokes every key they made in the workspace, on every
   * instance at once: a member removed or given another role signs in again, and makes new keys.
   */
  async #cutOff(workspaceId: string, personId: string): Promise<void> {
    const sessions = await this.sessions.endAll(personId)
    if (sessions.length) this.#changes.publish('sessions', sessions)
    const keys = await this.#keys.revokeMadeBy(workspaceId, personId, ROLES)
    if (keys.length) this.#revocations.publish(keys)
  }

  async #memberOrThrow(workspaceId: string, personId: string): Promise<MemberWithPerson> {
    const m = await this.people.memberOf(workspaceId, personId)
    if (!m) throw new PatchbayError('MEMBER_NOT_FOUND', `The workspace has no member ${personId}.`)
    return m
  }

  /** Only an owner grants the owner role. */
  async #mayGrant(actor: MemberActor, workspaceId: string, role: Role, action: string, email: string) {
    if (role !== 'owner' || actor.role === 'owner') return
    await this.#refused(
      actor,
      workspaceId,
      action,
      { email: normalizeEmail(email), role },
      'owner role needed',
    )
    throw new PatchbayError('ROLE_FORBIDDEN', 'Only an owner may make someone an owner; you are an admin.')
  }

  #refused(actor: MemberActor, workspaceId: string, action: string, detail: object, reason: string) {
    return this.#audit.record({
      workspaceIds: [workspaceId],
      actor: actor.audit,
      action,
      outcome: 'refused',
      detail: { ...detail, reason },
      origin: actor.origin,
    })
  }

  // ---- invitations

  /** The link a person opens to accept: the dashboard's invitation page. */
  invitationUrl(token: string): string {
    return this.#address.of(`/#/invitations/${token}`)
  }

  /**
   * Invites an email with a role: a single-use link that expires. With SMTP configured it is
   * mailed; either way the answer carries it, for the inviter to pass on.
   */
  async invite(actor: MemberActor, workspaceId: string, input: { email: string; role: Role }) {
    await this.#mayGrant(actor, workspaceId, input.role, 'invitation.created', input.email)
    const email = normalizeEmail(input.email)
    const { row, token } = await this.invitations.create({
      workspaceId,
      email,
      role: input.role,
      invitedBy: actor.personId ?? actor.audit.id ?? 'unknown',
      ttlMs: INVITATION_TTL_MS,
    })
    const url = this.invitationUrl(token)
    let mailed = false
    let mailError: string | null = null
    if (this.#mailer) {
      const workspace = await this.#db
        .selectFrom('workspaces')
        .select('name')
        .where('id', '=', workspaceId)
        .executeTakeFirst()
      try {
        await this.#mailer.send({
          to: email,
          subject: `You are invited to ${workspace?.name ?? 'a workspace'} on Patchbay`,
          text: [
            `${actor.audit.label ?? 'Someone'} invites you to the Patchbay workspace "${workspace?.name ?? workspaceId}" as ${input.role}.`,
            '',
            'Open this link to accept (it works once, until ' + row.expires_at + '):',
            url,
            '',
            'If you did not expect this, ignore this mail.',
          ].join('\n'),
        })
        mailed = true
      } catch (err) {
        // The invitation stands: the inviter copies the link instead.
        mailError = `The mail could not be sent (${(err as Error).message}); pass the link on yourself.`
      }
    }
    await this.#audit.record({
      workspaceIds: [workspaceId],
      actor: actor.audit,
      action: 'invitation.created',
      object: { kind: 'invitation', id: row.id },
      outcome: 'ok',
      detail: { email, role: input.role, mailed },
      origin: actor.origin,
    })
    return { invitation: invitationView(row), url, token, expiresAt: row.expires_at, mailed, mailError }
  }

  /** The workspace's invitations, newest first, a page at a time. */
  async pageInvitations(
    workspaceId: string,
    page: PageRequest,
  ): Promise<{ invitations: InvitationView[]; next: string | null }> {
    const now = new Date().toISOString()
    const { items, next } = await this.invitations.page(workspaceId, page)
    return { invitations: items.map((r) => invitationView(r, now)), next }
  }

  async revokeInvitation(actor: MemberActor, workspaceId: string, id: string): Promise<void> {
    if (!(await this.invitations.revoke(workspaceId, id))) {
      const known = (await this.invitations.forWorkspace(workspaceId)).find((r) => r.id === id)
      await this.#refused(actor, workspaceId, 'invitation.revoked', { invitationId: id }, 'not pending')
      if (!known)
        throw new PatchbayError('INVITATION_NOT_FOUND', `The workspace has no invitation ${id}.`, {
          hint: `List invitations with GET /v1/workspaces/${workspaceId}/invitations.`,
        })
      throw new PatchbayError(
        'INVITATION_NOT_USABLE',
        `The invitation is ${invitationView(known).status} already.`,
      )
    }
    await this.#audit.record({
      workspaceIds: [workspaceId],
      actor: actor.audit,
      action: 'invitation.revoked',
      object: { kind: 'invitation', id },
      outcome: 'ok',
      origin: actor.origin,
    })
  }

  /** An invitation's row if its token can still be accepted, else the refusal (audited). */
  async usableInvitation(token: string, origin: RequestOrigin, who: AuditActor): Promise<InvitationRow> {
    const row = await this.invitations.byToken(token)
    if (!row) {
      await this.#audit.record({
        workspaceIds: [],
        actor: who,
        action: 'invitation.accepted',
        outcome: 'refused',
        detail: { reason: 'unknown token' },
        origin,
      })
      throw new PatchbayError('INVITATION_NOT_FOUND', 'No invitation has this token.')
    }
    const status = invitationView(row).status
    if (status !== 'pending') {
      await this.#audit.record({
        workspaceIds: [row.workspace_id],
        actor: who,
        action: 'invitation.accepted',
        object: { kind: 'invitation', id: row.id },
        outcome: 'refused',
        detail: { reason: status },
        origin,
      })
      throw new PatchbayError(
        'INVITATION_NOT_USABLE',
        status === 'accepted'
          ? 'This invitation was used already: each link works once.'
          : status === 'revoked'
            ? 'This invitation was revoked.'
            : `This invitation expired at ${row.expires_at}.`,
      )
    }
    return row
  }

  /**
   * Accepts an invitation for a person whose email it was sent to: they become a member with its
   * role (a member already keeps the role they have). Single use, whichever instance is asked.
   */
  async accept(person: PersonRow, token: string, origin: RequestOrigin) {
    const who: AuditActor = { kind: 'person', id: person.id, label: person.email }
    const row = await this.usableInvitation(token, origin, who)
    if (row.email !== person.email) {
      await this.#audit.record({
        workspaceIds: [row.workspace_id],
        actor: who,
        action: 'invitation.accepted',
        object: { kind: 'invitation', id: row.id },
        outcome: 'refused',
        detail: { reason: 'another email', invited: row.email },
        origin,
      })
      throw new PatchbayError(
        'INVITATION_EMAIL_MISMATCH',
        `This invitation is for ${row.email}; you are signed in as ${person.email}.`,
      )
    }
    return this.#join(row, person, who, origin)
  }

  /** Takes the invitation and adds the membership (the invitation's email is proven). */
  async #join(row: InvitationRow, person: PersonRow, who: AuditActor, origin: RequestOrigin) {
    if (!(await this.invitations.take(row.id, person.id)))
      throw new PatchbayError(
        'INVITATION_NOT_USABLE',
        'This invitation was used already: each link works once.',
      )
    if (!person.email_verified) await this.people.update(person.id, { email_verified: 1 })
    const added = await this.#addIfNew(row.workspace_id, person.id, row.role)
    await this.#audit.record({
      workspaceIds: [row.workspace_id],
      actor: who,
      action: 'invitation.accepted',
      object: { kind: 'invitation', id: row.id },
      outcome: 'ok',
      detail: { email: row.email, role: row.role, alreadyMember: !added },
      origin,
    })
    if (added)
      await this.#audit.record({
        workspaceIds: [row.workspace_id],
        actor: who,
        action: 'member.added',
        object: { kind: 'person', id: person.id },
        outcome: 'ok',
        detail: { email: person.email, role: row.role, by: 'invitation' },
        origin,
      })
    const role = (await this.#memberships.find(row.workspace_id, person.id))!.role
    return { workspaceId: row.workspace_id, role }
  }

  /** Accepts every pending invitation of a verified email (single sign-on); returns the workspaces joined. */
  async acceptPending(person: PersonRow, origin: RequestOrigin): Promise<string[]> {
    const joined: string[] = []
    const who: AuditActor = { kind: 'person', id: person.id, label: person.email }
    for (const row of await this.invitations.pendingFor(person.email)) {
      try {
        joined.push((await this.#join(row, person, who, origin)).workspaceId)
      } catch (err) {
        if (!(err instanceof PatchbayError)) throw err
      }
    }
    return joined
  }

  /** Workspaces whose settings claim an email domain for single sign-on (`emailDomain`). */
  async workspacesClaiming(domain: string): Promise<string[]> {
    return this.#workspaces.claiming(domain)
  }

  /** Adds a person to a workspace by its claimed domain (single sign-on), as a member. */
  async joinByDomain(workspaceId: string, person: PersonRow, origin: RequestOrigin): Promise<void> {
    if (!(await this.#addIfNew(workspaceId, person.id, 'member'))) return
    await this.#audit.record({
      workspaceIds: [workspaceId],
      actor: { kind: 'person', id: person.id, label: person.email },
      action: 'member.added',
      object: { kind: 'person', id: person.id },
      outcome: 'ok',
      detail: { email: person.email, role: 'member', by: 'email domain' },
      origin,
    })
  }
}
