// The choices of fields that name upstream resources, from the API (GET /v1/steps/:id/options/:field
// and GET /v1/catalog/triggers/:id/options/:field), kept for a minute so reopening a dropdown does
// not ask the upstream again.
import { useMemo, useState } from 'react'
import { get, type Query } from './api.ts'
import type { Choice, JsonSchema } from './types.ts'
import { fieldErrors } from './validate.ts'

const KEEP_MS = 60_000
const cache = new Map<string, { at: number; choices: Promise<Choice[]> }>()

export function loadChoices(path: string, query: Query): Promise<Choice[]> {
  const key = `${path}?${JSON.stringify(query)}`
  const hit = cache.get(key)
  if (hit && Date.now() - hit.at < KEEP_MS) return hit.choices
  const choices = get<{ choices: Choice[] }>(path, query).then((r) => r.choices)
  cache.set(key, { at: Date.now(), choices })
  choices.catch(() => cache.delete(key))
  return choices
}

/** A form's choices loader for a step or a trigger of the catalog, with a chosen connection. */
export function choicesOf(kind: 'step' | 'trigger', id: string, connectionId: string | undefined) {
  const base =
    kind === 'step' ? `/v1/steps/${encodeURIComponent(id)}` : `/v1/catalog/triggers/${encodeURIComponent(id)}`
  return (field: string, parents: Record<string, string>) =>
    loadChoices(`${base}/options/${encodeURIComponent(field)}`, { connectionId, ...parents })
}

/**
 * Errors of a form's value against its schema, as the user types: a field's error shows once the
 * field was changed, every field's once the user tried to submit (`reveal`).
 */
export function useFieldErrors(schema: JsonSchema, value: unknown, initial: unknown) {
  const [revealed, setRevealed] = useState(false)
  const all = useMemo(() => fieldErrors(schema, value), [schema, value])
  const start = (initial ?? {}) as Record<string, unknown>
  const now = (value ?? {}) as Record<string, unknown>
  const shown: Record<string, string> = {}
  for (const [path, message] of Object.entries(all)) {
    const top = path.split('.')[0]
    if (revealed || JSON.stringify(now[top]) !== JSON.stringify(start[top])) shown[path] = message
  }
  return {
    errors: shown,
    count: Object.keys(all).length,
    /** Shows every field's error; true when there is none. */
    check: () => {
      setRevealed(true)
      return Object.keys(all).length === 0
    },
    reset: () => setRevealed(false),
  }
}
