// Long work as jobs with progress (issue 27, build 5): a bulk enrichment of many contacts, a replay
// of many deliveries. `POST /v1/jobs` stores a job and answers at once; the work is done here, a
// piece at a time, with its progress (done of total, errors) and its result so far written after
// each piece, so a person, the CLI and the dashboard can watch it (GET /v1/jobs/{id}).
//
// A job is claimed in its row before it is worked on (store/jobs.ts: a holder and a lease, renewed
// with each piece's progress), never scanned by every instance: the instance that stores a job
// works on it at once, and the one sweep (jobs/sweeps.ts, one instance at a time) hands on jobs
// nobody holds — queued ones, and those whose holder stopped (its lease ended). A stopping instance
// gives its jobs back at once; another instance, or the same one started again, resumes them from
// `done`: the pieces already done stay done, and the piece under way when it stopped is done again
// (a lookup already charged is charged again only if it is not in the lookup cache).
//
// Each kind says, as data, how big its job is and how to do its next piece; the runner here does
// the claiming, the progress, cancelling and stopping for all of them.
import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../../kit/clock.ts'
import { PatchbayError } from '../../kit/errors.ts'
import { isoAt, newId } from '../../store/ids.ts'
import type { JobRow, Jobs } from '../../store/jobs.ts'
import type { PageRequest } from '../../store/paging.ts'
import type { Caller } from '../access/caller.ts'
import type { InProcessJobQueue } from './job-queue.ts'

/** What a kind's next piece did: how many items it moved on, how many of them failed, the result so far. */
export interface PieceDone<R> {
  advanced: number
  errors: number
  result: R
}

export interface JobKind<I, R> {
  /** The kind's name, as the API shows it. */
  readonly kind: string
  /** The result before any piece is done. */
  readonly empty: R
  /** Does the items from `done` on (some of them) as `caller`; throws to fail the whole job. */
  piece(job: { caller: Caller; input: I; done: number; total: number; result: R }): Promise<PieceDone<R>>
}

const LANE = 'long-job'
/** A holder's claim: renewed with each piece's progress, so a piece may take up to this long. */
const LEASE_MS = 120_000

export class LongJobs {
  #rows: Jobs
  #queue: InProcessJobQueue
  #clock: Clock
  #log: FastifyBaseLogger
  #kinds = new Map<string, JobKind<unknown, unknown>>()
  #holder = `instance_${randomUUID()}`
  /** Jobs this instance works on now. */
  #held = new Set<string>()
  #stopping = false

  constructor(deps: { rows: Jobs; queue: InProcessJobQueue; clock: Clock; log: FastifyBaseLogger }) {
    this.#rows = deps.rows
    this.#queue = deps.queue
    this.#clock = deps.clock
    this.#log = deps.log
    // Two jobs at once on an instance: long work must not crowd out deliveries and step runs.
    this.#queue.work<string>(LANE, { batchSize: 1, concurrency: 2 }, async ([id]) => this.#work(id))
  }

  define<I, R>(kind: JobKind<I, R>): void {
    this.#kinds.set(kind.kind, kind as JobKind<unknown, unknown>)
  }

  /** Stores a job (queued) and starts it on this instance. */
  async start(caller: Caller, kind: string, input: unknown, total: number): Promise<JobRow> {
    if (!this.#kinds.has(kind)) throw new Error(`No job kind ${kind}`)
    const id = newId('job')
    await this.#rows.insert({
      id,
      workspace_id: caller.workspaceId,
      kind,
      // Who started it, as ids and a role: the job acts as them (never a key or a secret).
      caller: {
        workspaceId: caller.workspaceId,
        kind: caller.kind,
        role: caller.role,
        keyId: caller.keyId,
        personId: caller.personId,
        agentId: caller.agentId,
      } satisfies Caller,
      input,
      total,
      created_at: isoAt(this.#clock.now()),
    })
    this.#queue.send(LANE, id, { singletonKey: id })
    return (await this.#rows.byId(id))!
  }

  get(workspaceId: string, id: string): Promise<JobRow> {
    return this.#rows.get(workspaceId, id).then((row) => {
      if (!row)
        throw new PatchbayError('JOB_NOT_FOUND', `There is no job "${id}".`, {
          hint: 'List jobs with GET /v1/jobs.',
        })
      return row
    })
  }

  list(workspaceId: string, page: PageRequest & { before?: string; status?: JobRow['status'] }) {
    return this.#rows.list(workspaceId, page)
  }

  /** Asks a job to stop: a queued one ends at once, a running one after its piece under way. */
  async cancel(workspaceId: string, id: string): Promise<JobRow> {
    const row = await this.#rows.requestCancel(workspaceId, id, isoAt(this.#clock.now()))
    if (!row)
      throw new PatchbayError('JOB_NOT_FOUND', `There is no job "${id}".`, {
        hint: 'List jobs with GET /v1/jobs.',
      })
    if (row.status !== 'running' && !row.cancelRequested)
      throw new PatchbayError('JOB_FINISHED', `Job "${id}" already ended (${row.status}).`)
    return row
  }

  /** The sweep's part (one instance at a time): jobs nobody holds are handed to this instance. */
  async sweep(): Promise<void> {
    if (this.#stopping) return
    for (const id of await this.#rows.claimable(isoAt(this.#clock.now()), 100))
      if (!this.#held.has(id)) this.#queue.send(LANE, id, { singletonKey: id })
  }

  /**
   * Stops taking jobs and gives back those under way at once (claimable by the next sweep, here
   * or on another instance); the piece under way is not waited for and is done again there.
   */
  async stop(): Promise<void> {
    this.#stopping = true
    const now = isoAt(this.#clock.now())
    await Promise.all([...this.#held].map((id) => this.#rows.release(id, this.#holder, now)))
  }

  async #work(id: string): Promise<void> {
    if (this.#stopping || this.#held.has(id)) return
    const now = this.#clock.now()
    if (!(await this.#rows.claim(id, this.#holder, isoAt(now), isoAt(now + LEASE_MS)))) return
    this.#held.add(id)
    try {
      await this.#run(id)
    } catch (err) {
      // Only a stopping instance or a store that went away gets here; the lease ends and the sweep
      // hands the job on.
      if (!this.#stopping) this.#log.error({ err, job: id }, 'a job could not record its progress')
    } finally {
      this.#held.delete(id)
    }
  }

  async #run(id: string): Promise<void> {
    const job = await this.#rows.byId(id)
    if (!job) return
    const kind = this.#kinds.get(job.kind)
    let { done, errors } = job
    let result: unknown = job.result ?? kind?.empty ?? null
    const finish = (
      status: 'succeeded' | 'failed' | 'cancelled',
      error: { code: string; message: string } | null = null,
    ) =>
      this.#rows.finish(id, this.#holder, {
        status,
        done,
        errors,
        result,
        error,
        finishedAt: isoAt(this.#clock.now()),
      })
    if (!kind)
      return void (await finish('failed', {
        code: 'INTERNAL',
        message: `This version of Patchbay does not know jobs of kind ${job.kind}.`,
      }))
    if (job.cancelRequested) return void (await finish('cancelled'))
    while (done < job.total) {
      let piece: PieceDone<unknown>
      try {
        piece = await kind.piece({
          caller: job.caller as Caller,
          input: job.input,
          done,
          total: job.total,
          result,
        })
      } catch (err) {
        // Given back while the piece ran: whoever resumes it does the piece again.
        if (this.#stopping) return
        const e =
          err instanceof PatchbayError
            ? { code: err.code, message: err.message }
            : { code: 'INTERNAL', message: 'The job failed unexpectedly; the log has the details.' }
        if (!(err instanceof PatchbayError)) this.#log.error({ err, job: id }, 'a job failed')
        return void (await finish('failed', e))
      }
      done = Math.min(job.total, done + piece.advanced)
      errors += piece.errors
      result = piece.result
      const now = this.#clock.now()
      const state = await this.#rows.progress(id, this.#holder, {
        done,
        errors,
        result,
        leaseUntil: isoAt(now + LEASE_MS),
      })
      // No longer this instance's (it was given back on stopping, or its lease ended meanwhile).
      if (!state) return
      if (state.cancelRequested) return void (await finish('cancelled'))
      if (this.#stopping) return
    }
    await finish('succeeded')
  }
}
