// Parameter parsing shared by the API routes and the control API's `act`. The classic API takes
// every parameter from the query string or the body alike, as strings or JSON values, and answers
// a bad one with 400 `invalid value for <name>`.
import { invalidValue } from './errors.ts'

export type Params = Record<string, unknown>

export const HEX24 = /^[0-9a-f]{24}$/
export const SHORT_LINK = /^[A-Za-z0-9]{8}$/
const MAX_TEXT = 16384

export function str(
  p: Params,
  field: string,
  opts: { max?: number; nonEmpty?: boolean } = {},
): string | undefined {
  const v = p[field]
  if (v === undefined) return undefined
  if (typeof v !== 'string' && typeof v !== 'number') throw invalidValue(field)
  const s = String(v)
  if (s.length > (opts.max ?? MAX_TEXT)) throw invalidValue(field)
  if (opts.nonEmpty && s.trim() === '') throw invalidValue(field)
  return s
}

export function bool(p: Params, field: string): boolean | undefined {
  const v = p[field]
  if (v === undefined) return undefined
  if (v === true || v === 'true') return true
  if (v === false || v === 'false') return false
  throw invalidValue(field)
}

export function oneOf<T extends string>(p: Params, field: string, values: readonly T[]): T | undefined {
  const v = p[field]
  if (v === undefined) return undefined
  if (typeof v !== 'string' || !values.includes(v as T)) throw invalidValue(field)
  return v as T
}

export type PosSpec = 'top' | 'bottom' | number

export function pos(p: Params, field = 'pos'): PosSpec | undefined {
  const v = p[field]
  if (v === undefined) return undefined
  if (v === 'top' || v === 'bottom') return v
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN
  if (!Number.isFinite(n) || n <= 0) throw invalidValue(field)
  return n
}

/** A number position from `top`/`bottom`/number among the siblings' positions. */
export function resolvePos(spec: PosSpec, siblings: number[], step: number): number {
  if (typeof spec === 'number') return spec
  if (siblings.length === 0) return step
  if (spec === 'top') return Math.min(...siblings) / 2
  return Math.max(...siblings) + step
}

/** A date parameter: ISO string out, `null` when cleared, 400 when unparseable. */
export function date(p: Params, field: string): string | null | undefined {
  const v = p[field]
  if (v === undefined) return undefined
  if (v === null || v === 'null' || v === '') return null
  const ms = typeof v === 'number' ? v : typeof v === 'string' ? Date.parse(v) : Number.NaN
  if (!Number.isFinite(ms)) throw invalidValue(field)
  return new Date(ms).toISOString()
}

/** A list of ids, as a JSON array or a comma-separated string. */
export function idArray(p: Params, field: string): string[] | undefined {
  const v = p[field]
  if (v === undefined) return undefined
  let items: unknown[]
  if (Array.isArray(v)) items = v
  else if (typeof v === 'string') items = v === '' ? [] : v.split(',').map((s) => s.trim())
  else throw invalidValue(field)
  for (const id of items) if (typeof id !== 'string' || !HEX24.test(id)) throw invalidValue(field)
  return [...new Set(items as string[])]
}

export function int(p: Params, field: string, min: number, max: number): number | undefined {
  const v = p[field]
  if (v === undefined) return undefined
  const n = Number(v)
  if (!Number.isInteger(n) || n < min || n > max) throw invalidValue(field)
  return n
}

/** `fields=name,idList` keeps only those fields (and `id`), in the object's order; `all` or absent keeps everything. */
export function pickFields<T extends object>(obj: T, fields: unknown): Partial<T> {
  if (typeof fields !== 'string' || fields === '' || fields === 'all') return obj
  const wanted = wantedFields(fields)
  const out: Record<string, unknown> = {}
  for (const k in obj) if (wanted.has(k)) out[k] = obj[k]
  return out as Partial<T>
}

/** The field sets of the `fields` values seen: clients ask for the same few again and again. */
const fieldSets = new Map<string, Set<string>>()

function wantedFields(fields: string): Set<string> {
  let wanted = fieldSets.get(fields)
  if (!wanted) {
    wanted = new Set(['id', ...fields.split(',').map((f) => f.trim())])
    if (fieldSets.size >= 1_000) fieldSets.clear()
    fieldSets.set(fields, wanted)
  }
  return wanted
}

export function slugify(name: string): string {
  const slug = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
  return slug.slice(0, 128)
}
