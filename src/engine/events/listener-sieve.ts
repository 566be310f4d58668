// A source's listeners sieved by their triggers' match keys (kit/define.ts,
// TriggerDefinition.matchKeys): an event asks `match` only of the listeners it may concern, not of
// every trigger on its webhook (a board's webhook heard by an agent per list). Built once per
// listeners array: a webhook's are cached until its triggers change (webhook-ingress.ts).
import type { NormalizedEvent } from '../../kit/define.ts'
import type { Listener } from './recorder.ts'

/** How an event's keys are read: one function per trigger definition. */
type EventKeys = (e: NormalizedEvent) => readonly string[]

export class ListenerSieve {
  #all: readonly Listener[]
  /** Positions in #all of the listeners asked about every event (their trigger gives no keys). */
  #unkeyed: number[] = []
  /** Per way of reading an event's keys, the positions of the listeners under each key. */
  #keyed = new Map<EventKeys, Map<string, number[]>>()

  constructor(listeners: readonly Listener[]) {
    this.#all = listeners
    listeners.forEach((l, at) => {
      if (!l.sieve) {
        this.#unkeyed.push(at)
        return
      }
      let byKey = this.#keyed.get(l.sieve.event)
      if (!byKey) {
        byKey = new Map()
        this.#keyed.set(l.sieve.event, byKey)
      }
      for (const key of l.sieve.keys) {
        const under = byKey.get(key)
        if (!under) byKey.set(key, [at])
        else if (!under.includes(at)) under.push(at)
      }
    })
  }

  /**
   * The listeners that may fire for `e`, in the order they were given (as without a sieve): only
   * the positions are looked at, so the listeners an event does not concern are not touched.
   */
  candidates(e: NormalizedEvent): readonly Listener[] {
    if (this.#keyed.size === 0) return this.#all
    let at = this.#unkeyed
    let added = false
    for (const [eventKeys, byKey] of this.#keyed) {
      let keys: readonly string[]
      try {
        keys = eventKeys(e)
      } catch {
        // A connector's sieve that cannot read the event: every listener is asked, as without one.
        return this.#all
      }
      for (const key of keys) {
        const under = byKey.get(key)
        if (!under) continue
        if (!added) {
          at = [...at]
          added = true
        }
        for (const i of under) if (!at.includes(i)) at.push(i)
      }
    }
    if (added) at.sort((a, b) => a - b)
    return at.map((i) => this.#all[i])
  }
}
