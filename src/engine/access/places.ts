// The places agents' scopes are written in, as the connectors declare them (kit/define.ts
// PlaceKind: a task-board's boards, a code-host's repositories …). Everything the engine and the
// API say about a scope is read here: which keys a scope has, how a place or a group of places
// is held against it, the words of a refusal, and the Zod schemas of a scope (so the agents'
// schema, and the OpenAPI document, follow the connectors list). The engine itself names no kind.
import { z } from 'zod'
import type { ConnectorDefinition, PlaceKind, Scope } from '../../kit/define.ts'

export type { Scope }

/** A place: one of a declared kind's identifiers. */
export interface Place {
  kind: string
  id: string
}

const unique = (values: string[]) => [...new Set(values)]

/** `a`, `a or b`, `a, b or c`. */
export function either(words: string[]): string {
  return words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`
}

export class Places {
  readonly kinds: readonly PlaceKind[]
  #byKind = new Map<string, PlaceKind>()
  #byGroup = new Map<string, PlaceKind>()
  #byConnector = new Map<string, PlaceKind[]>()

  constructor(connectors: readonly Pick<ConnectorDefinition, 'id' | 'places'>[]) {
    const kinds: PlaceKind[] = []
    const keys = new Set<string>()
    for (const c of connectors) {
      for (const p of c.places ?? []) {
        if (this.#byKind.has(p.kind) || this.#byGroup.has(p.kind))
          throw new Error(`Place kind ${p.kind} (${c.id}) is declared twice`)
        if (keys.has(p.scopeKey)) throw new Error(`Scope key ${p.scopeKey} (${c.id}) is declared twice`)
        keys.add(p.scopeKey)
        this.#byKind.set(p.kind, p)
        if (p.group) {
          if (this.#byKind.has(p.group.kind) || this.#byGroup.has(p.group.kind))
            throw new Error(`Place group ${p.group.kind} (${c.id}) is declared twice`)
          this.#byGroup.set(p.group.kind, p)
        }
        kinds.push(p)
      }
      this.#byConnector.set(c.id, c.places ?? [])
    }
    this.kinds = kinds
  }

  /** The declared kind of this name, if it is a place kind. */
  kind(kind: string): PlaceKind | undefined {
    return this.#byKind.get(kind)
  }

  /** The place kind whose group this is (`owner` → repository). */
  groupOf(kind: string): PlaceKind | undefined {
    return this.#byGroup.get(kind)
  }

  /** The place kind a scoped kind is decided in: itself, or the kind whose group it is. */
  home(kind: string): PlaceKind | undefined {
    return this.#byKind.get(kind) ?? this.#byGroup.get(kind)
  }

  /** A connector's own place kinds. */
  of(connectorId: string): readonly PlaceKind[] {
    return this.#byConnector.get(connectorId) ?? []
  }

  /** The kinds' names, for messages: `board or repository`. */
  names(kinds: readonly PlaceKind[] = this.kinds): string {
    return either(kinds.map((k) => k.kind))
  }

  /** A scope that allows nothing: every key, empty. */
  empty(): Scope {
    return Object.fromEntries(this.kinds.map((k) => [k.scopeKey, []]))
  }

  /** A copy of a scope with every declared key (a key it lacks: empty). */
  copy(scope: Scope): Scope {
    return Object.fromEntries(this.kinds.map((k) => [k.scopeKey, [...(scope[k.scopeKey] ?? [])]]))
  }

  /** The places of a kind a scope lists. */
  listed(scope: Scope, kind: PlaceKind): string[] {
    return scope[kind.scopeKey] ?? []
  }

  /** Whether a place is in a scope (identifiers compared as their kind declares). */
  contains(scope: Scope, place: Place): boolean {
    const kind = this.#byKind.get(place.kind)
    if (!kind) return false
    const norm = kind.normalize ?? ((id: string) => id)
    const wanted = norm(place.id)
    return this.listed(scope, kind).some((id) => norm(id) === wanted)
  }

  /** Whether a scope holds any place of a group (any repository of an owner). */
  groupContains(scope: Scope, groupKind: string, value: string): boolean {
    const kind = this.#byGroup.get(groupKind)
    if (!kind?.group) return false
    const norm = kind.normalize ?? ((id: string) => id)
    const wanted = norm(value)
    return this.listed(scope, kind).some((id) => kind.group!.of(norm(id)) === wanted)
  }

  /** The group a place falls in (normalized), if its kind declares one. */
  groupOfPlace(place: Place): { kind: string; value: string } | undefined {
    const kind = this.#byKind.get(place.kind)
    if (!kind?.group) return undefined
    return { kind: kind.group.kind, value: kind.group.of((kind.normalize ?? ((id) => id))(place.id)) }
  }

  /** The form identifiers of a kind are compared in. */
  normalize(kind: string, id: string): string {
    const k = this.#byKind.get(kind) ?? this.#byGroup.get(kind)
    return k?.normalize ? k.normalize(id) : id
  }

  /** The schemas of a scope as the API accepts it and returns it, one set per list of kinds. */
  schemas(): ScopeSchemas {
    return scopeSchemas(this.kinds)
  }
}

export interface ScopeSchemas {
  /** A scope as written (create, change): each kind's identifiers checked, duplicates dropped. */
  input: z.ZodType<Scope, Partial<Scope>>
  /** A scope as returned. */
  view: z.ZodType<Scope>
}

// Schemas are made once per list of kinds: the documents' components (registry ids) of the
// schemas built from them must be the same objects however many services a process starts.
const made: Array<{ kinds: readonly PlaceKind[]; schemas: ScopeSchemas }> = []

function scopeSchemas(kinds: readonly PlaceKind[]): ScopeSchemas {
  const found = made.find((m) => m.kinds.length === kinds.length && m.kinds.every((k, i) => k === kinds[i]))
  if (found) return found.schemas
  const input = z
    .object(
      Object.fromEntries(
        kinds.map((k) => [
          k.scopeKey,
          z.array(k.id).max(1000).default([]).transform(unique).describe(k.description),
        ]),
      ),
    )
    .strict()
    .describe(
      'What the agent may touch. An empty list means none: an agent touches only what it is configured for.',
    ) as unknown as z.ZodType<Scope, Partial<Scope>>
  const view = z.object(
    Object.fromEntries(kinds.map((k) => [k.scopeKey, z.array(z.string()).describe(k.summary)])),
  ) as unknown as z.ZodType<Scope>
  const schemas = { input, view }
  made.push({ kinds, schemas })
  return schemas
}
