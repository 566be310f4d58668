// The emulators' notion of time. Tests freeze or advance it through the control API so that token
// expiry, rate-limit windows and workflow progress can be driven without waiting.
export class Clock {
  #frozenAt: number | null = null
  #offsetMs = 0

  now(): number {
    return this.#frozenAt ?? Date.now() + this.#offsetMs
  }

  iso(): string {
    return new Date(this.now()).toISOString()
  }

  get frozen(): boolean {
    return this.#frozenAt !== null
  }

  freeze(atMs?: number): void {
    this.#frozenAt = atMs ?? this.now()
  }

  unfreeze(): void {
    if (this.#frozenAt === null) return
    this.#offsetMs = this.#frozenAt - Date.now()
    this.#frozenAt = null
  }

  advance(ms: number): void {
    if (this.#frozenAt !== null) this.#frozenAt += ms
    else this.#offsetMs += ms
  }

  reset(): void {
    this.#frozenAt = null
    this.#offsetMs = 0
  }

  toJSON() {
    return { now: this.iso(), nowMs: this.now(), frozen: this.frozen }
  }
}
