// The task-board REST API as an independent typed client describes it (trello.js, generated from
// the service's published description and kept against the live API by its author), read into an
// operation table: method, path, the parameters each operation takes and their schemas. Requests
// (Patchbay's, recorded by the sandbox) are checked against it: the operation exists, every
// parameter is one it takes, the required ones are there, and JSON body values have their types.
//
// The client has no machine-readable operation list, so each of its functions is called once
// with a recording client and parameters that name themselves; what it would send is the table.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Validator } from '@cfworker/json-schema'
import { z } from 'zod'
import type { RequestRecord } from '../../sandbox/common/emulator-app.ts'

const NAMESPACES = [
  'actions',
  'boards',
  'cards',
  'checklists',
  'customFields',
  'emoji',
  'enterprises',
  'labels',
  'lists',
  'members',
  'notifications',
  'organizations',
  'plugins',
  'search',
  'tokens',
  'webhooks',
] as const

export interface Operation {
  name: string
  method: string
  /** As the client writes it, with `{name}` for path parameters: `/cards/{id}/idLabels`. */
  path: string
  pattern: RegExp
  /** Literal segments: a more specific operation wins over `/cards/{id}/{field}`. */
  literals: number
  /** Wire name → the client's parameter name. */
  params: Map<string, string>
  /** The operation takes a JSON body of its own (not parameters). */
  takesBody: boolean
  /** Wire names that must be given. */
  required: string[]
  /** The client's parameter name → the JSON Schema of its value (from the client's own schema). */
  fields: Record<string, object>
}

/** An operation as kept in the cache: what can be written as JSON. */
type Described = Omit<Operation, 'pattern' | 'literals' | 'params'> & { params: Array<[string, string]> }

const MARK = /⟦(\w+)⟧/g
let table: Promise<Operation[]> | undefined

/** Every operation the client knows. */
export function operations(): Promise<Operation[]> {
  table ??= described().then((ops) =>
    ops.map((o) => {
      const segments = o.path.split('/').filter(Boolean)
      return {
        ...o,
        params: new Map(o.params),
        pattern: new RegExp(
          `^${segments.map((s) => `/${s.startsWith('{') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`).join('')}/?$`,
        ),
        literals: segments.filter((s) => !s.startsWith('{')).length,
      }
    }),
  )
  return table
}

// Reading the client (importing its 16 namespaces and its parameter schemas, calling each
// function) costs a test file about 0.2 s of CPU; the table it gives is kept in node_modules/.cache
// per version of the client, so each file after the first reads a JSON file instead.
const CACHE_FORMAT = 1

async function described(): Promise<Described[]> {
  const require = createRequire(import.meta.url)
  const { version } = JSON.parse(readFileSync(require.resolve('trello.js/package.json'), 'utf8'))
  const dir = fileURLToPath(new URL('../../node_modules/.cache/taskboard-description/', import.meta.url))
  const file = join(dir, `trello.js-${version}-${CACHE_FORMAT}.json`)
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'))
  const ops = await describe()
  // Test files run in parallel: each writes its own file and renames it into place.
  mkdirSync(dir, { recursive: true })
  writeFileSync(`${file}.${process.pid}`, JSON.stringify(ops))
  renameSync(`${file}.${process.pid}`, file)
  return ops
}

/**
 * The client's values are Zod schemas; they are kept as JSON Schema. The client's open
 * enumerations (`'top' | 'bottom' | another string`) are its only custom schemas: any string.
 */
function jsonSchemaOf(field: z.ZodType): object {
  return z.toJSONSchema(field, {
    io: 'input',
    unrepresentable: 'any',
    override: (ctx) => {
      if ((ctx.zodSchema as { _zod: { def: { type: string } } })._zod.def.type === 'custom')
        ctx.jsonSchema.type = 'string'
    },
  })
}

async function describe(): Promise<Described[]> {
  const parameters: Record<string, any> = await import('trello.js/parameters')
  const out: Described[] = []
  for (const ns of NAMESPACES) {
    const mod: Record<string, unknown> = await import(`trello.js/${ns}`)
    for (const [name, fn] of Object.entries(mod)) {
      if (typeof fn !== 'function') continue
      let sent:
        | { url: string; method?: string; searchParams?: Record<string, unknown>; body?: unknown }
        | undefined
      const recorder = {
        sendRequest: async (o: typeof sent) => {
          sent = o
        },
      }
      const named = new Proxy({}, { get: (_t, k) => (typeof k === 'string' ? `⟦${k}⟧` : undefined) })
      await (fn as (c: unknown, p: unknown) => Promise<unknown>)(recorder, named).catch(() => undefined)
      if (!sent) continue
      const pathParams = [...sent.url.matchAll(MARK)].map((m) => m[1]!)
      const params: Array<[string, string]> = []
      for (const [wire, v] of Object.entries(sent.searchParams ?? {})) {
        const m = /^⟦(\w+)⟧$/.exec(String(v))
        if (m) params.push([wire, m[1]!])
      }
      const schema = parameters[`${name[0]!.toUpperCase()}${name.slice(1)}Schema`]
      const shape: Record<string, z.ZodType & { isOptional(): boolean }> = schema?.shape ?? {}
      const fields: Record<string, object> = {}
      for (const [, p] of params) if (shape[p]) fields[p] = jsonSchemaOf(shape[p])
      out.push({
        name,
        method: sent.method ?? 'GET',
        path: sent.url.replace(MARK, '{$1}'),
        params,
        takesBody: sent.body !== undefined && !pathParams.includes(String(sent.body)),
        required: params.filter(([, p]) => shape[p] && !shape[p].isOptional()).map(([w]) => w),
        fields,
      })
    }
  }
  return out
}

/** The operation a request is for: the most specific one whose method and path match. */
export async function operationFor(method: string, path: string): Promise<Operation | undefined> {
  const p = path.replace(/^\/1(?=\/)/, '')
  return (await operations())
    .filter((o) => o.method === method && o.pattern.test(p))
    .sort((a, b) => b.literals - a.literals)[0]
}

/** Credentials travel as parameters on every operation; they are not the operation's own. */
const CREDENTIALS = new Set(['key', 'token'])

/**
 * Parameters the service takes that the description leaves out, each with why it is known to lag.
 * Keyed by the client's operation name.
 */
const DESCRIPTION_LAGS: Record<string, { params?: string[]; nullable?: string[]; why: string }> = {
  updateCard: {
    nullable: ['due', 'start'],
    why: 'null removes a card\'s due or start date; the service\'s reference says "or null", the generated schema kept only string',
  },
  getListCards: {
    params: ['filter', 'fields'],
    why:
      'card collections take filter (open, closed, all) and fields on the service, as /boards/{id}/cards does ' +
      'in the older reference and other independent clients (TrelloDotNet) use; the generated description lists none',
  },
}

/** What is wrong with a request by the description (nothing: an empty list). */
export async function checkRequest(r: Pick<RequestRecord, 'method' | 'url' | 'body' | 'contentType'>) {
  const url = new URL(r.url, 'http://sandbox')
  const op = await operationFor(r.method, url.pathname)
  if (!op) return [`${r.method} ${url.pathname}: no such operation`]
  const given = new Map<string, unknown>()
  for (const [k, v] of url.searchParams) given.set(k, v)
  let json: Record<string, unknown> = {}
  if (r.body && /json/.test(r.contentType ?? '')) json = JSON.parse(r.body)
  else if (r.body && /x-www-form-urlencoded/.test(r.contentType ?? ''))
    for (const [k, v] of new URLSearchParams(r.body)) given.set(k, v)
  if (!op.takesBody) for (const [k, v] of Object.entries(json)) given.set(k, v)
  const problems: string[] = []
  const where = `${r.method} ${op.path} (${op.name})`
  const lagging = DESCRIPTION_LAGS[op.name]?.params ?? []
  for (const k of given.keys())
    if (!CREDENTIALS.has(k) && !op.params.has(k) && !lagging.includes(k))
      problems.push(`${where}: takes no parameter "${k}"`)
  for (const k of op.required) if (!given.has(k)) problems.push(`${where}: "${k}" is required`)
  // Types are checked for JSON body values, which carry them; query strings carry none.
  if (!op.takesBody) {
    const typed: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(json)) if (op.params.has(k)) typed[op.params.get(k)!] = v
    const nullable = DESCRIPTION_LAGS[op.name]?.nullable ?? []
    for (const [p, v] of Object.entries(typed)) {
      if (v === null && nullable.includes(p)) continue
      const schema = op.fields[p]
      const res = schema && new Validator(schema, '2020-12').validate(v)
      if (res && !res.valid)
        problems.push(`${where}: "${p}" ${JSON.stringify(v)}: ${res.errors.map((e) => e.error).join('; ')}`)
    }
  }
  return problems
}

/** Patchbay's own requests: named by its User-Agent (or, before it sent one, none). */
export const fromPatchbay = (r: RequestRecord) => r.userAgent === null || /^patchbay\b/i.test(r.userAgent)

/**
 * What is wrong, by the description, with the REST requests Patchbay sent a task-board sandbox and
 * the sandbox accepted (one it refused was refused anyway: tests send some on purpose, through the
 * API Call step or the kit's own tests). The OAuth 1.0a endpoints are the sign-in, described by
 * the OAuth specification instead. Each distinct problem once.
 */
export async function patchbayRequestProblems(sandbox: {
  emulator: { requests: RequestRecord[] }
}): Promise<string[]> {
  const problems = new Set<string>()
  for (const r of sandbox.emulator.requests) {
    if (!fromPatchbay(r) || r.status >= 400 || !r.url.startsWith('/1/') || r.url.startsWith('/1/OAuth'))
      continue
    for (const p of await checkRequest(r)) problems.add(p)
  }
  return [...problems]
}
