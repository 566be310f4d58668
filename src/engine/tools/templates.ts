// Templates in tool step inputs: `{{input.x}}`, `{{event.data.card.id}}`, `{{steps.0.output.id}}`
// and `{{steps.<name>.output.id}}`. A string that is exactly one `{{…}}` keeps the referenced
// value's type (an object, a number); anywhere else the value is written into the text.
// Templates are checked when a tool is saved, so a run never meets a malformed one, nor a path
// that earlier steps' outputs or the events that start it cannot hold.

import type { JsonSchemaNode } from '../../kit/json-schema.ts'
export type TemplateRoot = 'input' | 'event' | 'steps'

export interface TemplateRef {
  /** As written between the braces, trimmed: `steps.0.output.id`. */
  expression: string
  root: TemplateRoot
  /** The segments after the root. */
  path: string[]
}

type Part = string | TemplateRef

const ROOTS = new Set<string>(['input', 'event', 'steps'])
const SEGMENT = /^[A-Za-z0-9_$-]+$/
const EXACT = /^\{\{([^{}]*)\}\}$/

/** A template that cannot be read, with where it is and what is wrong. */
export class TemplateError extends Error {
  readonly field: string
  constructor(field: string, message: string) {
    super(message)
    this.name = 'TemplateError'
    this.field = field
  }
}

/** Splits a string into literal text and references; throws a TemplateError on bad syntax. */
export function parseTemplate(text: string, field: string): Part[] {
  const parts: Part[] = []
  let i = 0
  while (i < text.length) {
    const open = text.indexOf('{{', i)
    if (open < 0) {
      parts.push(text.slice(i))
      break
    }
    if (open > i) parts.push(text.slice(i, open))
    const close = text.indexOf('}}', open + 2)
    if (close < 0)
      throw new TemplateError(field, `"${clip(text)}" opens {{ at ${open} and never closes it with }}`)
    const inner = text.slice(open + 2, close)
    if (inner.includes('{{'))
      throw new TemplateError(field, `"${clip(text)}" opens {{ inside another {{ … }} at ${open}`)
    parts.push(parseRef(inner, field))
    i = close + 2
  }
  return parts
}

function parseRef(inner: string, field: string): TemplateRef {
  const expression = inner.trim()
  if (!expression) throw new TemplateError(field, 'has an empty {{ }}')
  const segments = expression.split('.')
  const bad = segments.find((s) => !SEGMENT.test(s))
  if (bad !== undefined)
    throw new TemplateError(
      field,
      `{{${expression}}} is not a path of names joined by dots (bad part "${bad}"); write e.g. {{input.name}}`,
    )
  const [root, ...path] = segments
  if (!ROOTS.has(root))
    throw new TemplateError(
      field,
      `{{${expression}}} starts with "${root}"; a template starts with input, event or steps`,
    )
  return { expression, root: root as TemplateRoot, path }
}

/** Every string in a value (deeply), with its dotted field name. */
export function stringsOf(value: unknown, field: string): Array<{ field: string; text: string }> {
  if (typeof value === 'string') return [{ field, text: value }]
  if (Array.isArray(value)) return value.flatMap((v, i) => stringsOf(v, `${field}.${i}`))
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => stringsOf(v, `${field}.${k}`))
  return []
}

/** What is known, when a tool is saved, of the values its templates read. */
export interface KnownValues {
  /** The JSON Schema of each step's output, by index. */
  outputs: unknown[]
  /** The events that may start the tool (a sample of each targeting trigger's), with the trigger's name. */
  events: Array<{ trigger: string; event: unknown }>
  /** The tool's declared inputs, when it declares them: {{input.x}} must read one. */
  inputs?: string[]
}

/**
 * Checks every template in one step's input: syntax, roots, that step references name an
 * earlier step (by index or name) and read its `output`, and — given what is known — that the
 * path exists in that step's output schema and in every event that may start the tool.
 * `earlier` are the names of the steps before this one, by index (undefined for unnamed ones).
 */
export function checkStepTemplates(
  input: unknown,
  field: string,
  index: number,
  earlier: Array<string | undefined>,
  known?: KnownValues,
) {
  for (const s of stringsOf(input, field))
    for (const part of parseTemplate(s.text, s.field)) {
      if (typeof part === 'string') continue
      if (part.root === 'input' && known?.inputs && !known.inputs.includes(part.path[0] ?? ''))
        throw new TemplateError(
          s.field,
          `{{${part.expression}}} is not one of the tool's inputs (${known.inputs.join(', ') || 'none declared'})`,
        )
      if (part.root === 'event' && known)
        for (const { trigger, event } of known.events) {
          const miss = missingInValue(event, part.path)
          if (miss)
            throw new TemplateError(
              s.field,
              `{{${part.expression}}} is not in the events of ${trigger}: ${miss}`,
            )
        }
      if (part.root !== 'steps') continue
      const [which, what, ...rest] = part.path
      if (which === undefined)
        throw new TemplateError(
          s.field,
          `{{${part.expression}}} must name a step: {{steps.0.output…}} or {{steps.<name>.output…}}`,
        )
      const at = /^\d+$/.test(which) ? Number(which) : earlier.indexOf(which)
      if (/^\d+$/.test(which) && at >= index)
        throw new TemplateError(
          s.field,
          `{{${part.expression}}} refers to step ${at}, which ${at === index ? 'is this step' : 'runs later'}; a step can use only the outputs of steps before it (${
            index === 0 ? 'this is the first step' : `0 to ${index - 1}`
          })`,
        )
      if (at < 0)
        throw new TemplateError(
          s.field,
          `{{${part.expression}}} names no earlier step "${which}"; earlier steps: ${
            earlier.filter(Boolean).join(', ') || 'none named'
          }`,
        )
      if (what !== 'output')
        throw new TemplateError(
          s.field,
          `{{${part.expression}}} must read the step's output: {{steps.${which}.output…}}`,
        )
      const miss = known ? missingInSchema(known.outputs[at], rest) : undefined
      if (miss)
        throw new TemplateError(s.field, `{{${part.expression}}} is not in the output of step ${at}: ${miss}`)
    }
}

/**
 * Where a path leaves what a JSON Schema allows, said for a person ("output.nope: it has id,
 * name, …"), or undefined when the path can hold a value. Where the schema says nothing (any
 * value, an open object) every path is allowed.
 */
export function missingInSchema(schema: unknown, path: string[], at = 'output'): string | undefined {
  if (path.length === 0 || !schema || typeof schema !== 'object') return undefined
  const s = schema as JsonSchemaNode
  const variants = s.anyOf ?? s.oneOf
  if (Array.isArray(variants)) {
    const misses = variants.map((v) => missingInSchema(v, path, at))
    return misses.every(Boolean) ? misses.find((m) => m) : undefined
  }
  const [seg, ...rest] = path
  const types: string[] = Array.isArray(s.type) ? s.type : typeof s.type === 'string' ? [s.type] : []
  if (types.length === 0 && !s.properties && !s.items) return undefined
  const here = `${at}.${seg}`
  if (s.properties || types.includes('object')) {
    if (s.properties && Object.hasOwn(s.properties, seg))
      return missingInSchema(s.properties[seg], rest, here)
    const extra = s.additionalProperties
    if (extra === false)
      return `${at} has no "${seg}"; it has ${Object.keys(s.properties ?? {}).join(', ') || 'no fields'}`
    // An open object (a record, or one whose other properties are allowed) may hold anything.
    return extra && typeof extra === 'object' ? missingInSchema(extra, rest, here) : undefined
  }
  if (types.includes('array')) {
    if (seg === 'length') return rest.length ? `${here} is a number` : undefined
    if (/^\d+$/.test(seg)) return missingInSchema(s.items, rest, here)
    return `${at} is a list; read an item by its index (${at}.0…)`
  }
  return `${at} is ${types.filter((t) => t !== 'null').join(' or ') || 'null'}, which has no "${seg}"`
}

/** Where a path leaves a sample value, said for a person, or undefined when it holds a value. */
export function missingInValue(value: unknown, path: string[], at = 'event'): string | undefined {
  let cur = value
  let here = at
  for (const seg of path) {
    if (Array.isArray(cur)) {
      if (seg === 'length' || /^\d+$/.test(seg)) {
        cur = seg === 'length' ? cur.length : (cur[Number(seg)] ?? cur[0])
        here = `${here}.${seg}`
        continue
      }
      return `${here} is a list; read an item by its index (${here}.0…)`
    }
    if (cur === null || typeof cur !== 'object')
      return `${here} is ${cur === null ? 'null' : typeof cur}, which has no "${seg}"`
    if (!Object.hasOwn(cur, seg))
      return `${here} has no "${seg}"; it has ${Object.keys(cur).join(', ') || 'no fields'}`
    cur = (cur as Record<string, unknown>)[seg]
    here = `${here}.${seg}`
  }
  return undefined
}

export interface TemplateContext {
  input: unknown
  event: unknown
  /** Outputs of the steps run so far, by index, and their names. */
  steps: Array<{ name?: string; output: unknown }>
}

/** A value the template refers to is absent (at run time). */
export class TemplateValueMissing extends Error {
  readonly field: string
  readonly expression: string
  constructor(field: string, expression: string) {
    super(`{{${expression}}} has no value`)
    this.name = 'TemplateValueMissing'
    this.field = field
    this.expression = expression
  }
}

/** Renders every template in a value, keeping types for whole-string references. */
export function renderTemplates(value: unknown, ctx: TemplateContext, field: string): unknown {
  if (typeof value === 'string') return renderString(value, ctx, field)
  if (Array.isArray(value)) return value.map((v, i) => renderTemplates(v, ctx, `${field}.${i}`))
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) {
      const r = renderTemplates(v, ctx, `${field}.${k}`)
      // A whole-string reference to something absent leaves the field out, so optional inputs
      // can be fed from optional values.
      if (r !== undefined) out[k] = r
    }
    return out
  }
  return value
}

/**
 * Before a run's first step acts: the first {{input.…}} or {{event.…}} in a step's input that has
 * no value in this run where one is needed (inside a text, or alone in a required field), or
 * undefined. Step outputs are not known yet; their paths were checked against the output schemas.
 */
export function missingBeforeRun(
  value: unknown,
  field: string,
  ctx: Pick<TemplateContext, 'input' | 'event'>,
  required: Set<string>,
): TemplateValueMissing | undefined {
  for (const s of stringsOf(value, field)) {
    if (!s.text.includes('{{')) continue
    const exact = EXACT.test(s.text)
    for (const part of parseTemplate(s.text, s.field)) {
      if (typeof part === 'string' || part.root === 'steps') continue
      if (lookup(part, { ...ctx, steps: [] }) !== undefined) continue
      // A whole-string reference to something absent leaves an optional field out.
      const topField = s.field.slice(field.length + 1).split('.')[0]
      if (!exact || required.has(topField)) return new TemplateValueMissing(s.field, part.expression)
    }
  }
  return undefined
}

function renderString(text: string, ctx: TemplateContext, field: string): unknown {
  if (!text.includes('{{')) return text
  const exact = EXACT.exec(text)
  if (exact) return lookup(parseRef(exact[1], field), ctx)
  let out = ''
  for (const part of parseTemplate(text, field)) {
    if (typeof part === 'string') {
      out += part
      continue
    }
    const v = lookup(part, ctx)
    if (v === undefined) throw new TemplateValueMissing(field, part.expression)
    out += v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v)
  }
  return out
}

function lookup(ref: TemplateRef, ctx: TemplateContext): unknown {
  let cur: unknown
  let path = ref.path
  if (ref.root === 'steps') {
    const [which, , ...rest] = path
    const step = /^\d+$/.test(which) ? ctx.steps[Number(which)] : ctx.steps.find((s) => s.name === which)
    cur = step?.output
    path = rest
  } else cur = ref.root === 'input' ? ctx.input : ctx.event
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, seg)) return undefined
    cur = (cur as Record<string, unknown>)[seg]
  }
  return cur
}

const clip = (s: string) => (s.length > 80 ? `${s.slice(0, 77)}…` : s)
