// The one registry of definitions. Everything that describes a step or trigger to the outside
// (the REST catalog, JSON Schemas, the step search, MCP tools, dashboard forms) reads it here.
import { z } from 'zod'
import { connectors as allConnectors } from '../connectors/index.ts'
import {
  type ConnectorDefinition,
  type StepDefinition,
  type TriggerDefinition,
  triggerMechanisms,
} from '../kit/define.ts'
import { fieldPickers } from '../kit/pickers.ts'
import { Places } from './access/places.ts'
import { closeObjects } from './agents/tool-schemas.ts'

export interface RegisteredStep {
  /** `taskboard.create_card` */
  id: string
  connector: ConnectorDefinition
  step: StepDefinition
}

export interface RegisteredTrigger {
  id: string
  connector: ConnectorDefinition
  trigger: TriggerDefinition
}

export interface StepSummary {
  id: string
  connector: string
  name: string
  description: string
  hints: { readOnly: boolean; destructive: boolean; idempotent: boolean }
  passThrough: boolean
  inputSchema: JsonSchemaObject
  outputSchema: JsonSchemaObject
  /** Fields whose choices can be listed (GET /v1/steps/:id/options/:field), parents first. */
  pickers: PickerSummary[]
}

/**
 * A field whose choices can be listed: what it picks, the fields it depends on, whether it takes
 * a list of them, and whether it is a helper (a parent that is no field of the input: it only
 * narrows the choices, as the board does for Get List Cards' list).
 */
export interface PickerSummary {
  field: string
  noun: string
  parents: string[]
  many: boolean
  helper: boolean
}

export function pickerSummaries(schema: z.ZodType): PickerSummary[] {
  return [...fieldPickers(schema)].map(([field, p]) => ({
    field,
    noun: p.picker.noun,
    parents: p.picker.parents.map((x) => x.field),
    many: p.many,
    helper: p.helper,
  }))
}

export class Registry {
  readonly connectors: ConnectorDefinition[]
  /** The place kinds the connectors declare: what a scope is written in (access/places.ts). */
  readonly places: Places
  readonly steps = new Map<string, RegisteredStep>()
  readonly triggers = new Map<string, RegisteredTrigger>()
  #summaries = new Map<string, StepSummary>()

  constructor(connectors: ConnectorDefinition[] = allConnectors) {
    this.connectors = connectors
    this.places = new Places(connectors)
    for (const c of connectors) {
      for (const step of c.steps) {
        const id = `${c.id}.${step.key}`
        if (this.steps.has(id)) throw new Error(`Duplicate step id ${id}`)
        this.steps.set(id, { id, connector: c, step })
      }
      for (const trigger of c.triggers) {
        const id = `${c.id}.${trigger.key}`
        if (this.triggers.has(id)) throw new Error(`Duplicate trigger id ${id}`)
        this.triggers.set(id, { id, connector: c, trigger })
      }
    }
  }

  connector(id: string): ConnectorDefinition | undefined {
    return this.connectors.find((c) => c.id === id)
  }

  stepSummary(id: string): StepSummary {
    let s = this.#summaries.get(id)
    if (!s) {
      const { connector, step } = this.steps.get(id)!
      s = {
        id,
        connector: connector.id,
        name: step.name,
        description: step.description,
        hints: {
          readOnly: Boolean(step.hints.readOnly),
          destructive: Boolean(step.hints.destructive),
          idempotent: Boolean(step.hints.idempotent),
        },
        passThrough: Boolean(step.passThrough),
        // Closed: an argument the step does not declare is refused (by the step runner too).
        inputSchema: closeObjects(jsonSchema(step.input, 'input', connector.fieldTitles)),
        outputSchema: jsonSchema(step.output, 'output', connector.fieldTitles),
        pickers: pickerSummaries(step.input),
      }
      this.#summaries.set(id, s)
    }
    return s
  }

  catalog() {
    return this.connectors.map((c) => ({
      id: c.id,
      name: c.name,
      description: c.description,
      beta: c.beta,
      auth: c.auth.map((a) => ({
        id: a.id,
        name: a.name,
        description: a.description,
        credentialsSchema: a.credentials ? jsonSchema(a.credentials, 'input', c.fieldTitles) : null,
      })),
      places: (c.places ?? []).map((p) => ({
        kind: p.kind,
        scopeKey: p.scopeKey,
        description: p.description,
        idSchema: jsonSchema(p.id, 'input', c.fieldTitles),
      })),
      steps: c.steps.map((s) => this.stepSummary(`${c.id}.${s.key}`)),
      triggers: c.triggers.map((t) => ({
        id: `${c.id}.${t.key}`,
        name: t.name,
        description: t.description,
        instant: t.instant,
        delivery: triggerMechanisms(t),
        configSchema: jsonSchema(t.config, 'input', c.fieldTitles),
        pickers: pickerSummaries(t.config),
        sample: t.sample ?? null,
      })),
    }))
  }

  /**
   * The tool step search bar: case-insensitive, matching a connector's name or aliases (so
   * "task" and "task-board" find every task-board step) as well as the step names.
   */
  searchSteps(q: string | undefined): StepSummary[] {
    // Each word of the query must appear in the connector's names or the step's name;
    // "task-board" is one word, "task board" two, and both find every task-board step.
    const words = (q ?? '').split(/\s+/).map(normalize).filter(Boolean)
    const out: StepSummary[] = []
    for (const { id, connector, step } of this.steps.values()) {
      const haystack = [connector.id, connector.name, ...connector.aliases, step.name, step.key]
        .map(normalize)
        .join(' ')
      if (words.every((w) => haystack.includes(w))) out.push(this.stepSummary(id))
    }
    return out
  }
}

/** Lowercase letters and digits only: "Task-Board" and "task board" both read "taskboard". */
function normalize(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9]/g, '')
}

export type JsonSchemaObject = Record<string, unknown>

/** A schema as JSON Schema, its properties titled (`titles`: the connector's `fieldTitles`). */
export function jsonSchema(
  schema: z.ZodType,
  io: 'input' | 'output',
  titles: Readonly<Record<string, string>> = {},
): JsonSchemaObject {
  return withTitles(
    z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchemaObject,
    titles,
  )
}

/**
 * Every property gets a `title` in human words (forms show it as the label, with the field's name
 * as a hint): the field's own (`.meta({ title })`), else the connector's for that name
 * (`fieldTitles`: repo → "Repository"), else one made from the name — idList → "List", perPage →
 * "Per page".
 */
function withTitles<T>(schema: T, titles: Readonly<Record<string, string>>): T {
  if (Array.isArray(schema)) return schema.map((s) => withTitles(s, titles)) as T
  if (!schema || typeof schema !== 'object') return schema
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'properties' && v && typeof v === 'object')
      out[k] = Object.fromEntries(
        Object.entries(v).map(([name, p]) => {
          const titled = withTitles(p, titles)
          return [
            name,
            titled && typeof titled === 'object' && !('title' in titled)
              ? { title: Object.hasOwn(titles, name) ? titles[name] : titleOf(name), ...titled }
              : titled,
          ]
        }),
      )
    else out[k] = withTitles(v, titles)
  }
  return out as T
}

/** Words written in capitals. */
const WORDS: Record<string, string> = {
  url: 'URL',
  api: 'API',
  id: 'ID',
  ids: 'IDs',
  html: 'HTML',
  sha: 'SHA',
}

/** `idList` → "List", `perPage` → "Per page", `linkedInUrl` → "Linked in URL", `check_run_id` → "Check run ID". */
export function titleOf(name: string): string {
  // An identifier field written idThing is named after what it identifies.
  const base = /^id[A-Z]/.test(name) ? name.slice(2) : name
  const words = base
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_-]+/)
    .filter(Boolean)
    .map((w) => WORDS[w.toLowerCase()] ?? w.toLowerCase())
  if (words.length === 0) return name
  const first = words[0]
  return [first[0].toUpperCase() + first.slice(1), ...words.slice(1)].join(' ')
}
