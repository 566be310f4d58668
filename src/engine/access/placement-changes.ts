// Tells the scope guard's cache of places (card → board …) that resources may have moved: every
// event the trigger pipeline or a poll stores names the cards and lists it is about, and a card
// an event names (moved to another board, or from this one) is looked up again on its next check.
// In-process; other instances see a move when their short-lived entry expires (scope-guard.ts).
import type { NormalizedEvent } from '../../kit/define.ts'

export type PlacementListener = (connectorId: string, refs: NormalizedEvent['refs'][]) => void

export class PlacementChanges {
  #listeners = new Set<PlacementListener>()

  /** Returns a function that stops listening. */
  subscribe(listener: PlacementListener): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  /** The events a connector's webhook or poll just stored. */
  publish(connectorId: string, events: readonly NormalizedEvent[]): void {
    const refs = events.map((e) => e.refs).filter((r) => r.card || r.list)
    if (refs.length === 0) return
    for (const l of this.#listeners) l(connectorId, refs)
  }
}
