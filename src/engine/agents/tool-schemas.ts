// One input schema per callable (from the steps' Zod definitions, via the registry), and its
// export in each model provider's dialect:
//
// - closed: every object says `additionalProperties: false`, and a call naming an argument the
//   schema does not declare is refused with that argument's name (unknownArguments);
// - OpenAI strict function calling (openaiStrictSchema): every property required, the optional ones
//   nullable, only the keywords strict mode supports;
// - Gemini function declarations (geminiSchema): the OpenAPI 3.0 subset its `parameters` accept;
// - Anthropic takes the closed JSON Schema as it is.
//
// What a dialect cannot say (an object of free keys such as headers, a value of any JSON) is asked
// for as JSON text, and fromProviderArguments turns such a call back into the step's own input:
// JSON text where the step wants an object or a list is parsed, null for an optional argument
// that takes no null leaves it out. Both only touch values the step's own schema would refuse, so
// a call in the step's own shape passes through unchanged.

export type Schema = Record<string, unknown>

/** The formats GET /v1/agents/:id/tools.json and GET /v1/function-tools serve. */
export const FUNCTION_TOOL_FORMATS = ['openai', 'anthropic', 'gemini', 'mcp'] as const
export type FunctionToolFormat = (typeof FUNCTION_TOOL_FORMATS)[number]

const isObject = (v: unknown): v is Schema => v !== null && typeof v === 'object' && !Array.isArray(v)

/** Keywords whose value is a map of schemas, a list of schemas, or one schema. */
const MAP_KEYWORDS = new Set(['properties', '$defs', 'definitions', 'patternProperties'])
const LIST_KEYWORDS = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems'])
const ONE_KEYWORDS = new Set(['items', 'additionalProperties', 'propertyNames', 'not', 'if', 'then', 'else'])

/** Applies `f` to every subschema, bottom-up; `f` gets each schema with its children already mapped. */
function mapSchema(schema: unknown, f: (s: Schema) => Schema): unknown {
  if (!isObject(schema)) return schema
  const out: Schema = {}
  for (const [k, v] of Object.entries(schema)) {
    if (MAP_KEYWORDS.has(k) && isObject(v))
      out[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, mapSchema(s, f)]))
    else if (LIST_KEYWORDS.has(k) && Array.isArray(v)) out[k] = v.map((s) => mapSchema(s, f))
    else if (ONE_KEYWORDS.has(k) && isObject(v)) out[k] = mapSchema(v, f)
    else out[k] = v
  }
  return f(out)
}

const typesOf = (s: Schema): string[] =>
  Array.isArray(s.type) ? (s.type as string[]) : typeof s.type === 'string' ? [s.type] : []

/** An object of declared properties (not a map of free keys). */
const isRecord = (s: Schema) =>
  (typesOf(s).includes('object') || 'additionalProperties' in s) &&
  s.additionalProperties !== undefined &&
  s.additionalProperties !== false

/**
 * Closes every object that does not say otherwise: `additionalProperties: false` where the
 * schema has properties (or is an object) and no `additionalProperties` of its own. Maps of free
 * keys (`additionalProperties: {schema}`) stay maps.
 */
export function closeObjects<T>(schema: T): T {
  return mapSchema(schema, (s) =>
    (typesOf(s).includes('object') || isObject(s.properties)) && !('additionalProperties' in s)
      ? { ...s, additionalProperties: false }
      : s,
  ) as T
}

// ---------------------------------------------------------------------------------------------
// Unknown arguments

export interface ArgumentIssue {
  path: (string | number)[]
  message: string
}

/**
 * The arguments a value gives that its closed schema does not declare, each with its path and
 * what the object takes instead. Only undeclared names are looked for; types, bounds and the
 * rest are the step's own validation.
 */
export function unknownArguments(
  schema: unknown,
  value: unknown,
  path: (string | number)[] = [],
): ArgumentIssue[] {
  if (!isObject(schema)) return []
  const branches = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined
  if (Array.isArray(branches)) {
    // The branch the value fits best: one with no unknown argument, else the one with fewest.
    let best: ArgumentIssue[] | undefined
    for (const b of branches) {
      if (!fitsType(b, value)) continue
      const issues = unknownArguments(b, value, path)
      if (!best || issues.length < best.length) best = issues
      if (issues.length === 0) break
    }
    return best ?? []
  }
  if (Array.isArray(value)) {
    if (!isObject(schema.items)) return []
    return value.flatMap((v, i) => unknownArguments(schema.items, v, [...path, i]))
  }
  if (!isObject(value)) return []
  const properties = isObject(schema.properties) ? schema.properties : {}
  const issues: ArgumentIssue[] = []
  for (const [k, v] of Object.entries(value)) {
    if (Object.hasOwn(properties, k)) issues.push(...unknownArguments(properties[k], v, [...path, k]))
    else if (schema.additionalProperties === false) {
      const names = Object.keys(properties)
      issues.push({
        path: [...path, k],
        message: `is not an argument here${names.length ? ` (the arguments are: ${names.join(', ')})` : ' (it takes none)'}`,
      })
    } else if (isObject(schema.additionalProperties))
      issues.push(...unknownArguments(schema.additionalProperties, v, [...path, k]))
  }
  return issues
}

/** Whether a branch's `type` admits the value's JSON type (an untyped branch admits anything). */
function fitsType(schema: unknown, value: unknown): boolean {
  if (!isObject(schema)) return true
  const types = typesOf(schema)
  if (types.length === 0) return true
  const t =
    value === null
      ? 'null'
      : Array.isArray(value)
        ? 'array'
        : typeof value === 'number'
          ? Number.isInteger(value)
            ? 'integer'
            : 'number'
          : typeof value
  return types.includes(t) || (t === 'integer' && types.includes('number'))
}

// ---------------------------------------------------------------------------------------------
// What a dialect without maps and untyped values is asked for instead

/** Whether every value the schema admits can be described with typed, closed objects only. */
function representable(s: unknown): boolean {
  if (!isObject(s)) return false
  if (isRecord(s)) return false
  const branches = (s.anyOf ?? s.oneOf) as unknown[] | undefined
  if (Array.isArray(branches)) return branches.every(representable)
  if (typesOf(s).length === 0 && !('const' in s) && !('enum' in s)) return false
  if (isObject(s.properties) && !Object.values(s.properties).every(representable)) return false
  if (typesOf(s).includes('array') && !representable(s.items)) return false
  return true
}

/** A value the dialect cannot describe, asked for as JSON text (parsed back on the call). */
function asJsonText(s: Schema): Schema {
  const what = isRecord(s) ? 'an object' : 'a JSON value'
  const said = typeof s.description === 'string' ? `${s.description.replace(/\s*$/, '')} ` : ''
  return { type: 'string', description: `${said}Give it as JSON text (${what}).` }
}

/**
 * The schema with each property a dialect cannot describe replaced by a JSON text string. The
 * root stays an object (its own properties are looked at one by one).
 */
function jsonTextWhereNeeded(schema: Schema): Schema {
  const visit = (s: Schema): Schema => {
    const out: Schema = { ...s }
    if (isObject(s.properties))
      out.properties = Object.fromEntries(
        Object.entries(s.properties).map(([k, p]) => [
          k,
          isObject(p) && !representable(p) ? asJsonText(p) : visit(p as Schema),
        ]),
      )
    if (isObject(s.items)) out.items = representable(s.items) ? visit(s.items) : asJsonText(s.items)
    for (const key of ['anyOf', 'oneOf'])
      if (Array.isArray(s[key])) out[key] = (s[key] as Schema[]).map((b) => (isObject(b) ? visit(b) : b))
    return out
  }
  return visit(schema)
}

/** Folds a dropped `default` into the description, so the model still knows it. */
function withDefaultSaid(s: Schema): Schema {
  if (!('default' in s)) return s
  const { default: d, ...rest } = s
  if (d === null || d === undefined) return rest
  const said = typeof rest.description === 'string' ? rest.description.replace(/\s*$/, ' ') : ''
  return { ...rest, description: `${said}Default: ${JSON.stringify(d)}.` }
}

// ---------------------------------------------------------------------------------------------
// OpenAI strict function calling

/**
 * Keywords OpenAI's strict mode supports ("Supported schemas",
 * https://platform.openai.com/docs/guides/structured-outputs#supported-schemas): the types
 * string, number, boolean, integer, object, array, enum and anyOf; for strings pattern and
 * format; for numbers multipleOf, maximum, exclusiveMaximum, minimum, exclusiveMinimum; for
 * arrays minItems and maxItems; plus definitions ($defs, $ref) and annotations (title,
 * description). Everything else (minLength, maxLength, default, examples, propertyNames, oneOf,
 * allOf, not, …) is left out.
 */
export const OPENAI_STRICT_KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  'pattern',
  'format',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'minItems',
  'maxItems',
  '$defs',
  '$ref',
  'title',
  'description',
])

/** The string formats strict mode supports (same page). */
export const OPENAI_STRICT_FORMATS = new Set([
  'date-time',
  'time',
  'date',
  'duration',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'uuid',
])

/** null added to what a schema admits (an optional argument in strict mode says null for "none"). */
function nullable(s: Schema): Schema {
  if (Array.isArray(s.anyOf)) {
    const branches = s.anyOf as Schema[]
    return branches.some((b) => typesOf(b).includes('null'))
      ? s
      : { ...s, anyOf: [...branches, { type: 'null' }] }
  }
  const types = typesOf(s)
  if (types.length === 0 || types.includes('null')) return s
  const out: Schema = { ...s, type: [...types, 'null'] }
  if (Array.isArray(s.enum) && !s.enum.includes(null)) out.enum = [...s.enum, null]
  return out
}

/** The schema as OpenAI's strict function calling accepts it. */
export function openaiStrictSchema(schema: Schema): Schema {
  return mapSchema(jsonTextWhereNeeded(closeObjects(schema)), (raw) => {
    let s = withDefaultSaid(raw)
    if (Array.isArray(s.oneOf)) {
      const { oneOf, ...rest } = s
      s = { ...rest, anyOf: oneOf }
    }
    if ('const' in s) {
      const { const: c, ...rest } = s
      s = { ...rest, enum: [c] }
    }
    const out: Schema = {}
    for (const [k, v] of Object.entries(s)) {
      if (!OPENAI_STRICT_KEYWORDS.has(k)) continue
      if (k === 'format' && !OPENAI_STRICT_FORMATS.has(String(v))) continue
      out[k] = v
    }
    // A type-less schema with anyOf keeps no object keywords of its own.
    const properties = out.properties
    if (isObject(properties)) {
      const required = new Set(Array.isArray(out.required) ? (out.required as string[]) : [])
      out.properties = Object.fromEntries(
        Object.entries(properties).map(([k, p]) => [k, required.has(k) ? p : nullable(p as Schema)]),
      )
      out.required = Object.keys(properties)
      out.additionalProperties = false
    }
    return out
  }) as Schema
}

// ---------------------------------------------------------------------------------------------
// Gemini function declarations

/**
 * The Schema fields Gemini's function declarations accept: "a select subset of an OpenAPI 3.0
 * schema object" (https://ai.google.dev/api/caching#Schema, linked from
 * https://ai.google.dev/gemini-api/docs/function-calling#function_declarations). Not among them:
 * additionalProperties, propertyNames, const, oneOf, allOf, not, exclusiveMinimum,
 * exclusiveMaximum, examples, $ref/$defs, type arrays; every schema needs a type (anyOf aside).
 */
export const GEMINI_KEYWORDS = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
])

/** Gemini's Type enum (written in lower case, as the function-calling guide's examples do). */
export const GEMINI_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object'])

/** Formats Gemini supports, by type (same Schema page): NUMBER float, double; INTEGER int32, int64; STRING enum, date-time. */
export const GEMINI_FORMATS: Record<string, Set<string>> = {
  number: new Set(['float', 'double']),
  integer: new Set(['int32', 'int64']),
  string: new Set(['enum', 'date-time']),
}

/** The schema as Gemini's function declarations accept it (`parameters`). */
export function geminiSchema(schema: Schema): Schema {
  return mapSchema(jsonTextWhereNeeded(schema), (raw) => {
    let s = withDefaultSaid(raw)
    if (Array.isArray(s.oneOf)) {
      const { oneOf, ...rest } = s
      s = { ...rest, anyOf: oneOf }
    }
    if ('const' in s) {
      const { const: c, ...rest } = s
      s = { ...rest, enum: [c] }
    }
    // A type list: one type (with nullable for null), or one branch per type.
    const types = typesOf(s)
    if (Array.isArray(s.type)) {
      const real = types.filter((t) => t !== 'null')
      if (real.length === 1)
        s = { ...s, type: real[0], ...(types.includes('null') ? { nullable: true } : {}) }
      else {
        const { type: _t, enum: e, ...rest } = s
        s = {
          ...rest,
          anyOf: real.map((t) => ({
            type: t,
            ...(Array.isArray(e) ? { enum: e.filter((x) => typeof x === t) } : {}),
          })),
          ...(types.includes('null') ? { nullable: true } : {}),
        }
      }
    }
    // A null branch: nullable on the rest (a single branch left stands for the union).
    if (Array.isArray(s.anyOf) && (s.anyOf as Schema[]).some((b) => b.type === 'null')) {
      const rest = (s.anyOf as Schema[]).filter((b) => b.type !== 'null')
      const { anyOf: _a, ...own } = s
      s = rest.length === 1 ? { ...rest[0], ...own, nullable: true } : { ...own, anyOf: rest, nullable: true }
    }
    // Exclusive bounds: an integer's next value is inclusive; a number's bound stays, inclusive.
    for (const [ex, inc, step] of [
      ['exclusiveMinimum', 'minimum', 1],
      ['exclusiveMaximum', 'maximum', -1],
    ] as const) {
      if (typeof s[ex] !== 'number') continue
      const { [ex]: bound, ...rest } = s
      s = { ...rest, [inc]: s.type === 'integer' ? (bound as number) + step : bound }
    }
    const out: Schema = {}
    for (const [k, v] of Object.entries(s)) {
      if (!GEMINI_KEYWORDS.has(k)) continue
      if (k === 'default') continue // said in the description (withDefaultSaid)
      if (k === 'format' && !GEMINI_FORMATS[String(s.type)]?.has(String(v))) continue
      out[k] = v
    }
    // enum is for strings only; anything else is said in the description.
    if (Array.isArray(out.enum) && (out.type !== 'string' || out.enum.some((x) => typeof x !== 'string'))) {
      const values = (out.enum as unknown[]).filter((x) => x !== null)
      delete out.enum
      if (out.type === undefined && values.every((x) => typeof x === 'string')) out.type = 'string'
      if (out.type === 'string') out.enum = values
      else
        out.description = `${typeof out.description === 'string' ? `${out.description} ` : ''}One of ${values.map((v) => JSON.stringify(v)).join(', ')}.`
    }
    return out
  }) as Schema
}

// ---------------------------------------------------------------------------------------------
// A provider's call, back in the step's own shape

/**
 * Arguments as a provider's dialect writes them, in the shape of the callable's own schema:
 * JSON text where the schema wants no string (an object of free keys, a list, any JSON value
 * asked for as text) is parsed; null for an optional property that admits no null is left out.
 * Values the schema already admits are left as they are.
 */
export function fromProviderArguments(schema: unknown, value: unknown): unknown {
  if (!isObject(schema)) return value
  if (typeof value === 'string' && !admitsString(schema)) {
    try {
      return fromProviderArguments(schema, JSON.parse(value))
    } catch {
      return value // not JSON: the step's validation says what is wrong
    }
  }
  const branches = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined
  if (Array.isArray(branches)) {
    const branch = branches.find((b) => fitsType(b, value) && isObject(b) && typesOf(b).length > 0)
    return branch ? fromProviderArguments(branch, value) : value
  }
  if (Array.isArray(value))
    return isObject(schema.items) ? value.map((v) => fromProviderArguments(schema.items, v)) : value
  if (!isObject(value)) return value
  const properties = isObject(schema.properties) ? schema.properties : {}
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : [])
  const out: Schema = {}
  for (const [k, v] of Object.entries(value)) {
    const p = properties[k]
    if (v === null && isObject(p) && !required.has(k) && !admitsNull(p)) continue
    out[k] = Object.hasOwn(properties, k)
      ? fromProviderArguments(p, v)
      : isObject(schema.additionalProperties)
        ? fromProviderArguments(schema.additionalProperties, v)
        : v
  }
  return out
}

function admits(schema: Schema, type: string): boolean {
  const branches = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined
  if (Array.isArray(branches)) return branches.some((b) => isObject(b) && admits(b, type))
  if ('const' in schema) return schema.const === null ? type === 'null' : typeof schema.const === type
  if (Array.isArray(schema.enum))
    return schema.enum.some((x) => (x === null ? type === 'null' : typeof x === type))
  const types = typesOf(schema)
  return types.length === 0 || types.includes(type)
}
const admitsString = (s: Schema) => admits(s, 'string')
const admitsNull = (s: Schema) => admits(s, 'null')
