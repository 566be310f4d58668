// Checks the code-host sandbox — and every request Patchbay sends it — against descriptions nobody
// on the team wrote: the code host's published OpenAPI description (`@octokit/openapi`), its
// webhook schemas (`@octokit/webhooks-schemas`) and its GraphQL schema (`@octokit/graphql-schema`).
// The sandbox uses product names where the real service uses its vendor's (`x-codehost-*`
// headers, `application/vnd.codehost+json`); they are mapped back before checking.
//
// Where the sandbox knowingly differs, KNOWN_DIFFERENCES says so and why; everything else is a
// failure naming the operation, the field and what was wrong.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { validate as validateGraphql } from '@octokit/graphql-schema'
import { _, Ajv, type ValidateFunction } from 'ajv'
import standaloneCodeModule from 'ajv/dist/standalone/index.js'
import addFormatsModule from 'ajv-formats'
import type { LoggedRequest } from '../../sandbox/codehost/request-log.ts'

const require = createRequire(import.meta.url)
const CACHE_DIR = fileURLToPath(new URL('../../node_modules/.cache/codehost-contract/', import.meta.url))
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv
const standaloneCode = standaloneCodeModule as unknown as (ajv: Ajv, v: ValidateFunction) => string

// The dereferenced description is 70 MB; the one with $refs (13 MB) is read once per process,
// made JSON Schema (loosenNullable) once per installed version and kept in node_modules/.cache, so
// the test files that start a code host each parse it instead of walking it again.
const openapi = loosenedDescription()
const webhookSchemas = JSON.parse(
  readFileSync(require.resolve('@octokit/webhooks-schemas/schema.json'), 'utf8'),
) as any

/** The vendor's names for the sandbox's product names, in headers, media types and keys. */
export function vendorNames<T>(value: T): T {
  if (typeof value === 'string')
    return value.replace(/codehost/g, 'github').replace(/Codehost/g, 'GitHub') as T
  if (Array.isArray(value)) return value.map(vendorNames) as T
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [vendorNames(k), v])) as T
  return value
}

// Compiling a validator for a response of the description takes Ajv 10–100 ms (its schemas pull
// in many components), and each test file that starts a code host compiled the same few dozen
// again: a third of what such a file spent. Each compiled validator is kept as standalone code
// (Ajv's own feature for this) in node_modules/.cache, keyed by what it was compiled from (the
// schema, and the versions of Ajv and of both descriptions), so a file loads what another made.
const VALIDATOR_CACHE = join(CACHE_DIR, 'validators')
/** Bumped when what is cached changes shape (the options below, the standalone form). */
const VALIDATOR_CACHE_FORMAT = 1
const VALIDATOR_INPUTS = ['ajv', 'ajv-formats', '@octokit/openapi', '@octokit/webhooks-schemas']
  .map((p) => `${p}@${JSON.parse(readFileSync(require.resolve(`${p}/package.json`), 'utf8')).version}`)
  .join(' ')

let ajvInstance: Ajv | undefined
function ajv(): Ajv {
  if (ajvInstance) return ajvInstance
  ajvInstance = new Ajv({
    strict: false,
    allErrors: true,
    validateFormats: true,
    discriminator: false,
    inlineRefs: false,
    // Standalone code names the formats by where they are, not by value.
    code: { source: true, formats: _`require("ajv-formats/dist/formats").fullFormats` },
  })
  addFormats(ajvInstance)
  // Only the components are referenced ("openapi#/components/…"); the paths are read here, not by Ajv.
  ajvInstance.addSchema({ components: openapi.components, $id: 'openapi' })
  ajvInstance.addSchema({ ...webhookSchemas, $id: 'webhooks' })
  ajvInstance.addKeyword({ keyword: 'x-github' })
  return ajvInstance
}

const validators = new Map<string, ValidateFunction>()
function compiled(key: string, schema: object): ValidateFunction {
  let v = validators.get(key)
  if (v) return v
  // OpenAPI's refs point into the description ("#/components/…"): resolve them there. The
  // schemas come from the description already made JSON Schema (loosenedDescription).
  const rewritten = JSON.stringify(schema).replace(/"#\/components\//g, '"openapi#/components/')
  const file = join(
    VALIDATOR_CACHE,
    `${createHash('sha256').update(`${VALIDATOR_CACHE_FORMAT}\n${VALIDATOR_INPUTS}\n${rewritten}`).digest('hex').slice(0, 32)}.cjs`,
  )
  if (existsSync(file)) v = require(file) as ValidateFunction
  else {
    v = ajv().compile(JSON.parse(rewritten))
    // Test files run in parallel: each writes its own file and renames it into place.
    mkdirSync(VALIDATOR_CACHE, { recursive: true })
    const temp = `${file}.${process.pid}`
    writeFileSync(temp, standaloneCode(ajv(), v))
    renameSync(temp, file)
  }
  validators.set(key, v)
  return v
}
function loosenedDescription(): any {
  const source = require.resolve('@octokit/openapi/generated/api.github.com.json')
  const { version } = JSON.parse(readFileSync(require.resolve('@octokit/openapi/package.json'), 'utf8'))
  const cached = join(CACHE_DIR, `api.github.com-${version}-loosened-1.json`)
  if (existsSync(cached)) return JSON.parse(readFileSync(cached, 'utf8'))
  const loosened = loosenNullable(JSON.parse(readFileSync(source, 'utf8')))
  // Test files run in parallel: each writes its own file and renames it into place.
  mkdirSync(CACHE_DIR, { recursive: true })
  const temp = `${cached}.${process.pid}`
  writeFileSync(temp, JSON.stringify(loosened))
  renameSync(temp, cached)
  return loosened
}

/** OpenAPI 3.0's `nullable` beside no `type` (a $ref or allOf) is `null` or the schema, in JSON Schema terms. */
function loosenNullable(x: any): any {
  if (Array.isArray(x)) return x.map(loosenNullable)
  if (!x || typeof x !== 'object') return x
  const out: any = {}
  for (const [k, v] of Object.entries(x)) out[k] = loosenNullable(v)
  // Ajv reads nullable beside type, but an enum must list null itself.
  if (out.nullable === true && Array.isArray(out.enum) && !out.enum.includes(null))
    out.enum = [...out.enum, null]
  if (out.nullable === true && out.type === undefined) {
    delete out.nullable
    return { anyOf: [{ type: 'null' }, out] }
  }
  return out
}

interface Operation {
  method: string
  template: string
  pattern: RegExp
  op: any
}

const operations: Operation[] = []
for (const [template, item] of Object.entries<any>(openapi.paths)) {
  const pattern = new RegExp(
    `^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\}/g, (m) => (m.includes('path') ? '(.+)' : '([^/]+)'))}$`,
  )
  for (const method of ['get', 'post', 'put', 'patch', 'delete'])
    if (item[method]) operations.push({ method: method.toUpperCase(), template, pattern, op: item[method] })
}
// Literal paths win over templated ones (/user/repos before /users/{username}/repos …).
operations.sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0))

export function findOperation(method: string, path: string): Operation | undefined {
  return operations.find((o) => o.method === method && o.pattern.test(path))
}

const deref = (x: any): any => {
  if (!x?.$ref) return x
  const parts = String(x.$ref).replace(/^#\//, '').split('/')
  return parts.reduce((o: any, k) => o?.[k], openapi)
}

/**
 * Fields the real service sends that the published webhook schemas (a release behind it) do not
 * list yet: they are left out before checking, since an "additional property" complaint about
 * them is the description lagging, not the sandbox being wrong.
 */
export const NEWER_THAN_THE_SCHEMAS: Record<string, string> = {
  user_view_type: 'Accounts carry user_view_type since 2024; the webhook schemas predate it.',
  closed_by: 'Issues in payloads carry closed_by as the REST issue does; the webhook schema omits it.',
  state_reason: 'Discussions carry state_reason (REST and GraphQL); the webhook schema omits it.',
  immutable: 'Releases carry immutable since 2025; the webhook schema predates it.',
}

function withoutNewerFields(x: any): any {
  if (Array.isArray(x)) return x.map(withoutNewerFields)
  if (!x || typeof x !== 'object') return x
  return Object.fromEntries(
    Object.entries(x)
      .filter(([k]) => !(k in NEWER_THAN_THE_SCHEMAS))
      .map(([k, v]) => [k, withoutNewerFields(v)]),
  )
}

/**
 * Differences from the published description the sandbox keeps, each with why. A schema error
 * whose text (`webhook <event>$<action>: <path> <message>`) contains a key is not reported.
 */
export const KNOWN_DIFFERENCES: Record<string, string> = {
  'not in the description: GET /login/oauth/authorize':
    'The sign-in pages are web pages, not REST operations.',
  'not in the description: POST /login/oauth/authorize': 'As above.',
  'not in the description: POST /login/oauth/access_token':
    'The token exchange is documented with OAuth apps, not in the REST description.',
  'not in the description: GET /repos/octo-demo/hello-world/contents':
    'A repository’s root folder is read at /contents; the description’s {path} cannot be empty, but the real service answers it (Get Repository Content with no path).',
  '/contents/{path}): / must match exactly one schema in oneOf':
    'The 409 of a stale file sha is a basic error, which matches both of the description’s oneOf error shapes.',
  '(/search/issues): /items/*/body must be string':
    'An issue without a body has body null, in search results as in the issue itself; the description’s search item says string.',
  'request body: /files/b.txt must be object':
    'The description’s text says a file set to null is deleted (Update Snippet does that); its schema says object.',
  'webhook member$added: /changes/permission/to must be equal to one of the allowed values':
    'A collaborator added with read, triage or maintain is reported with that role; the schema lists only write and admin.',
  "discussion_comment$created: / must have required property 'installation'":
    'The schema marks installation required, but a repository webhook (not an app) carries none.',
  'release$created: /release/body must be string':
    'A release without notes has body null in the REST answer and the sandbox sends the same object; the schema says string.',
  'release$published: /release/body must be string': 'As above.',
  'release$released: /release/body must be string': 'As above.',
  'release$created: /release must NOT have additional properties (updated_at)':
    'The REST release has updated_at and the sandbox sends that object; the webhook schema lags.',
  'release$published: /release must NOT have additional properties (updated_at)': 'As above.',
  'release$released: /release must NOT have additional properties (updated_at)': 'As above.',
  '/changes/field_value must NOT have additional properties':
    'projects_v2_item.edited carries field_name, project_number, from and to since 2024 (what Project Item Status Changed reads); the schema lags.',
  '/project_card must NOT have additional properties':
    'Classic project cards are retired upstream; the sandbox keeps column_name/project_id from the REST card.',
  '/workflow_run/head_repository must NOT have additional properties':
    'The sandbox sends the full repository as workflow_run.head_repository and .repository; upstream sends the minimal one (left: Patchbay slims it anyway).',
  '/workflow_run/repository must NOT have additional properties': 'As above.',
  'pull_request_review$submitted: /pull_request must NOT have additional properties':
    'The sandbox sends the full pull request in review payloads; upstream sends the simple one (left: no trigger reads the extra fields).',
}

/** A key matches anywhere in a problem; `*` stands for any run of characters (an index, an id). */
const knownPatterns = Object.keys(KNOWN_DIFFERENCES).map(
  (k) =>
    new RegExp(
      k
        .split('*')
        .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*'),
    ),
)
const known = (problem: string) => knownPatterns.some((re) => re.test(problem))

function schemaErrors(v: ValidateFunction, prefix: string): string[] {
  return (v.errors ?? [])
    .map(
      (e) =>
        `${prefix}: ${e.instancePath || '/'} ${e.message}${e.keyword === 'additionalProperties' ? ` (${(e.params as any).additionalProperty})` : ''}${e.params && 'allowedValues' in e.params ? ` ${JSON.stringify(e.params.allowedValues)}` : ''}`,
    )
    .filter((p) => !known(p))
}

/** A request Patchbay sent, checked against its operation: it exists, its parameters, its body, its headers. */
export function checkRequest(r: LoggedRequest): string[] {
  const problems: string[] = []
  const what = `${r.method} ${r.path}`
  if (!r.headers['user-agent']?.trim()) problems.push(`${what}: no User-Agent (the code host answers 403)`)
  if (r.path === '/graphql') {
    // A request answered before its body was read (an injected fault, a rate-limit refusal) has
    // no document to check.
    if (!r.bodyRead) return problems.filter((p) => !known(p))
    const query = (r.body as { query?: string } | null)?.query
    if (typeof query !== 'string') problems.push(`${what}: no query`)
    else
      for (const e of validateGraphql(query))
        problems.push(`${what}: GraphQL document invalid against the published schema: ${e.message}`)
    return problems.filter((p) => !known(p))
  }
  const found = findOperation(r.method, r.path)
  if (!found) return [`not in the description: ${what}`].filter((p) => !known(p))
  const params = (found.op.parameters ?? []).map(deref)
  const inQuery = new Map<string, any>(
    params.filter((p: any) => p.in === 'query').map((p: any) => [p.name, p]),
  )
  for (const [name, value] of Object.entries(r.query)) {
    const p = inQuery.get(name)
    if (!p) {
      problems.push(`${what} (${found.template}): query parameter "${name}" is not one of the operation's`)
      continue
    }
    const v = compiled(`${found.method} ${found.template} ?${name}`, p.schema ?? {})
    const typed =
      p.schema?.type === 'integer' || p.schema?.type === 'number'
        ? Number(value)
        : p.schema?.type === 'boolean'
          ? value === 'true'
          : value
    if (!v(typed)) problems.push(...schemaErrors(v, `${what}: query parameter "${name}"=${value}`))
  }
  for (const p of inQuery.values())
    if (p.required && !(p.name in r.query))
      problems.push(`${what}: required query parameter "${p.name}" missing`)
  if (!r.bodyRead) return problems.filter((p) => !known(p))
  const body = deref(found.op.requestBody)
  const schema = body?.content?.['application/json']?.schema
  if (r.body !== null && r.body !== undefined && typeof r.body === 'object') {
    if (!schema) problems.push(`${what} (${found.template}): sent a body the operation does not take`)
    else {
      const v = compiled(`${found.method} ${found.template} body`, schema)
      if (!v(r.body)) problems.push(...schemaErrors(v, `${what}: request body`))
    }
  } else if (body?.required && schema) problems.push(`${what}: the operation's body is required`)
  return problems.filter((p) => !known(p))
}

/** The sandbox's answer, checked against the operation's response schema for its status. */
export function checkResponse(r: LoggedRequest): string[] {
  if (r.path === '/graphql' || r.route === null || r.response === null) return []
  const found = findOperation(r.method, r.path)
  if (!found) return []
  const res = deref(found.op.responses?.[String(r.status)])
  const schema = res?.content?.['application/json']?.schema
  if (!schema) return []
  const v = compiled(`${found.method} ${found.template} ${r.status}`, schema)
  if (v(withoutNewerFields(vendorNames(r.response)))) return []
  return schemaErrors(v, `${r.method} ${r.path} → ${r.status} (${found.template})`)
}

/** A webhook delivery's payload, checked against the published schema of its event and action. */
export function checkWebhook(event: string, payload: any): string[] {
  const action = typeof payload?.action === 'string' ? payload.action : undefined
  const key =
    action && webhookSchemas.definitions[`${event}$${action}`] ? `${event}$${action}` : `${event}$event`
  if (!webhookSchemas.definitions[key]) {
    if (event === 'ping') return []
    return [`webhook ${key}: the code host has no such event`].filter((p) => !known(p))
  }
  const v = compiled(`webhook ${key}`, { $ref: `webhooks#/definitions/${key}` })
  if (v(withoutNewerFields(vendorNames(payload)))) return []
  return schemaErrors(v, `webhook ${key}`)
}

/** Everything the sandbox recorded and sent, checked; Patchbay's own requests (its User-Agent) also as requests. */
export async function contractProblems(sb: { url: string }): Promise<string[]> {
  const { requests } = (await (await fetch(`${sb.url}/_sandbox/requests`)).json()) as {
    requests: LoggedRequest[]
  }
  const { deliveries } = (await (await fetch(`${sb.url}/_sandbox/webhooks/deliveries`)).json()) as {
    deliveries: Array<{ event: string; body: string }>
  }
  const problems = new Set<string>()
  for (const r of requests) {
    if (/^Patchbay\//.test(r.headers['user-agent'] ?? '')) for (const p of checkRequest(r)) problems.add(p)
    for (const p of checkResponse(r)) problems.add(p)
  }
  for (const d of deliveries) {
    const raw = d.body.startsWith('payload=')
      ? decodeURIComponent(d.body.slice(8).replace(/\+/g, ' '))
      : d.body
    for (const p of checkWebhook(d.event, JSON.parse(raw))) problems.add(p)
  }
  return [...problems]
}

/** The schema an answer is checked against, with refs, `allOf` and a nullable wrapper resolved. */
function shapeOf(schema: any): any {
  let s = deref(schema)
  if (s?.anyOf) {
    const others = s.anyOf.map(deref).filter((x: any) => x?.type !== 'null')
    if (others.length === 1) s = others[0]
  }
  if (s?.allOf) {
    const parts = s.allOf.map(shapeOf)
    return {
      type: 'object',
      properties: Object.assign({}, ...parts.map((p: any) => p.properties ?? {})),
      required: parts.flatMap((p: any) => p.required ?? []),
    }
  }
  return s
}

/**
 * A documented answer compared key by key (beyond what the schema requires): every key the
 * description lists for the answer that the answer lacks (`missing`), and every key it has that the
 * description does not list (`extra`), nested objects included, as JSON pointers (`/owner/login`).
 * An array answer is compared item by item.
 */
export function keyDifferences(
  method: string,
  path: string,
  status: number,
  answer: unknown,
): { operation: string; missing: string[]; extra: string[] } {
  const found = findOperation(method, path)
  if (!found) throw new Error(`not in the description: ${method} ${path}`)
  const res = deref(found.op.responses?.[String(status)])
  const schema = res?.content?.['application/json']?.schema
  if (!schema) throw new Error(`${method} ${found.template} documents no JSON answer for ${status}`)
  const missing = new Set<string>()
  const extra = new Set<string>()
  const walk = (s: any, value: any, at: string, depth: number) => {
    const shape = shapeOf(s)
    if (value === null || value === undefined || !shape || depth > 3) return
    if (Array.isArray(value)) {
      if (shape.items) for (const item of value) walk(shape.items, item, `${at}/*`, depth + 1)
      return
    }
    if (typeof value !== 'object' || !shape.properties) return
    for (const key of Object.keys(shape.properties)) if (!(key in value)) missing.add(`${at}/${key}`)
    for (const key of Object.keys(value)) {
      if (!(key in shape.properties)) {
        if (shape.additionalProperties === undefined || shape.additionalProperties === false)
          extra.add(`${at}/${key}`)
        continue
      }
      walk(shape.properties[key], value[key], `${at}/${key}`, depth + 1)
    }
  }
  walk(schema, vendorNames(answer), '', 0)
  return { operation: `${method} ${found.template}`, missing: [...missing], extra: [...extra] }
}
