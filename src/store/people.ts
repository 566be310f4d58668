// People who sign in and their single sign-on identities (migration 0010), and the views of
// memberships that name people and workspaces (memberships themselves: store/memberships.ts).
// Emails are stored lower-cased: one account per address.
import type { Kysely, Selectable } from 'kysely'
import { newId, nowIso } from './ids.ts'
import { keyset, type Page, type PageKey, type PageRequest, pageOf } from './paging.ts'
import type { Database, PeopleTable, Role } from './schema.ts'

export type PersonRow = Selectable<PeopleTable>

export const normalizeEmail = (email: string) => email.trim().toLowerCase()

/** Members page in the order they joined: by (joined, person id), ascending. */
const MEMBERS_BY_JOINING: PageKey<MemberWithPerson> = {
  columns: [{ ref: 'memberships.created_at' }, { ref: 'memberships.person_id' }],
  of: (m) => [m.joinedAt, m.personId],
  order: 'asc',
}

export class People {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  /** Creates a person; null when the email already has an account (the unique index decides). */
  async create(opts: {
    email: string
    name: string
    passwordHash: string | null
    emailVerified: boolean
  }): Promise<PersonRow | null> {
    const now = nowIso()
    const row: PersonRow = {
      id: newId('per'),
      email: normalizeEmail(opts.email),
      name: opts.name,
      password_hash: opts.passwordHash,
      email_verified: opts.emailVerified ? 1 : 0,
      created_at: now,
      updated_at: now,
    }
    const inserted = await this.#db
      .insertInto('people')
      .values(row)
      .onConflict((oc) => oc.column('email').doNothing())
      .returning('id')
      .executeTakeFirst()
    return inserted ? row : null
  }

  async byId(id: string): Promise<PersonRow | undefined> {
    return this.#db.selectFrom('people').selectAll().where('id', '=', id).executeTakeFirst()
  }

  async byEmail(email: string): Promise<PersonRow | undefined> {
    return this.#db
      .selectFrom('people')
      .selectAll()
      .where('email', '=', normalizeEmail(email))
      .executeTakeFirst()
  }

  async update(
    id: string,
    set: Partial<Pick<PersonRow, 'name' | 'password_hash' | 'email_verified'>>,
  ): Promise<void> {
    await this.#db
      .updateTable('people')
      .set({ ...set, updated_at: nowIso() })
      .where('id', '=', id)
      .execute()
  }

  /** The person an identity (issuer, subject) is linked to. */
  async byIdentity(issuer: string, subject: string): Promise<PersonRow | undefined> {
    return this.#db
      .selectFrom('identities')
      .innerJoin('people', 'people.id', 'identities.person_id')
      .selectAll('people')
      .where('identities.issuer', '=', issuer)
      .where('identities.subject', '=', subject)
      .executeTakeFirst()
  }

  async linkIdentity(issuer: string, subject: string, personId: string): Promise<void> {
    await this.#db
      .insertInto('identities')
      .values({ issuer, subject, person_id: personId, created_at: nowIso() })
      .onConflict((oc) => oc.columns(['issuer', 'subject']).doNothing())
      .execute()
  }

  /** A person's workspaces with their role in each, oldest membership first. */
  async membershipsOf(personId: string): Promise<MembershipWithWorkspace[]> {
    return this.#db
      .selectFrom('memberships')
      .innerJoin('workspaces', 'workspaces.id', 'memberships.workspace_id')
      .select([
        'memberships.workspace_id as workspaceId',
        'workspaces.name as workspaceName',
        'memberships.role as role',
        'memberships.created_at as joinedAt',
      ])
      .where('memberships.person_id', '=', personId)
      .orderBy('memberships.created_at')
      .orderBy('memberships.workspace_id')
      .execute()
  }

  /** A workspace's members with their email and name. */
  #members(workspaceId: string) {
    return this.#db
      .selectFrom('memberships')
      .innerJoin('people', 'people.id', 'memberships.person_id')
      .select([
        'memberships.person_id as personId',
        'people.email as email',
        'people.name as name',
        'memberships.role as role',
        'memberships.created_at as joinedAt',
        'memberships.updated_at as updatedAt',
      ])
      .where('memberships.workspace_id', '=', workspaceId)
  }

  /** A workspace's members in the order they joined, a page at a time. */
  async pageMembersOf(workspaceId: string, page: PageRequest): Promise<Page<MemberWithPerson>> {
    const q = this.#members(workspaceId)
    return pageOf(await keyset(q, MEMBERS_BY_JOINING, page).execute(), MEMBERS_BY_JOINING, page)
  }

  /** One member of a workspace with their email and name, or undefined. */
  async memberOf(workspaceId: string, personId: string): Promise<MemberWithPerson | undefined> {
    return this.#members(workspaceId).where('memberships.person_id', '=', personId).executeTakeFirst()
  }
}

export interface MembershipWithWorkspace {
  workspaceId: string
  workspaceName: string
  role: Role
  joinedAt: string
}

export interface MemberWithPerson {
  personId: string
  email: string
  name: string
  role: Role
  joinedAt: string
  updatedAt: string
}
