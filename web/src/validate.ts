// Client-side validation of a form's value with the very JSON Schema the API validates with (the
// catalog's inputSchema), so a wrong value is shown next to its field as it is typed. The validator
// interprets the schema (@cfworker/json-schema) rather than compiling code: the dashboard's
// content policy allows no eval.
import { Validator } from '@cfworker/json-schema'
import type { JsonSchema } from './types.ts'

const validators = new WeakMap<JsonSchema, Validator>()

/**
 * A message per field path (`idList`, `auth.key`, `idLabels.0`) for what the value breaks, in
 * words a person reads. Strings holding templates ({{…}}, in a tool's steps) are not checked:
 * they are filled in when the tool runs.
 */
export function fieldErrors(schema: JsonSchema, value: unknown): Record<string, string> {
  let v = validators.get(schema)
  if (!v) {
    v = new Validator(schema as any, '2020-12', false)
    validators.set(schema, v)
  }
  const out: Record<string, string> = {}
  for (const e of v.validate(value ?? {}).errors) {
    // The containers' own errors ("property x does not match") only repeat their fields' errors,
    // and a variant's branches are summed up by the anyOf error.
    if (e.keyword === 'properties' || e.keyword === 'items' || e.keyword === 'allOf') continue
    if (/\/(anyOf|oneOf)\/\d+/.test(e.keywordLocation)) continue
    let path = pointerToPath(e.instanceLocation)
    if (e.keyword === 'required') {
      const missing = /"([^"]+)"/.exec(e.error)?.[1]
      if (!missing) continue
      path = path ? `${path}.${missing}` : missing
    }
    if (holdsTemplate(value, path) || out[path]) continue
    const sub = schemaAt(schema, e.keywordLocation)
    out[path] = message(e.keyword, sub, e.error)
  }
  return out
}

function pointerToPath(pointer: string): string {
  return pointer
    .replace(/^#\/?/, '')
    .split('/')
    .filter(Boolean)
    .map((s) => decodeURIComponent(s).replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.')
}

function holdsTemplate(value: unknown, path: string): boolean {
  let cur: any = value
  for (const seg of path ? path.split('.') : []) cur = cur?.[seg]
  const has = (x: unknown): boolean =>
    typeof x === 'string'
      ? x.includes('{{')
      : Array.isArray(x)
        ? x.some(has)
        : !!x && typeof x === 'object' && Object.values(x).some(has)
  return has(cur)
}

/** The schema that holds the failing keyword (`#/properties/idList/pattern` → the idList schema). */
function schemaAt(root: JsonSchema, keywordLocation: string): JsonSchema {
  const segs = keywordLocation.replace(/^#\/?/, '').split('/').filter(Boolean)
  segs.pop()
  let cur: any = root
  for (const s of segs) cur = cur?.[decodeURIComponent(s)]
  return (cur ?? {}) as JsonSchema
}

const firstSentence = (s?: string) => (s ? (/^.*?[.!?](?=\s+[A-Z“"(]|$)/s.exec(s)?.[0] ?? s) : '')
const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1)

const FORMATS: Record<string, string> = {
  'date-time': 'a date and time, such as 2026-12-31T17:00:00Z',
  date: 'a date, such as 2026-12-31',
  email: 'an email address',
  uri: 'a web address (https://…)',
  url: 'a web address (https://…)',
}

function message(keyword: string, s: JsonSchema, fallback: string): string {
  const said = firstSentence(s.description)
  switch (keyword) {
    case 'required':
      return 'Required.'
    case 'pattern':
      return said ? `Expected ${lowerFirst(said)}` : 'Not in the expected form.'
    case 'format':
      return `Expected ${FORMATS[String(s.format)] ?? String(s.format)}.`
    case 'minLength':
      return s.minLength === 1 ? 'Must not be empty.' : `At least ${s.minLength} characters.`
    case 'maxLength':
      return `At most ${s.maxLength} characters.`
    case 'minimum':
      return `At least ${s.minimum}.`
    case 'exclusiveMinimum':
      return `Greater than ${s.exclusiveMinimum}.`
    case 'maximum':
      return `At most ${s.maximum}.`
    case 'type': {
      const t = Array.isArray(s.type) ? s.type.join(' or ') : String(s.type)
      return `Must be ${t === 'integer' ? 'a whole number' : `a ${t}`}.`
    }
    case 'enum':
      return `Must be one of: ${(s.enum ?? []).map(String).join(', ')}.`
    case 'anyOf':
    case 'oneOf':
      return said ? `Expected ${lowerFirst(said)}` : 'Not one of the accepted kinds of value.'
    case 'minItems':
      return `At least ${s.minItems} item${s.minItems === 1 ? '' : 's'}.`
    case 'maxItems':
      return `At most ${s.maxItems} items.`
    case 'additionalProperties':
      return 'Not a field this form takes.'
    default:
      return fallback
  }
}
