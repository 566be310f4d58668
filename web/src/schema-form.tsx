// Forms generated from JSON Schemas (step inputs, trigger configs, credentials): strings, numbers,
// booleans, enums, nested objects, arrays, variants chosen by a constant ("type": "connection"),
// and JSON text areas for free-form objects. Validation is the API's: its VALIDATION_FAILED names
// the field.
import { type ReactNode, useId, useState } from 'react'
import type { JsonSchema } from './types.ts'

/** A JSON text area's text that does not parse; blocks submitting until fixed. */
export class InvalidJson {
  readonly text: string
  constructor(text: string) {
    this.text = text
  }
}

export interface FormContext {
  /** Fields shown as password inputs (keys, tokens, secrets). */
  secret?: (name: string) => boolean
  /** Suggested values for a field (a datalist), e.g. the boards an account can see. */
  suggest?: (name: string, schema: JsonSchema) => Array<{ value: string; label?: string }> | undefined
}

type Kind =
  | 'const'
  | 'enum'
  | 'string'
  | 'number'
  | 'boolean'
  | 'object'
  | 'array'
  | 'variant'
  | 'flex'
  | 'json'

const scalarTypes = new Set(['string', 'number', 'integer', 'boolean'])

function typesOf(s: JsonSchema): string[] {
  if (Array.isArray(s.type)) return s.type
  if (typeof s.type === 'string') return [s.type]
  if (s.enum) return ['string']
  return []
}

function isScalar(s: JsonSchema): boolean {
  const t = typesOf(s)
  return t.length > 0 && t.every((x) => scalarTypes.has(x))
}

function options(s: JsonSchema): JsonSchema[] | null {
  return s.oneOf ?? s.anyOf ?? null
}

/** The property that tells a oneOf's objects apart by a constant, if there is one. */
function discriminator(opts: JsonSchema[]): string | null {
  const first = opts[0]?.properties
  if (!first) return null
  for (const [k, p] of Object.entries(first)) {
    if (p.const === undefined) continue
    if (opts.every((o) => o.properties?.[k]?.const !== undefined)) return k
  }
  return null
}

export function kindOf(s: JsonSchema): Kind {
  if (s.const !== undefined) return 'const'
  const opts = options(s)
  if (opts) {
    if (opts.every((o) => typesOf(o).includes('object')) && discriminator(opts)) return 'variant'
    if (opts.every((o) => isScalar(o) || (typesOf(o).includes('array') && o.items && isScalar(o.items))))
      return 'flex'
    return 'json'
  }
  if (s.enum) return 'enum'
  const t = typesOf(s)
  if (t.length > 1) return t.every((x) => scalarTypes.has(x)) ? 'flex' : 'json'
  switch (t[0]) {
    case 'string':
      return 'string'
    case 'number':
    case 'integer':
      return 'number'
    case 'boolean':
      return 'boolean'
    case 'object':
      return s.properties && Object.keys(s.properties).length > 0 ? 'object' : 'json'
    case 'array':
      return s.items && kindOf(s.items) !== 'json' ? 'array' : 'json'
    default:
      return 'json'
  }
}

/** The starting value of a form: each field's default, nothing else. */
export function initialValue(s: JsonSchema): unknown {
  if (s.default !== undefined) return structuredClone(s.default)
  if (kindOf(s) === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, p] of Object.entries(s.properties ?? {})) {
      const v = initialValue(p)
      if (v !== undefined) out[k] = v
    }
    return out
  }
  if (s.const !== undefined) return s.const
  return undefined
}

/** The fields of an object schema, e.g. a step's input. */
export function SchemaFields({
  schema,
  value,
  onChange,
  ctx = {},
}: {
  schema: JsonSchema
  value: Record<string, unknown> | undefined
  onChange: (v: Record<string, unknown>) => void
  ctx?: FormContext
}) {
  const props = schema.properties ?? {}
  const required = new Set(schema.required ?? [])
  const v = value ?? {}
  if (Object.keys(props).length === 0) return <p className="muted">This form has no fields.</p>
  return (
    <>
      {Object.entries(props).map(([name, p]) => (
        <SchemaField
          key={name}
          name={name}
          schema={p}
          required={required.has(name)}
          value={v[name]}
          onChange={(x) => onChange(setKey(v, name, x))}
          ctx={ctx}
        />
      ))}
    </>
  )
}

function setKey(obj: Record<string, unknown>, k: string, x: unknown): Record<string, unknown> {
  const out = { ...obj }
  if (x === undefined) delete out[k]
  else out[k] = x
  return out
}

function Described({ id, schema, extra }: { id: string; schema: JsonSchema; extra?: ReactNode }) {
  if (!schema.description && !extra) return null
  return (
    <p className="hint" id={id}>
      {schema.description}
      {extra}
    </p>
  )
}

export function SchemaField({
  name,
  label,
  schema,
  required,
  value,
  onChange,
  ctx,
}: {
  name: string
  label?: string
  schema: JsonSchema
  required: boolean
  value: unknown
  onChange: (v: unknown) => void
  ctx: FormContext
}) {
  const id = useId()
  const hintId = `${id}-hint`
  const kind = kindOf(schema)
  const text = label ?? name
  const labelEl = (
    <label htmlFor={id}>
      {text}
      {required ? <span className="req"> (required)</span> : null}
    </label>
  )
  const common = {
    id,
    name,
    'aria-describedby': schema.description ? hintId : undefined,
    'aria-required': required || undefined,
  }

  switch (kind) {
    case 'const':
      return null
    case 'enum': {
      const values = (schema.enum ?? []).map(String)
      return (
        <div className="field">
          {labelEl}
          <select
            {...common}
            value={value === undefined ? '' : String(value)}
            onChange={(e) => onChange(e.target.value || undefined)}
          >
            <option value="">{required ? '— choose —' : '— none —'}</option>
            {values.map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
          <Described id={hintId} schema={schema} />
        </div>
      )
    }
    case 'string': {
      const secret = ctx.secret?.(name) ?? false
      const suggestions = ctx.suggest?.(name, schema)
      const listId = suggestions?.length ? `${id}-list` : undefined
      const long = /^(desc|description|body|text|content|message|comment)$/i.test(name)
      return (
        <div className="field">
          {labelEl}
          {long ? (
            <textarea
              {...common}
              rows={3}
              value={typeof value === 'string' ? value : ''}
              onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)}
            />
          ) : (
            <input
              {...common}
              type={secret ? 'password' : 'text'}
              autoComplete={secret ? 'off' : undefined}
              spellCheck={false}
              list={listId}
              value={typeof value === 'string' ? value : ''}
              onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)}
            />
          )}
          {listId ? (
            <datalist id={listId}>
              {suggestions!.map((s) => (
                <option key={s.value} value={s.value}>
                  {s.label ?? s.value}
                </option>
              ))}
            </datalist>
          ) : null}
          <Described id={hintId} schema={schema} />
        </div>
      )
    }
    case 'number':
      return (
        <div className="field">
          {labelEl}
          <input
            {...common}
            type="number"
            inputMode={typesOf(schema).includes('integer') ? 'numeric' : 'decimal'}
            step={typesOf(schema).includes('integer') ? 1 : 'any'}
            min={typeof schema.minimum === 'number' ? schema.minimum : undefined}
            max={typeof schema.maximum === 'number' && schema.maximum < 1e15 ? schema.maximum : undefined}
            value={typeof value === 'number' ? value : ''}
            onChange={(e) => onChange(e.target.value === '' ? undefined : Number(e.target.value))}
          />
          <Described id={hintId} schema={schema} />
        </div>
      )
    case 'boolean':
      return (
        <div className="field field-check">
          <input
            {...common}
            type="checkbox"
            checked={value === true}
            onChange={(e) => onChange(e.target.checked ? true : schema.default === true ? false : undefined)}
          />
          {labelEl}
          <Described id={hintId} schema={schema} />
        </div>
      )
    case 'object': {
      const req = new Set(schema.required ?? [])
      const obj = (value && typeof value === 'object' ? value : {}) as Record<string, unknown>
      return (
        <fieldset className="nested">
          <legend>
            {text}
            {required ? <span className="req"> (required)</span> : null}
          </legend>
          {schema.description ? <p className="hint">{schema.description}</p> : null}
          {Object.entries(schema.properties ?? {}).map(([k, p]) => (
            <SchemaField
              key={k}
              name={k}
              schema={p}
              required={req.has(k)}
              value={obj[k]}
              onChange={(x) => {
                const next = setKey(obj, k, x)
                onChange(Object.keys(next).length ? next : undefined)
              }}
              ctx={ctx}
            />
          ))}
        </fieldset>
      )
    }
    case 'variant':
      return <VariantField {...{ name: text, schema, required, value, onChange, ctx }} />
    case 'array':
      return <ArrayField {...{ name: text, schema, required, value, onChange, ctx }} />
    case 'flex':
      return (
        <FlexField
          {...{
            id,
            hintId,
            labelEl,
            schema,
            value,
            onChange,
            common,
            suggestions: ctx.suggest?.(name, schema),
          }}
        />
      )
    default:
      return <JsonField {...{ id, hintId, labelEl, schema, value, onChange, common }} />
  }
}

function VariantField({
  name,
  schema,
  required,
  value,
  onChange,
  ctx,
}: {
  name: string
  schema: JsonSchema
  required: boolean
  value: unknown
  onChange: (v: unknown) => void
  ctx: FormContext
}) {
  const id = useId()
  const opts = options(schema)!
  const key = discriminator(opts)!
  const obj = (value && typeof value === 'object' ? value : {}) as Record<string, unknown>
  const current = opts.find((o) => o.properties![key].const === obj[key])
  return (
    <fieldset className="nested">
      <legend>
        {name}
        {required ? <span className="req"> (required)</span> : null}
      </legend>
      {schema.description ? <p className="hint">{schema.description}</p> : null}
      <div className="field">
        <label htmlFor={id}>{key}</label>
        <select
          id={id}
          value={current ? String(obj[key]) : ''}
          onChange={(e) => {
            const o = opts.find((x) => String(x.properties![key].const) === e.target.value)
            onChange(o ? { [key]: o.properties![key].const } : undefined)
          }}
        >
          {!required ? <option value="">— default —</option> : <option value="">— choose —</option>}
          {opts.map((o) => {
            const c = String(o.properties![key].const)
            return (
              <option key={c} value={c}>
                {c}
                {o.properties![key].description ? ` — ${o.properties![key].description}` : ''}
              </option>
            )
          })}
        </select>
      </div>
      {current
        ? Object.entries(current.properties ?? {})
            .filter(([k]) => k !== key)
            .map(([k, p]) => (
              <SchemaField
                key={k}
                name={k}
                schema={p}
                required={(current.required ?? []).includes(k)}
                value={obj[k]}
                onChange={(x) => onChange(setKey(obj, k, x))}
                ctx={ctx}
              />
            ))
        : null}
    </fieldset>
  )
}

function ArrayField({
  name,
  schema,
  required,
  value,
  onChange,
  ctx,
}: {
  name: string
  schema: JsonSchema
  required: boolean
  value: unknown
  onChange: (v: unknown) => void
  ctx: FormContext
}) {
  const items = Array.isArray(value) ? value : []
  const itemSchema = schema.items!
  const set = (next: unknown[]) => onChange(next.length ? next : undefined)
  return (
    <fieldset className="nested">
      <legend>
        {name}
        {required ? <span className="req"> (required)</span> : null}
      </legend>
      {schema.description ? <p className="hint">{schema.description}</p> : null}
      {items.length === 0 ? <p className="muted">No items.</p> : null}
      <ol className="array-items">
        {items.map((item, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: items have no identity of their own
          <li key={i} className="array-item">
            <SchemaField
              name={`${name}[${i}]`}
              label={`${name} item ${i + 1}`}
              schema={itemSchema}
              required={false}
              value={item}
              onChange={(x) => set(items.map((y, j) => (j === i ? x : y)))}
              ctx={ctx}
            />
            <button
              type="button"
              className="link"
              aria-label={`Remove ${name} item ${i + 1}`}
              onClick={() => set(items.filter((_, j) => j !== i))}
            >
              Remove
            </button>
          </li>
        ))}
      </ol>
      <button type="button" onClick={() => onChange([...items, initialValue(itemSchema)])}>
        Add {name} item
      </button>
    </fieldset>
  )
}

interface LeafProps {
  id: string
  hintId: string
  labelEl: ReactNode
  schema: JsonSchema
  value: unknown
  onChange: (v: unknown) => void
  common: Record<string, unknown>
}

/** A text box for "a string, a number or a list of them" (anyOf), read by what was typed. */
function FlexField({
  id,
  hintId,
  labelEl,
  schema,
  value,
  onChange,
  common,
  suggestions,
}: LeafProps & { suggestions?: Array<{ value: string; label?: string }> }) {
  const display = (v: unknown) => (v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v))
  const [text, setText] = useState(() => display(value))
  const opts = options(schema) ?? [schema]
  const accepts = new Set(opts.flatMap(typesOf))
  const enumValues = opts.flatMap((o) => [...(o.enum ?? []), ...(o.items?.enum ?? [])]).map(String)
  const listValues = [...new Set([...enumValues, ...(suggestions ?? []).map((s) => s.value)])]
  const listId = listValues.length ? `${id}-list` : undefined
  const parse = (t: string): unknown => {
    const s = t.trim()
    if (s === '') return undefined
    if ((accepts.has('number') || accepts.has('integer')) && /^-?\d+(\.\d+)?$/.test(s)) return Number(s)
    if (accepts.has('boolean') && (s === 'true' || s === 'false')) return s === 'true'
    if (accepts.has('array') && s.startsWith('[')) {
      try {
        return JSON.parse(s)
      } catch {
        return new InvalidJson(s)
      }
    }
    return t
  }
  const extra = accepts.has('array') ? ' A list can be written as JSON, e.g. ["a","b"].' : null
  return (
    <div className="field">
      {labelEl}
      <input
        {...common}
        type="text"
        spellCheck={false}
        list={listId}
        value={text}
        onChange={(e) => {
          setText(e.target.value)
          onChange(parse(e.target.value))
        }}
      />
      {listId ? (
        <datalist id={listId}>
          {listValues.map((v) => (
            <option key={v} value={v} />
          ))}
        </datalist>
      ) : null}
      <Described id={hintId} schema={schema} extra={extra} />
    </div>
  )
}

/** Free-form objects and anything else: JSON text. */
function JsonField({ hintId, labelEl, schema, value, onChange, common }: LeafProps) {
  const [text, setText] = useState(() =>
    value === undefined ? '' : value instanceof InvalidJson ? value.text : JSON.stringify(value, null, 2),
  )
  const invalid = value instanceof InvalidJson
  return (
    <div className="field">
      {labelEl}
      <textarea
        {...common}
        className="code"
        rows={4}
        spellCheck={false}
        aria-invalid={invalid || undefined}
        placeholder={typesOf(schema).includes('array') ? '[ … ] (JSON)' : '{ … } (JSON)'}
        value={text}
        onChange={(e) => {
          setText(e.target.value)
          const t = e.target.value.trim()
          if (t === '') return onChange(undefined)
          try {
            onChange(JSON.parse(t))
          } catch {
            onChange(new InvalidJson(e.target.value))
          }
        }}
      />
      {invalid ? <p className="field-error">Not valid JSON yet.</p> : null}
      <Described id={hintId} schema={schema} extra=" (JSON)" />
    </div>
  )
}

/** Paths of JSON text areas that do not parse. */
export function invalidFields(v: unknown, path = ''): string[] {
  if (v instanceof InvalidJson) return [path || '(input)']
  if (Array.isArray(v)) return v.flatMap((x, i) => invalidFields(x, `${path}[${i}]`))
  if (v && typeof v === 'object')
    return Object.entries(v).flatMap(([k, x]) => invalidFields(x, path ? `${path}.${k}` : k))
  return []
}

/** The value to send: without unset fields. */
export function compact(v: unknown): unknown {
  if (Array.isArray(v)) return v.filter((x) => x !== undefined).map(compact)
  if (v && typeof v === 'object' && !(v instanceof InvalidJson)) {
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined || x === '') continue
      out[k] = compact(x)
    }
    return out
  }
  return v
}
