// Pickers: how the choices of a field that names an upstream resource are listed (the boards an
// account sees, the lists of a board, the branches of a repository …). A connector declares one
// next to the field's schema (`picked(schema, picker)`), once; the engine finds it on every step
// input and trigger config that uses the schema, and serves the choices to the dashboard's
// dropdowns, the CLI and other front ends (GET /v1/steps/:id/options/:field).
import type { z } from 'zod'
import type { ScopedField, StepContext } from './define.ts'

/** One choice: the value the field takes and what a person reads. */
export interface Choice {
  value: string
  label: string
  /** A second line: where it is (the board of a list), its state … */
  detail?: string
}

/**
 * A field the choices depend on (a list's board). When a step's input has no field of that name
 * (Get List Cards takes only idList), front ends show the parent's picker as a helper that only
 * narrows the choices and is not sent.
 */
export interface PickerParent {
  field: string
  picker: Picker
}

export interface Picker {
  /** What is picked, for people: "board", "list", "repository". */
  noun: string
  /** The fields the choices depend on, in order (a branch: owner, then repo). */
  parents: PickerParent[]
  /** Parent fields that name scoped resources: an agent may list only inside its scope. */
  scoped?: ScopedField[]
  /**
   * The choices, read with the connection (ctx.http, paced like a ready-made step). ctx.scope is
   * the calling agent's scope: listers that reach across resources (all boards) keep to it.
   */
  list: (ctx: StepContext, parents: Record<string, string>) => Promise<Choice[]>
}

/**
 * A field's picker, kept with its schema. Keyed by the schema's definition rather than the schema
 * (as Zod's own registries are): `.describe()` and `.meta()` make a copy of the schema that shares
 * the definition, so a field described again where it is used keeps its picker.
 */
const pickers = new WeakMap<object, Picker>()
/** What is read here of a Zod 4 schema's definition (`_zod.def`): its kind and what it wraps. */
interface SchemaDef {
  type: string
  innerType?: z.ZodType
  element?: z.ZodType
  in?: z.ZodType
  schema?: z.ZodType
  shape?: Record<string, z.ZodType>
}
const defOf = (schema: z.ZodType): SchemaDef | undefined =>
  (schema as unknown as { _zod?: { def?: SchemaDef } })._zod?.def

export function definePicker(picker: Picker): Picker {
  return picker
}

/** Declares how the choices of the field `schema` describes are listed; returns the schema. */
export function picked<T extends z.ZodType>(schema: T, picker: Picker): T {
  const def = defOf(schema)
  if (!def) throw new Error('picked(): not a Zod schema')
  pickers.set(def, picker)
  return schema
}

/**
 * The picker of a field's schema, looking through optional, nullable, default and array
 * wrappers (`many`: the field takes a list of choices, as idLabels does).
 */
export function pickerOf(schema: z.ZodType): { picker: Picker; many: boolean } | undefined {
  let s: z.ZodType | undefined = schema
  let many = false
  for (let depth = 0; s && depth < 8; depth++) {
    const def = defOf(s)
    if (!def) return undefined
    const own = pickers.get(def)
    if (own) return { picker: own, many }
    if (def.type === 'array') many = true
    s = def.innerType ?? def.element ?? def.in
  }
  return undefined
}

/**
 * The pickers of an object schema's fields (a step's input, a trigger's config), with the parents
 * that are no field of it added as helpers (`helper: true`), parents first.
 */
export function fieldPickers(
  schema: z.ZodType,
): Map<string, { picker: Picker; many: boolean; helper: boolean }> {
  const out = new Map<string, { picker: Picker; many: boolean; helper: boolean }>()
  const shape = objectShape(schema)
  if (!shape) return out
  const add = (field: string, picker: Picker, many: boolean, helper: boolean) => {
    for (const parent of picker.parents)
      if (!out.has(parent.field)) {
        const own = shape[parent.field] ? pickerOf(shape[parent.field]) : undefined
        add(parent.field, own?.picker ?? parent.picker, own?.many ?? false, !shape[parent.field])
      }
    if (!out.has(field)) out.set(field, { picker, many, helper })
  }
  for (const [field, fieldSchema] of Object.entries(shape)) {
    const found = pickerOf(fieldSchema)
    if (found) add(field, found.picker, found.many, false)
  }
  return out
}

/** The fields of an object schema, through refinements and pipes. */
function objectShape(schema: z.ZodType): Record<string, z.ZodType> | undefined {
  let s: z.ZodType | undefined = schema
  for (let depth = 0; s && depth < 8; depth++) {
    const def = defOf(s)
    if (!def) return undefined
    if (def.type === 'object') return def.shape
    s = def.innerType ?? def.in ?? def.schema
  }
  return undefined
}
