// Tells the scope guard's cache of places (a resource → the place it lies in) that resources may
// have moved: every event the trigger pipeline or a poll stores names the resources it is about,
// and one of a kind its connector calls movable (ScopeSupport.movable) that an event names is
// looked up again on its next check — on every instance (through the engine's changes),
// whichever instance stored the event.
import type { NormalizedEvent, ScopeSupport } from '../../kit/define.ts'
import type { Changes } from '../changes/changes.ts'

/**
 * `places` are the cache keys of what may have moved (`<connector>:<kind>:<id>`); an empty list
 * means anything may have (the instance missed changes).
 */
export type PlacementListener = (places: string[]) => void

export const placeKey = (connectorId: string, kind: string, id: string) => `${connectorId}:${kind}:${id}`

export class PlacementChanges {
  #changes: Changes
  #scopeOf: (connectorId: string) => ScopeSupport | undefined

  /**
   * `scopeOf` gives a connector's scope support: the kinds an event may move (`movable`), and
   * which events certainly move nothing (`placesUnchanged`): theirs are not announced. Under load
   * every group commit announced all its events' cards and lists, to every instance: each
   * instance added made each announcement cost one more listener its parsing and its cache
   * look-ups (issue 29).
   */
  constructor(
    changes: Changes,
    scopeOf: (connectorId: string) => ScopeSupport | undefined = () => undefined,
  ) {
    this.#changes = changes
    this.#scopeOf = scopeOf
  }

  /** Returns a function that stops listening. */
  subscribe(listener: PlacementListener): () => void {
    return this.#changes.subscribe('placements', listener)
  }

  /** The events a connector's webhook or poll just stored. */
  publish(connectorId: string, events: readonly NormalizedEvent[]): void {
    const scope = this.#scopeOf(connectorId)
    if (!scope?.movable?.length) return
    const movable = scope.movable
    const places = new Set<string>()
    for (const event of events) {
      if (scope.placesUnchanged?.(event)) continue
      const refs = event.refs
      for (const kind of movable) {
        const id = refs?.[kind]
        if (typeof id === 'string' && id) places.add(placeKey(connectorId, kind, id))
      }
    }
    if (places.size > 0) this.#changes.publish('placements', [...places])
  }
}
