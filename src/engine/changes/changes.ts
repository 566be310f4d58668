// Changes every instance must hear about at once: a trigger, connection, agent, key or budget
// changed (so each instance drops what it cached), a card or list an event names may have moved
// (the scope guard's places), or deliveries were written for an agent (so its open streams read
// the store). Published here, they reach this process's listeners at once and the
// other instances through a transport: PostgreSQL LISTEN/NOTIFY, or Redis pub/sub when
// configured. On SQLite there is one process and no transport.
import { randomUUID } from 'node:crypto'

export type ChangeTopic =
  | 'agents'
  | 'connections'
  | 'triggers'
  | 'keys'
  | 'memberships'
  | 'credits'
  | 'deliveries'
  | 'placements'
  | 'sessions'
export type ChangeListener = (ids: string[]) => void

/** Carries changes between instances; `onLost` tells that messages may have been missed. */
export interface ChangeTransport {
  start(onMessage: (message: string) => void, onLost: () => void): Promise<void>
  send(message: string): Promise<void>
  close(): Promise<void>
}

const TOPICS: ChangeTopic[] = [
  'agents',
  'connections',
  'triggers',
  'keys',
  'memberships',
  'credits',
  'deliveries',
  'placements',
  'sessions',
]
/** NOTIFY payloads stay below PostgreSQL's 8,000-byte limit. */
const IDS_PER_MESSAGE = 100
/**
 * How long what is published waits for more to go with it: under load every group commit of the
 * ingress publishes its events' cards, a few milliseconds apart; gathered, they cost one NOTIFY
 * (a round trip, and a wake-up of every instance) per few commits instead of one each.
 */
const GATHER_MS = 10

export class Changes {
  readonly instanceId = randomUUID()
  #listeners = new Map<ChangeTopic, Set<ChangeListener>>()
  #transport: ChangeTransport | null
  #onError: (err: unknown) => void
  /** Ids published and not sent yet, by topic (gathered into as few messages as they fit in). */
  #outgoing = new Map<ChangeTopic, Set<string>>()
  /** The send under way, if any: what is published meanwhile waits for it and goes in the next. */
  #sending: Promise<void> | null = null

  constructor(opts: { transport?: ChangeTransport | null; onError?: (err: unknown) => void } = {}) {
    this.#transport = opts.transport ?? null
    this.#onError = opts.onError ?? (() => {})
  }

  /** Starts hearing other instances (no-op without a transport). */
  async start(): Promise<void> {
    await this.#transport?.start(
      (message) => this.#receive(message),
      // Whatever was missed while the connection was down: every listener drops everything.
      () => {
        for (const topic of TOPICS) this.#deliver(topic, [])
      },
    )
  }

  /**
   * Listens to a topic. `ids` names what changed; an empty list means "anything may have changed"
   * (after a lost connection), so a cache drops all of it.
   */
  subscribe(topic: ChangeTopic, listener: ChangeListener): () => void {
    let set = this.#listeners.get(topic)
    if (!set) {
      set = new Set()
      this.#listeners.set(topic, set)
    }
    set.add(listener)
    return () => set.delete(listener)
  }

  /**
   * Tells this process at once and the other instances as soon as the transport carries it.
   * What is published within GATHER_MS, or while the previous message is on its way, travels
   * together: one message per topic and up to IDS_PER_MESSAGE ids (under load, one NOTIFY for
   * several batches of stored events instead of one for each event).
   */
  publish(topic: ChangeTopic, ids: string[]): void {
    if (ids.length === 0) return
    this.#deliver(topic, ids)
    if (!this.#transport) return
    let waiting = this.#outgoing.get(topic)
    if (!waiting) {
      waiting = new Set()
      this.#outgoing.set(topic, waiting)
    }
    for (const id of ids) waiting.add(id)
    this.#sending ??= new Promise<void>((resolve) => setTimeout(resolve, GATHER_MS)).then(() => this.#send())
  }

  async #send(): Promise<void> {
    while (this.#outgoing.size > 0 && this.#transport) {
      const outgoing = this.#outgoing
      this.#outgoing = new Map()
      const sends: Promise<void>[] = []
      for (const [topic, set] of outgoing) {
        const ids = [...set]
        for (let i = 0; i < ids.length; i += IDS_PER_MESSAGE) {
          const message = JSON.stringify({
            from: this.instanceId,
            topic,
            ids: ids.slice(i, i + IDS_PER_MESSAGE),
          })
          sends.push(this.#transport.send(message).catch(this.#onError))
        }
      }
      await Promise.all(sends)
    }
    this.#sending = null
  }

  /** Sends what is still waiting, then closes the transport. */
  async close(): Promise<void> {
    await this.#sending
    await this.#transport?.close()
  }

  #receive(message: string): void {
    let parsed: { from?: string; topic?: ChangeTopic; ids?: string[] }
    try {
      parsed = JSON.parse(message)
    } catch {
      return
    }
    if (parsed.from === this.instanceId || !parsed.topic || !Array.isArray(parsed.ids)) return
    this.#deliver(parsed.topic, parsed.ids)
  }

  #deliver(topic: ChangeTopic, ids: string[]): void {
    for (const l of this.#listeners.get(topic) ?? []) {
      try {
        l(ids)
      } catch (err) {
        this.#onError(err)
      }
    }
  }
}
