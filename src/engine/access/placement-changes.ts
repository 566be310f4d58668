// Tells the scope guard's cache of places (card → board …) that resources may have moved: every
// event the trigger pipeline or a poll stores names the cards and lists it is about, and a card
// an event names (moved to another board, or from this one) is looked up again on its next check
// — on every instance (through the engine's changes), whichever instance stored the event.
import type { NormalizedEvent } from '../../kit/define.ts'
import type { Changes } from '../changes/changes.ts'

/**
 * `places` are the cache keys of what may have moved (`<connector>:card:<id>`,
 * `<connector>:list:<id>`); an empty list means anything may have (the instance missed changes).
 */
export type PlacementListener = (places: string[]) => void

export const placeKey = (connectorId: string, kind: 'card' | 'list', id: string) =>
  `${connectorId}:${kind}:${id}`

export class PlacementChanges {
  #changes: Changes
  #unchanged: (connectorId: string, event: NormalizedEvent) => boolean

  /**
   * `unchanged` says which events certainly move nothing (the connector's
   * ScopeSupport.placesUnchanged): theirs are not announced. Under load every group commit
   * announced all its events' cards and lists, to every instance: each instance added made each
   * announcement cost one more listener its parsing and its cache look-ups (issue 29).
   */
  constructor(
    changes: Changes,
    unchanged: (connectorId: string, event: NormalizedEvent) => boolean = () => false,
  ) {
    this.#changes = changes
    this.#unchanged = unchanged
  }

  /** Returns a function that stops listening. */
  subscribe(listener: PlacementListener): () => void {
    return this.#changes.subscribe('placements', listener)
  }

  /** The events a connector's webhook or poll just stored. */
  publish(connectorId: string, events: readonly NormalizedEvent[]): void {
    const places = new Set<string>()
    for (const event of events) {
      if (this.#unchanged(connectorId, event)) continue
      const refs = event.refs
      if (typeof refs?.card === 'string' && refs.card) places.add(placeKey(connectorId, 'card', refs.card))
      if (typeof refs?.list === 'string' && refs.list) places.add(placeKey(connectorId, 'list', refs.list))
    }
    if (places.size > 0) this.#changes.publish('placements', [...places])
  }
}
