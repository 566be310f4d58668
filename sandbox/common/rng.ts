// A small seeded generator (mulberry32): the sandbox's data and ids are the same on every start.
export class Rng {
  #state: number

  /** `seed` may be an earlier generator's `state`, to go on where it was. */
  constructor(seed: number) {
    this.#state = seed >>> 0
  }

  /** Where the sequence is: a generator made with it continues the same sequence. */
  get state(): number {
    return this.#state
  }

  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0
    let t = this.#state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  int(minInclusive: number, maxInclusive: number): number {
    return minInclusive + Math.floor(this.next() * (maxInclusive - minInclusive + 1))
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]
  }

  hex(length: number): string {
    let out = ''
    while (out.length < length) out += Math.floor(this.next() * 16).toString(16)
    return out
  }

  alnum(length: number): string {
    const chars = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
    let out = ''
    for (let i = 0; i < length; i++) out += chars[Math.floor(this.next() * chars.length)]
    return out
  }
}
