// Events whose delivery does not name the place they concern (an organization's project item
// names only its content's node id) get it read before they are matched, so scope holds for them
// too (events/event-scope.ts). The connector says what to look up and how
// (WebhookSupport.attribute); this asks only for events that a listening trigger needing a place
// fires for, keeps the answers per connection (bounded, for a while: content rarely changes
// place), and waits a bounded time. A lookup that fails — the upstream refuses or does not
// answer, the connection has lapsed — leaves the event without a place and says why in
// `refs.unattributed`: it then reaches no trigger that needs one, instead of leaking.
import type { FastifyBaseLogger } from 'fastify'
import type { EventAttribution, EventPlace, NormalizedEvent } from '../../kit/define.ts'
import { ResultCache, type SharedResults } from '../../kit/result-cache.ts'
import type { ConnectionService } from '../connections/connection-service.ts'
import type { Registry } from '../registry.ts'
import type { EventSource, Listener } from './recorder.ts'

/** Where the events to attribute came from: the connection a lookup reads with. */
type Origin = Pick<EventSource, 'workspaceId' | 'connector' | 'connectionId' | 'listeners'>

export interface AttributionOptions {
  /** How long a place read is trusted; default one hour. */
  cacheTtlMs?: number
  /** Places kept in this process (least recently used go first); default 10,000. */
  cacheMaxEntries?: number
  /** How long an event waits for its lookup before it is left unattributed; default 5 s. */
  timeoutMs?: number
}

const DEFAULT_TTL_MS = 60 * 60_000
const DEFAULT_MAX_ENTRIES = 10_000
const DEFAULT_TIMEOUT_MS = 5_000

export class EventAttributor {
  #registry: Registry
  #connections: ConnectionService
  #log: FastifyBaseLogger
  #timeoutMs: number
  // Keyed by connection and subject: a connection attributes only what it can read itself.
  #places: ResultCache
  /** Lookups sent upstream (cache misses) and those that failed, for tests and diagnosis. */
  readonly stats = { lookups: 0, failures: 0 }

  constructor(deps: {
    registry: Registry
    connections: ConnectionService
    log: FastifyBaseLogger
    sharedResults?: SharedResults
    options?: AttributionOptions
  }) {
    this.#registry = deps.registry
    this.#connections = deps.connections
    this.#log = deps.log
    this.#timeoutMs = deps.options?.timeoutMs ?? DEFAULT_TIMEOUT_MS
    this.#places = new ResultCache({
      ttlMs: deps.options?.cacheTtlMs ?? DEFAULT_TTL_MS,
      maxEntries: deps.options?.cacheMaxEntries ?? DEFAULT_MAX_ENTRIES,
      shared: deps.sharedResults && {
        results: deps.sharedResults,
        namespace: 'attribution',
        onError: (err) => deps.log.warn({ err }, 'the shared attribution cache did not answer'),
      },
    })
  }

  /**
   * Fills in the place of the events from `source` that need one read (their refs are replaced),
   * or null at once when none does: nothing is looked at unless the connector attributes and a
   * listener that fires for the event needs a place, so other events pay one check and no promise.
   */
  attribute(
    source: Origin,
    events: NormalizedEvent[],
    fires: (l: Listener, e: NormalizedEvent) => boolean,
  ): Promise<void> | null {
    const attribution = this.#registry.connector(source.connector)?.webhooks?.attribute
    if (!attribution) return null
    // The listeners needing a place, looked at only once an event needs one read (few do).
    let placed: Listener[] | null = null
    const wanted: Array<{ e: NormalizedEvent; subject: string }> = []
    for (const e of events) {
      // An event that names its place (or its place's group) needs no lookup.
      if (this.#registry.places.kinds.some((k) => e.refs?.[k.kind] || (k.group && e.refs?.[k.group.kind])))
        continue
      const subject = attribution.subject(e)
      if (subject === undefined) continue
      placed ??= source.listeners.filter((l) => l.eventScope !== 'account' && l.match)
      if (!placed.some((l) => fires(l, e))) continue
      wanted.push({ e, subject })
    }
    return wanted.length === 0 ? null : this.#read(source, attribution, wanted)
  }

  async #read(
    sub: Origin,
    attribution: EventAttribution,
    wanted: Array<{ e: NormalizedEvent; subject: string }>,
  ): Promise<void> {
    await this.#places.fetchShared(wanted.map((w) => `${sub.connectionId}:${w.subject}`))
    await Promise.all(
      wanted.map(async ({ e, subject }) => {
        try {
          e.refs = { ...e.refs, ...(await this.#place(sub, attribution, subject)) }
        } catch (err) {
          this.stats.failures++
          const reason = (err as Error).message
          e.refs = { ...e.refs, unattributed: reason }
          this.#log.warn(
            { event: e.id, subject, connection: sub.connectionId, reason },
            'the place of an event could not be read; it reaches no trigger that needs one',
          )
        }
      }),
    )
  }

  /** The subject's place: from the cache, from a lookup under way, or looked up now. */
  async #place(sub: Origin, attribution: EventAttribution, subject: string): Promise<EventPlace> {
    const key = `${sub.connectionId}:${subject}`
    const claim = this.#places.claim<EventPlace>(key)
    let answer: Promise<EventPlace>
    if (!claim.owner) {
      if (claim.lookup.state === 'hit') return claim.lookup.value
      answer = claim.lookup.promise
    } else {
      answer = this.#lookup(sub, attribution, subject)
      // The lookup finishes (and is kept for the next event) even when this event stops waiting.
      answer.then(
        (place) => claim.settle(place, true),
        (err) => claim.fail(err),
      )
    }
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`the upstream did not answer within ${this.#timeoutMs} ms`)),
        this.#timeoutMs,
      )
    })
    try {
      return await Promise.race([answer, timeout])
    } finally {
      clearTimeout(timer)
    }
  }

  async #lookup(sub: Origin, attribution: EventAttribution, subject: string): Promise<EventPlace> {
    const connector = this.#registry.connector(sub.connector)!
    const loaded = await this.#connections.load(sub.workspaceId, sub.connectionId)
    if (loaded.row.status === 'lapsed')
      throw new Error(
        `the connection ${sub.connectionId} has lapsed: ${loaded.row.status_reason ?? 'reconnect it'}`,
      )
    this.stats.lookups++
    // Not paced: the upstream is waiting for its delivery to be answered. A 401 lapses the connection.
    const http = this.#connections.client(sub.connectionId, connector, loaded.credentials, { paced: false })
    return attribution.lookup(http, subject)
  }
}
