// Tells whoever caches API keys (the server's authentication) that keys were revoked, so a
// revoked key stops working at once in this process rather than when its cache entry ages out.
export type KeyRevocationListener = (keyIds: string[]) => void

export class KeyRevocations {
  #listeners = new Set<KeyRevocationListener>()

  /** Returns a function that stops listening. */
  subscribe(listener: KeyRevocationListener): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  publish(keyIds: string[]): void {
    if (keyIds.length === 0) return
    for (const l of this.#listeners) l(keyIds)
  }
}
