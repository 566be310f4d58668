// Tells whoever caches API keys (the server's authentication) that keys were revoked, on every
// instance (through the engine's changes), so a revoked key stops working at once everywhere
// rather than when its cache entry ages out. An empty list means "any key may have been revoked"
// (the instance missed changes), so a cache drops all it holds.
import type { Changes } from '../changes/changes.ts'

export type KeyRevocationListener = (keyIds: string[]) => void

export class KeyRevocations {
  #changes: Changes

  constructor(changes: Changes) {
    this.#changes = changes
  }

  /** Returns a function that stops listening. */
  subscribe(listener: KeyRevocationListener): () => void {
    return this.#changes.subscribe('keys', listener)
  }

  publish(keyIds: string[]): void {
    this.#changes.publish('keys', keyIds)
  }
}
