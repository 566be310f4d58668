// Keeping an emulator's state in a file, so the sandbox `npm start` embeds remembers accounts,
// tokens, boards, repositories and webhooks across restarts. An emulator names what its state is
// (a `Persistent`: usually its store's own fields, through `fieldsOf`); the state file writes it
// shortly after each change and at close, and reads it back at start.
//
// The file is Node's structured serialization (node:v8), written here rather than JSON because
// the stores are Maps and Sets of plain records (and Buffers, for the code host's blobs), which it
// keeps as they are with no per-type code; each write goes to a temporary file that is then
// renamed over the old one, so a crash mid-write leaves the previous state whole.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { deserialize, serialize } from 'node:v8'

export interface Persistent {
  /** The state, made of plain data (records, arrays, Maps, Sets, Buffers). */
  snapshot(): unknown
  /** Puts a snapshot back in place of the current state. */
  restore(state: any): void
}

/** A store's state as its own enumerable fields (those listed in `except` left out). */
export function fieldsOf(target: () => object, except: string[] = []): Persistent {
  return {
    snapshot: () =>
      Object.fromEntries(
        Object.entries(target()).filter(([k, v]) => !except.includes(k) && typeof v !== 'function'),
      ),
    restore: (state: Record<string, unknown>) => {
      Object.assign(target(), state)
    },
  }
}

/** Bumped when a change makes older files unreadable; such a file is set aside and the start is fresh. */
const FORMAT = 1
/** Changes are written this long after the first one, together. */
const WRITE_DELAY_MS = 200

export class StateFile {
  readonly path: string
  #state: Persistent
  #timer: NodeJS.Timeout | null = null

  constructor(file: string, state: Persistent) {
    this.path = path.resolve(file)
    this.#state = state
  }

  /**
   * Reads the file into the state; false when there is none yet. An unreadable file (another
   * format, a partial copy) is renamed aside with a warning, and the start is fresh.
   */
  load(): boolean {
    let bytes: Buffer
    try {
      bytes = readFileSync(this.path)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false
      throw err
    }
    try {
      const file = deserialize(bytes) as { format: number; state: unknown }
      if (file?.format !== FORMAT) throw new Error(`format ${file?.format}, expected ${FORMAT}`)
      this.#state.restore(file.state)
      return true
    } catch (err) {
      const aside = `${this.path}.unreadable-${Date.now()}`
      renameSync(this.path, aside)
      console.warn(
        `sandbox state ${this.path} could not be read (${(err as Error).message}); moved to ${aside}`,
      )
      return false
    }
  }

  /** Something changed: written shortly, with whatever else changes meanwhile. */
  changed(): void {
    if (this.#timer) return
    this.#timer = setTimeout(() => {
      this.#timer = null
      this.save()
    }, WRITE_DELAY_MS)
    this.#timer.unref()
  }

  /** Writes the state now (and cancels a pending write). */
  save(): void {
    if (this.#timer) {
      clearTimeout(this.#timer)
      this.#timer = null
    }
    mkdirSync(path.dirname(this.path), { recursive: true })
    const tmp = `${this.path}.tmp`
    writeFileSync(tmp, serialize({ format: FORMAT, state: this.#state.snapshot() }), { mode: 0o600 })
    renameSync(tmp, this.path)
  }
}
