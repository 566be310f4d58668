// Run records: what ran, for whom, how it ended. Inputs and outputs are not kept, so no secret
// given in an input (a Task-Board API Call's key and token) can ever land here.
import type { Kysely } from 'kysely'
import type { Database, StepRunsTable } from './schema.ts'

export type StepRunRow = StepRunsTable

export class StepRuns {
  #db: Kysely<Database>
  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async insert(row: StepRunRow) {
    await this.#db.insertInto('step_runs').values(row).execute()
  }

  async list(workspaceId: string, opts: { limit: number; before?: string; callerKeyId?: string }) {
    let q = this.#db.selectFrom('step_runs').selectAll().where('workspace_id', '=', workspaceId)
    if (opts.callerKeyId) q = q.where('caller_key_id', '=', opts.callerKeyId)
    if (opts.before) q = q.where('created_at', '<', opts.before)
    return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(opts.limit).execute()
  }
}
