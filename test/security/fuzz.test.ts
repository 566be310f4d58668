// A property-based fuzz of every route's JSON body, generated from its schema in /openapi.json
// (and, half of the time, bent out of it): whatever the body, the answer is never a 5xx. Bounded
// in runs per route so the suite stays fast. Names resolve through a stub that knows none, and the
// only upstreams are the sandboxes on loopback.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import fc from 'fast-check'
import { startTestService, type TestService } from '../helpers/service.ts'

// FUZZ_RUNS and FUZZ_SEED explore further (e.g. FUZZ_RUNS=200); the suite's run is fixed and repeatable.
const RUNS_PER_ROUTE = Number(process.env.FUZZ_RUNS ?? 12)
const SEED = Number(process.env.FUZZ_SEED ?? 1414)

let t: TestService
let doc: any
before(async () => {
  t = await startTestService({
    contactdata: true,
    egressResolve: async (host) => {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })
    },
  })
  doc = await (await fetch(`${t.url}/openapi.json`)).json()
})
after(() => t.close())

type Schema = Record<string, any>

/** Resolves a local $ref of the document. */
function deref(s: Schema | undefined): Schema {
  let cur = s ?? {}
  for (let i = 0; i < 10 && typeof cur.$ref === 'string'; i++)
    cur = cur.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((o: any, k: string) => o?.[k], doc)
  return cur ?? {}
}

/** Values that fit a JSON schema (roughly: the fuzz wants plausible shapes, not a validator). */
function fromSchema(raw: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const s = deref(raw)
  if (depth > 4) return fc.constant(null)
  if (s.const !== undefined) return fc.constant(s.const)
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum)
  const alternatives = s.anyOf ?? s.oneOf
  if (Array.isArray(alternatives) && alternatives.length)
    return fc.oneof(...alternatives.map((a: Schema) => fromSchema(a, depth + 1)))
  if (Array.isArray(s.allOf) && s.allOf.length) return fromSchema(s.allOf[0], depth + 1)
  const type = Array.isArray(s.type) ? s.type[0] : s.type
  switch (type) {
    case 'string':
      return fc.oneof(
        fc.string({ maxLength: 40 }),
        fc.constantFrom(
          '',
          'x1',
          'https://example.invalid/',
          '/1/cards/x',
          '%2e%2e',
          '../..',
          'a'.repeat(3000),
        ),
      )
    case 'integer':
      return fc.oneof(fc.integer(), fc.constantFrom(0, -1, 2 ** 31, Number.MAX_SAFE_INTEGER))
    case 'number':
      return fc.oneof(fc.double({ noNaN: true }), fc.integer())
    case 'boolean':
      return fc.boolean()
    case 'null':
      return fc.constant(null)
    case 'array':
      return fc.array(fromSchema(s.items, depth + 1), { maxLength: 4 })
    case 'object': {
      const props: Record<string, Schema> = s.properties ?? {}
      const required = new Set<string>(s.required ?? [])
      const shape: Record<string, fc.Arbitrary<unknown>> = {}
      for (const [k, v] of Object.entries(props)) shape[k] = fromSchema(v, depth + 1)
      const keys = Object.keys(shape)
      const record = fc.record(shape, { requiredKeys: keys.filter((k) => required.has(k)) })
      if (keys.length === 0 || s.additionalProperties)
        return fc.oneof(record, fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 })))
      return record
    }
    default:
      return fc.jsonValue({ maxDepth: 3 })
  }
}

/** A body from the schema, or one bent out of it (wrong types, extra keys, anything). */
function bodies(schema: Schema | undefined): fc.Arbitrary<unknown> {
  const fitting = fromSchema(schema)
  return fc.oneof(
    { arbitrary: fitting, weight: 3 },
    { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 1 },
    {
      arbitrary: fc
        .tuple(fitting, fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }))
        .map(([b, k, v]) => (b && typeof b === 'object' && !Array.isArray(b) ? { ...b, [k]: v } : b)),
      weight: 1,
    },
  )
}

/** Path parameters filled with real ids where one is known, else a made-up one. */
function fill(path: string, known: Record<string, string>): string {
  return path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(known[name] ?? 'x1'))
}

test('no JSON body on any route, fitting its schema or not, gets a 5xx', async () => {
  const agent = await t.api('POST', '/v1/agents', { name: 'fuzzed', delivery: { type: 'stream' } })
  const known: Record<string, string> = {
    stepId: 'taskboard.api_call',
    connector: 'taskboard',
    agentId: agent.body.id,
    id: agent.body.id,
  }
  const ops: { method: string; path: string; schema: Schema | undefined }[] = []
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>))
    for (const [method, op] of Object.entries(item)) {
      if (!['post', 'put', 'patch'].includes(method)) continue
      ops.push({
        method: method.toUpperCase(),
        path,
        schema: op.requestBody?.content?.['application/json']?.schema,
      })
    }
  ops.push({ method: 'POST', path: '/mcp', schema: undefined })
  assert.ok(ops.length > 15, `${ops.length} operations take a body`)
  const failures: string[] = []
  for (const op of ops) {
    const url = fill(op.path, known)
    await fc.assert(
      fc.asyncProperty(bodies(op.schema), async (body) => {
        const res = await fetch(t.url + url, {
          method: op.method,
          headers: {
            authorization: `Bearer ${t.adminKey}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify(body),
        })
        const text = await res.text()
        if (res.status >= 500)
          failures.push(
            `${op.method} ${url} ${JSON.stringify(body).slice(0, 300)} → ${res.status} ${text.slice(0, 300)}`,
          )
        return true
      }),
      { numRuns: RUNS_PER_ROUTE, seed: SEED },
    )
  }
  assert.deepEqual(failures, [])
})
