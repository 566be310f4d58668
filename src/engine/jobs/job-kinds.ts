// The kinds of long work that run as jobs (long-jobs.ts), each as data: what its input is, how many
// items it has, and how its next piece is done.
//
// - `enrich_contacts`: many contacts enriched with a contact-data connection, 100 at a time (one
//   bulk request upstream each) through the Enrich Contacts step, so each piece is a step run like
//   any other: the caller's scope, connections and credit budget apply, the credit ledger and the
//   run records show it.
// - `replay_deliveries`: deliveries chosen by a filter (dead ones, by default) sent again, 50 at a
//   time, each as POST /v1/deliveries/{id}/replay does. The deliveries are chosen when the job is
//   started, so a restart resumes the same list.
import { PatchbayError, validationError } from '../../kit/errors.ts'
import type { JobRow } from '../../store/jobs.ts'
import type { Caller } from '../access/caller.ts'
import type { ConnectionService } from '../connections/connection-service.ts'
import type { Deliverer } from '../events/deliverer.ts'
import type { DeliveryFilter, EventHistory } from '../events/history.ts'
import type { Registry } from '../registry.ts'
import type { StepRunner } from '../steps/step-runner.ts'
import type { JobKind, LongJobs } from './long-jobs.ts'

/** The most contacts one enrichment job takes. */
export const ENRICH_JOB_MAX = 5_000
/** Contacts per piece: the contact-data service's largest bulk request. */
const ENRICH_PIECE = 100
/** The most deliveries one replay job takes. */
export const REPLAY_JOB_MAX = 10_000
const REPLAY_PIECE = 50

export interface EnrichInput {
  connectionId: string
  contacts: Array<Record<string, unknown>>
}

export interface EnrichResult {
  /** One per contact done so far, in the given order (the Enrich Contacts step's results). */
  results: unknown[]
  matched: number
  notMatched: number
  creditsCharged: number
}

interface EnrichOutput {
  results: Array<{ error: unknown }>
  matched: number
  notMatched: number
  creditsCharged: number
}

export const enrichContactsJob = (steps: StepRunner): JobKind<EnrichInput, EnrichResult> => ({
  kind: 'enrich_contacts',
  empty: { results: [], matched: 0, notMatched: 0, creditsCharged: 0 },
  async piece({ caller, input, done, result }) {
    const contacts = input.contacts.slice(done, done + ENRICH_PIECE)
    const { output } = await steps.run(caller, 'contactdata.enrich_contacts', {
      connectionId: input.connectionId,
      input: { contacts },
    })
    const out = output as EnrichOutput
    return {
      advanced: contacts.length,
      errors: out.results.filter((r) => r.error).length,
      result: {
        results: [...result.results.slice(0, done), ...out.results],
        matched: result.matched + out.matched,
        notMatched: result.notMatched + out.notMatched,
        creditsCharged: result.creditsCharged + out.creditsCharged,
      },
    }
  },
})

export interface ReplayInput {
  /** The filter it was started with, as given (shown back). */
  filter: Omit<DeliveryFilter, 'limit' | 'beforeSeq' | 'afterSeq' | 'ascending'>
  /** The deliveries chosen when it started, oldest first. */
  ids: string[]
}

export interface ReplayResult {
  replayed: number
  /** Deliveries that could not be replayed (deleted since), with why; at most 100 listed. */
  failed: Array<{ id: string; code: string; message: string }>
}

export const replayDeliveriesJob = (deliverer: Deliverer): JobKind<ReplayInput, ReplayResult> => ({
  kind: 'replay_deliveries',
  empty: { replayed: 0, failed: [] },
  async piece({ caller, input, done, result }) {
    const ids = input.ids.slice(done, done + REPLAY_PIECE)
    let replayed = 0
    const failed = [...result.failed]
    for (const id of ids) {
      try {
        await deliverer.replay(caller.workspaceId, id)
        replayed++
      } catch (err) {
        if (!(err instanceof PatchbayError)) throw err
        if (failed.length < 100) failed.push({ id, code: err.code, message: err.message })
      }
    }
    return {
      advanced: ids.length,
      errors: ids.length - replayed,
      result: { replayed: result.replayed + replayed, failed },
    }
  },
})

/** The deliveries a replay job starts with: those matching the filter, oldest first. */
export async function deliveriesToReplay(
  history: EventHistory,
  caller: Caller,
  filter: ReplayInput['filter'],
): Promise<string[]> {
  const ids: string[] = []
  let afterSeq = 0
  for (;;) {
    const rows = await history.deliveriesAfter(caller.workspaceId, { ...filter, afterSeq, limit: 500 })
    for (const r of rows) ids.push(r.id)
    if (ids.length > REPLAY_JOB_MAX)
      throw new PatchbayError(
        'VALIDATION_FAILED',
        `More than ${REPLAY_JOB_MAX} deliveries match; one replay job takes at most ${REPLAY_JOB_MAX}.`,
        { hint: 'Narrow the replay with agentId, triggerId or eventId, and start one job for each part.' },
      )
    if (rows.length < 500) return ids
    afterSeq = Number(rows[rows.length - 1].seq)
  }
}

const ENRICH_STEP = 'contactdata.enrich_contacts'

/** Starting each kind of job (checked before it is stored), and the jobs themselves. */
export class JobService {
  readonly jobs: LongJobs
  #d: {
    registry: Registry
    connections: ConnectionService
    history: EventHistory
  }

  constructor(d: {
    jobs: LongJobs
    steps: StepRunner
    deliverer: Deliverer
    registry: Registry
    connections: ConnectionService
    history: EventHistory
  }) {
    this.jobs = d.jobs
    this.#d = d
    d.jobs.define(enrichContactsJob(d.steps))
    d.jobs.define(replayDeliveriesJob(d.deliverer))
  }

  /**
   * A bulk enrichment: every contact is checked as the Enrich Contacts step checks it, and the
   * connection must be a contact-data one of the workspace, before anything is stored or charged.
   */
  async enrichContacts(caller: Caller, input: EnrichInput): Promise<JobRow> {
    const connection = await this.#d.connections.get(caller.workspaceId, input.connectionId)
    if (connection.connector !== 'contactdata')
      throw new PatchbayError(
        'VALIDATION_FAILED',
        `Connection "${connection.id}" is a ${connection.connector} connection; enriching contacts needs a contactdata one.`,
        { hint: 'List contact-data connections with GET /v1/connections?connector=contactdata.' },
      )
    const schema = this.#d.registry.steps.get(ENRICH_STEP)!.step.input
    for (let at = 0; at < input.contacts.length; at += ENRICH_PIECE) {
      const parsed = schema.safeParse({ contacts: input.contacts.slice(at, at + ENRICH_PIECE) })
      if (!parsed.success)
        throw validationError(
          parsed.error.issues.map((i) => ({
            ...i,
            // The place in the whole list, not in the piece.
            path:
              i.path[0] === 'contacts' && typeof i.path[1] === 'number'
                ? ['contacts', at + i.path[1], ...i.path.slice(2)]
                : i.path,
          })),
          '',
        )
    }
    return this.jobs.start(caller, 'enrich_contacts', input, input.contacts.length)
  }

  /** A replay of the deliveries the filter matches now (dead ones unless it says otherwise). */
  async replayDeliveries(caller: Caller, filter: ReplayInput['filter']): Promise<JobRow> {
    const ids = await deliveriesToReplay(this.#d.history, caller, filter)
    return this.jobs.start(caller, 'replay_deliveries', { filter, ids } satisfies ReplayInput, ids.length)
  }
}
