// Forms generated from JSON Schemas (step inputs, trigger configs, credentials): strings, numbers,
// booleans, enums, nested objects, arrays, variants chosen by a constant ("type": "connection"),
// and JSON text areas for free-form objects. Labels are the schemas' titles (with the field's name
// as a hint); fields that name an upstream resource are searchable dropdowns of its choices
// (pickers, following their parents: a board's lists); errors (validate.ts, the same schema the
// API checks) are shown next to their fields as the user types.
import { type ReactNode, useEffect, useId, useState } from 'react'
import type { Choice, JsonSchema, PickerSummary } from './types.ts'

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
  /** The form's fields whose choices can be listed (the catalog's `pickers`). */
  pickers?: PickerSummary[]
  /** Lists a field's choices, given the values of the fields it depends on. */
  choices?: (field: string, parents: Record<string, string>) => Promise<Choice[]>
  /** Why choices cannot be listed yet (no connection is chosen), if so. */
  choicesBlocked?: string
  /** A message per field path (`idList`, `auth.key`), shown under the field. */
  errors?: Record<string, string>
  /** The values of the form's top-level fields and helpers, which pickers read their parents from. */
  values?: Record<string, unknown>
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

const isNumber = (s: JsonSchema) => typesOf(s).some((t) => t === 'number' || t === 'integer')

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

/**
 * The starting value of a form: each field's default, and for free-form JSON fields the first of
 * their examples (what the upstream requires, such as the code-host's accept header).
 */
export function initialValue(s: JsonSchema): unknown {
  if (
    s.default !== undefined &&
    !(kindOf(s) === 'json' && isEmptyObject(s.default) && Array.isArray(s.examples))
  )
    return structuredClone(s.default)
  if (kindOf(s) === 'json' && Array.isArray(s.examples) && s.examples.length)
    return structuredClone(s.examples[0])
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
  // Parents that are no field of the form (Get List Cards' board) only narrow the choices.
  const [helpers, setHelpers] = useState<Record<string, string>>({})
  const helperPickers = (ctx.pickers ?? []).filter((p) => p.helper)
  const inner: FormContext = { ...ctx, values: { ...helpers, ...v } }
  if (Object.keys(props).length === 0) return <p className="muted">This form has no fields.</p>
  return (
    <>
      {helperPickers.map((p) => (
        <HelperPicker
          key={p.field}
          picker={p}
          value={helpers[p.field]}
          onChange={(x) => setHelpers((h) => ({ ...h, [p.field]: x ?? '' }))}
          ctx={inner}
        />
      ))}
      {parentsFirst(Object.keys(props), ctx.pickers ?? [])
        .map((name) => [name, props[name]] as const)
        .map(([name, p]) => (
          <SchemaField
            key={name}
            name={name}
            path={name}
            schema={p}
            required={required.has(name)}
            value={v[name]}
            onChange={(x) => onChange(setKey(v, name, x))}
            ctx={inner}
          />
        ))}
    </>
  )
}

/** Field names with the fields a picker depends on moved before it (the board before its list). */
function parentsFirst(names: string[], pickers: PickerSummary[]): string[] {
  const out = [...names]
  for (const p of pickers)
    for (const parent of p.parents) {
      const at = out.indexOf(p.field)
      const from = out.indexOf(parent)
      if (at >= 0 && from > at) {
        out.splice(from, 1)
        out.splice(at, 0, parent)
      }
    }
  return out
}

function HelperPicker({
  picker,
  value,
  onChange,
  ctx,
}: {
  picker: PickerSummary
  value: string | undefined
  onChange: (v: string | undefined) => void
  ctx: FormContext
}) {
  const id = useId()
  const noun = picker.noun.charAt(0).toUpperCase() + picker.noun.slice(1)
  return (
    <div className="field">
      <label htmlFor={id}>
        {noun} <span className="muted small">(to choose from; not sent)</span>
      </label>
      <PickerInput id={id} picker={picker} value={value} onChange={onChange} ctx={ctx} numeric={false} />
    </div>
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
  path = name,
  label,
  schema,
  required,
  value,
  onChange,
  ctx,
}: {
  name: string
  /** Where the field is in the form's value (`auth.key`, `idLabels.0`), for its error. */
  path?: string
  label?: string
  schema: JsonSchema
  required: boolean
  value: unknown
  onChange: (v: unknown) => void
  ctx: FormContext
}) {
  const id = useId()
  const hintId = `${id}-hint`
  const errorId = `${id}-error`
  const kind = kindOf(schema)
  const text = label ?? schema.title ?? name
  const error = ctx.errors?.[path]
  const labelEl = (
    <label htmlFor={id}>
      {text}
      {required ? <span className="req"> (required)</span> : null}
      {text !== name && !label ? <code className="field-name">{name}</code> : null}
    </label>
  )
  const common = {
    id,
    name,
    'aria-describedby':
      [schema.description ? hintId : '', error ? errorId : ''].join(' ').trim() || undefined,
    'aria-required': required || undefined,
    'aria-invalid': error ? true : undefined,
  }
  const errorEl = error ? (
    <p className="field-error" id={errorId} role="alert">
      {error}
    </p>
  ) : null
  // A field that names an upstream resource: a searchable dropdown of its choices.
  const picker = (kind === 'string' || kind === 'number' || kind === 'flex') && pickerFor(ctx, path)
  // A number, or for "a file name or an id" (flex) fields a number when only digits were typed.
  const numeric =
    kind === 'number' || (kind === 'flex' && (options(schema) ?? [schema]).some((o) => isNumber(o)))
  if (picker)
    return (
      <div className="field">
        {labelEl}
        <PickerInput
          id={id}
          picker={picker}
          value={value === undefined ? undefined : String(value)}
          onChange={(x) => onChange(numeric && x !== undefined && /^\d+$/.test(x) ? Number(x) : x)}
          ctx={ctx}
          numeric={kind === 'number'}
          common={common}
        />
        {errorEl}
        <Described id={hintId} schema={schema} />
      </div>
    )

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
          {errorEl}
          <Described id={hintId} schema={schema} />
        </div>
      )
    }
    case 'string': {
      const secret = ctx.secret?.(name) ?? false
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
              value={typeof value === 'string' ? value : ''}
              onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)}
            />
          )}
          {errorEl}
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
          {errorEl}
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
              path={`${path}.${k}`}
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
      return <VariantField {...{ name: text, path, schema, required, value, onChange, ctx }} />
    case 'array':
      return <ArrayField {...{ name: text, field: name, path, schema, required, value, onChange, ctx }} />
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
            errorEl,
          }}
        />
      )
    default:
      return <JsonField {...{ id, hintId, labelEl, schema, value, onChange, common, errorEl }} />
  }
}

function VariantField({
  name,
  path,
  schema,
  required,
  value,
  onChange,
  ctx,
}: {
  name: string
  path: string
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
                path={`${path}.${k}`}
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
  field,
  path,
  schema,
  required,
  value,
  onChange,
  ctx,
}: {
  name: string
  /** The field's own name (name is its label). */
  field: string
  path: string
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
      {ctx.errors?.[path] ? <p className="field-error">{ctx.errors[path]}</p> : null}
      {items.length === 0 ? <p className="muted">No items.</p> : null}
      <ol className="array-items">
        {items.map((item, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: items have no identity of their own
          <li key={i} className="array-item">
            <SchemaField
              name={`${field}[${i}]`}
              path={`${path}.${i}`}
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
  errorEl: ReactNode
  schema: JsonSchema
  value: unknown
  onChange: (v: unknown) => void
  common: Record<string, unknown>
}

/** A text box for "a string, a number or a list of them" (anyOf), read by what was typed. */
function FlexField({ id, hintId, labelEl, schema, value, onChange, common, errorEl }: LeafProps) {
  const display = (v: unknown) => (v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v))
  const [text, setText] = useState(() => display(value))
  const opts = options(schema) ?? [schema]
  const accepts = new Set(opts.flatMap(typesOf))
  const enumValues = opts.flatMap((o) => [...(o.enum ?? []), ...(o.items?.enum ?? [])]).map(String)
  const listValues = [...new Set(enumValues)]
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
      {errorEl}
      <Described id={hintId} schema={schema} extra={extra} />
    </div>
  )
}

/** Free-form objects and anything else: JSON text. */
function JsonField({ hintId, labelEl, schema, value, onChange, common, errorEl }: LeafProps) {
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
      {invalid ? <p className="field-error">Not valid JSON yet.</p> : errorEl}
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

const isEmptyObject = (v: unknown) => !!v && typeof v === 'object' && Object.keys(v).length === 0

/** The picker of a top-level field (or of a list field's items: `idLabels.0` → idLabels). */
function pickerFor(ctx: FormContext, path: string): PickerSummary | undefined {
  const field = path.replace(/\.\d+$/, '')
  if (field.includes('.')) return undefined
  return ctx.pickers?.find((p) => p.field === field && !p.helper)
}

/**
 * A searchable dropdown of a field's choices (a combobox): typing filters them, a click or Enter
 * picks one, and anything typed is kept as the value too (an id, a page address, a template).
 * The choices are listed once the fields they depend on have values.
 */
function PickerInput({
  id,
  picker,
  value,
  onChange,
  ctx,
  numeric,
  common,
}: {
  id: string
  picker: PickerSummary
  value: string | undefined
  onChange: (v: string | undefined) => void
  ctx: FormContext
  numeric: boolean
  common?: Record<string, unknown>
}) {
  const listId = `${id}-choices`
  const [open, setOpen] = useState(false)
  const [typed, setTyped] = useState(false)
  const [active, setActive] = useState(0)
  const [state, setState] = useState<{ key: string; choices?: Choice[]; error?: string; loading?: boolean }>({
    key: '',
  })
  const parents: Record<string, string> = {}
  const missing: string[] = []
  for (const p of picker.parents) {
    const v = ctx.values?.[p]
    if (v === undefined || v === '' || (typeof v === 'string' && v.includes('{{'))) missing.push(p)
    else parents[p] = String(v)
  }
  const blocked =
    ctx.choicesBlocked ?? (missing.length ? `Choose the ${missing.join(' and ')} first.` : undefined)
  const key = blocked ? '' : JSON.stringify(parents)
  const load = ctx.choices
  // Listed when the dropdown opens, and again when a parent changes (the loader itself is made
  // anew on each render of the form, so it is not what the effect follows).
  // biome-ignore lint/correctness/useExhaustiveDependencies: keyed by the parents' values
  useEffect(() => {
    if (!open || blocked || !load) return
    let live = true
    setState((s) => (s.key === key && !s.error ? s : { key, loading: true }))
    load(picker.field, parents).then(
      (choices) => live && setState({ key, choices }),
      (err: Error) => live && setState({ key, error: err.message }),
    )
    return () => {
      live = false
    }
  }, [open, blocked, key, picker.field])
  const text = value ?? ''
  const all = state.key === key ? (state.choices ?? []) : []
  const exact = all.find((c) => c.value === text)
  // What was typed since the dropdown opened filters it; a value it opened with (an id, a
  // template) does not.
  const q = exact || !typed ? '' : text.toLowerCase()
  const shown = all.filter(
    (c) => !q || c.label.toLowerCase().includes(q) || c.value.toLowerCase().includes(q),
  )
  const pick = (c: Choice) => {
    onChange(c.value)
    setOpen(false)
  }
  return (
    <div className="picker">
      <input
        {...common}
        id={id}
        type="text"
        role="combobox"
        aria-expanded={open}
        aria-controls={listId}
        aria-autocomplete="list"
        autoComplete="off"
        spellCheck={false}
        inputMode={numeric ? 'numeric' : undefined}
        placeholder={`Search ${picker.noun}s, or type ${numeric ? 'a number' : 'an id'}…`}
        aria-activedescendant={open && shown[active] ? `${listId}-${active}` : undefined}
        value={text}
        onFocus={() => {
          setOpen(true)
          setTyped(false)
        }}
        onClick={() => {
          if (open) return
          setOpen(true)
          setTyped(false)
        }}
        // Choosing with the mouse keeps the focus here (the options' mousedown is prevented).
        onBlur={() => setOpen(false)}
        onChange={(e) => {
          onChange(e.target.value === '' ? undefined : e.target.value)
          setOpen(true)
          setTyped(true)
          setActive(0)
        }}
        onKeyDown={(e) => {
          if (e.key === 'Escape') setOpen(false)
          else if (e.key === 'ArrowDown') {
            setOpen(true)
            setActive((a) => Math.min(a + 1, shown.length - 1))
            e.preventDefault()
          } else if (e.key === 'ArrowUp') {
            setActive((a) => Math.max(a - 1, 0))
            e.preventDefault()
          } else if (e.key === 'Enter' && open && shown[active]) {
            pick(shown[active])
            e.preventDefault()
          }
        }}
      />
      {exact && exact.label !== exact.value ? <p className="picked small">{exact.label}</p> : null}
      {open ? (
        <div className="choices" id={listId} role="listbox" aria-label={`${picker.noun} choices`}>
          {blocked ? (
            <p className="muted small">{blocked}</p>
          ) : state.loading || state.key !== key ? (
            <p className="muted small">Loading {picker.noun}s…</p>
          ) : state.error ? (
            <p className="field-error small">{state.error}</p>
          ) : shown.length === 0 ? (
            <p className="muted small">No {picker.noun} matches; what you typed is kept.</p>
          ) : (
            shown.map((c, i) => (
              // The keyboard works on the input (arrows, Enter: aria-activedescendant), as a combobox's does.
              // biome-ignore lint/a11y/useKeyWithClickEvents: the input handles the keys for its options
              <div
                key={c.value}
                id={`${listId}-${i}`}
                role="option"
                aria-selected={i === active}
                tabIndex={-1}
                className={i === active ? 'active' : undefined}
                onMouseDown={(e) => e.preventDefault()}
                onClick={() => pick(c)}
              >
                <span>{c.label}</span>
                {c.detail ? <span className="muted small"> · {c.detail}</span> : null}
                {c.value !== c.label ? <code className="muted small">{c.value}</code> : null}
              </div>
            ))
          )}
        </div>
      ) : null}
    </div>
  )
}
