// The agents' open event streams (Server-Sent Events). A stream reads its agent's pull
// deliveries from the store in seq order, from the seq it resumes after (Last-Event-ID), and
// reads again whenever any instance tells that deliveries were stored for the agent (engine
// changes), so nothing is skipped whichever instance stored a delivery or serves the stream.
// Deliveries are committed in seq order (deliveries.insertMany), so once a seq is seen no lower
// one can appear later.
import type { Changes } from '../changes/changes.ts'
import type { EventHistory } from './history.ts'

const PAGE = 500

interface OpenStream {
  workspaceId: string
  agentId: string
  last: number
  send: (seq: number, body: string) => void
  reading: boolean
  again: boolean
  closed: boolean
  onClose: () => void
}

export class DeliveryStreams {
  #history: EventHistory
  #byAgent = new Map<string, Set<OpenStream>>()
  #onError: (err: unknown) => void

  constructor(deps: {
    history: EventHistory
    changes: Changes
    onError: (err: unknown) => void
  }) {
    this.#history = deps.history
    this.#onError = deps.onError
    deps.changes.subscribe('deliveries', (agentIds) => {
      // An empty list: the instance may have missed some, so every stream reads again.
      const agents = agentIds.length === 0 ? [...this.#byAgent.keys()] : agentIds
      for (const id of agents) for (const s of this.#byAgent.get(id) ?? []) this.#read(s)
    })
  }

  /**
   * Opens a stream of the agent's pull deliveries after `afterSeq`: `send` gets each in seq
   * order, those stored already first. `onClose` runs when the engine closes it (shutdown).
   */
  open(opts: {
    workspaceId: string
    agentId: string
    afterSeq: number
    send: (seq: number, body: string) => void
    onClose: () => void
  }): { close(): void; caughtUp: Promise<void> } {
    const stream: OpenStream = {
      workspaceId: opts.workspaceId,
      agentId: opts.agentId,
      last: opts.afterSeq,
      send: opts.send,
      onClose: opts.onClose,
      reading: false,
      again: false,
      closed: false,
    }
    let set = this.#byAgent.get(opts.agentId)
    if (!set) {
      set = new Set()
      this.#byAgent.set(opts.agentId, set)
    }
    set.add(stream)
    const caughtUp = this.#read(stream)
    return { close: () => this.#remove(stream), caughtUp }
  }

  listeners(agentId: string): number {
    return this.#byAgent.get(agentId)?.size ?? 0
  }

  /** Ends every open stream (shutdown). */
  closeAll(): void {
    for (const set of this.#byAgent.values())
      for (const s of set) {
        this.#remove(s)
        s.onClose()
      }
  }

  #remove(s: OpenStream): void {
    s.closed = true
    const set = this.#byAgent.get(s.agentId)
    set?.delete(s)
    if (set?.size === 0) this.#byAgent.delete(s.agentId)
  }

  async #read(s: OpenStream): Promise<void> {
    if (s.reading) {
      s.again = true
      return
    }
    s.reading = true
    try {
      do {
        s.again = false
        for (;;) {
          const { rows, readTo } = await this.#history.after(s.workspaceId, s.agentId, s.last, PAGE)
          if (s.closed) return
          for (const r of rows) if (r.body !== null && !s.closed) s.send(r.seq, r.body)
          s.last = Math.max(s.last, readTo)
          if (rows.length < PAGE) break
        }
      } while (s.again && !s.closed)
    } catch (err) {
      this.#onError(err)
    } finally {
      s.reading = false
    }
  }
}
