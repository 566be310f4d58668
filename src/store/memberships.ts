// Who belongs to which workspace, with which role (migration 0010).
import type { Kysely } from 'kysely'
import { nowIso } from './ids.ts'
import type { Database, MembershipsTable, Role } from './schema.ts'

export type MembershipRow = MembershipsTable

export class Memberships {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  /** A person's memberships, oldest first (the first is the workspace they act on by default). */
  async ofPerson(personId: string): Promise<MembershipRow[]> {
    return this.#db
      .selectFrom('memberships')
      .selectAll()
      .where('person_id', '=', personId)
      .orderBy('created_at')
      .orderBy('workspace_id')
      .execute()
  }

  async ofWorkspace(workspaceId: string): Promise<MembershipRow[]> {
    return this.#db
      .selectFrom('memberships')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .orderBy('created_at')
      .orderBy('person_id')
      .execute()
  }

  async find(workspaceId: string, personId: string): Promise<MembershipRow | undefined> {
    return this.#db
      .selectFrom('memberships')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('person_id', '=', personId)
      .executeTakeFirst()
  }

  /** Adds a person to a workspace, or changes their role there. */
  async put(workspaceId: string, personId: string, role: Role): Promise<void> {
    const now = nowIso()
    await this.#db
      .insertInto('memberships')
      .values({ workspace_id: workspaceId, person_id: personId, role, created_at: now, updated_at: now })
      .onConflict((oc) => oc.columns(['workspace_id', 'person_id']).doUpdateSet({ role, updated_at: now }))
      .execute()
  }

  /** Removes a person from a workspace; true when they were in it. */
  async remove(workspaceId: string, personId: string): Promise<boolean> {
    const r = await this.#db
      .deleteFrom('memberships')
      .where('workspace_id', '=', workspaceId)
      .where('person_id', '=', personId)
      .executeTakeFirst()
    return Number(r.numDeletedRows) > 0
  }
}
