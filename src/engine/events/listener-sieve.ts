// A source's listeners sieved by their triggers' match keys (kit/define.ts,
// TriggerDefinition.matchKeys): an event asks `match` only of the listeners it may concern, not of
// every trigger on its webhook (a board's webhook heard by an agent per list). Built once per
// listeners array: a webhook's are cached until its triggers change (webhook-ingress.ts). A key
// shared by chance (a list's id equal to a card's) only adds a listener to ask, never hides one.
import type { NormalizedEvent } from '../../kit/define.ts'
import type { Listener } from './recorder.ts'

/** How an event's keys are read: one function per trigger definition. */
type EventKeys = (e: NormalizedEvent) => readonly string[]
/** The listeners under one key, and their places among the source's (to merge keys in order). */
type Under = { listeners: Listener[]; at: number[] }

export class ListenerSieve {
  #all: readonly Listener[]
  /** The listeners asked about every event (their trigger gives no keys), and their places. */
  #unkeyed: Under = { listeners: [], at: [] }
  /** Per way of reading an event's keys, the listeners under each key. */
  #keyed = new Map<EventKeys, Map<string, Under>>()

  constructor(listeners: readonly Listener[]) {
    this.#all = listeners
    listeners.forEach((l, at) => {
      if (!l.sieve) {
        this.#unkeyed.listeners.push(l)
        this.#unkeyed.at.push(at)
        return
      }
      let byKey = this.#keyed.get(l.sieve.event)
      if (!byKey) {
        byKey = new Map()
        this.#keyed.set(l.sieve.event, byKey)
      }
      for (const key of l.sieve.keys) {
        const under = byKey.get(key)
        if (!under) byKey.set(key, { listeners: [l], at: [at] })
        else if (!under.at.includes(at)) {
          under.listeners.push(l)
          under.at.push(at)
        }
      }
    })
  }

  /**
   * The listeners that may fire for `e`, in the order they were given (as without a sieve). The
   * listeners an event does not concern are not touched.
   */
  candidates(e: NormalizedEvent): readonly Listener[] {
    if (this.#keyed.size === 0) return this.#all
    let only: Under | null = this.#unkeyed.at.length > 0 ? this.#unkeyed : null
    let merged: number[] | null = null
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
        if (!under || under === only) continue
        // One group of listeners (the most common case: one key hit) is answered as it is kept.
        if (!only && !merged) {
          only = under
          continue
        }
        merged ??= [...(only?.at ?? [])]
        for (const i of under.at) if (!merged.includes(i)) merged.push(i)
      }
    }
    if (merged) return merged.sort((a, b) => a - b).map((i) => this.#all[i])
    return only?.listeners ?? []
  }
}

const sieves = new WeakMap<readonly Listener[], ListenerSieve>()

/**
 * The sieve of a source's listeners, made once per array (a webhook's are kept until its triggers
 * change, and the sieve goes with them); none for a single listener.
 */
export function sieveOf(listeners: readonly Listener[]): ListenerSieve | null {
  if (listeners.length < 2) return null
  let sieve = sieves.get(listeners)
  if (!sieve) {
    sieve = new ListenerSieve(listeners)
    sieves.set(listeners, sieve)
  }
  return sieve
}
