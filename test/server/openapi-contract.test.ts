// The API contract as generators meet it: /openapi.json passes `redocly lint` with no errors, every
// operation has an operationId and a typed success answer, the error enum is the registry's, and a
// client generated with openapi-typescript compiles.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
// openapi-typescript with the TypeScript 5 compiler API it needs (test/contract/client-generator).
import { generateClientTypes } from 'patchbay-client-generator'
import { API_SCHEMA, apiSchemaSource, STEP_TYPES, stepTypesSource } from '../../scripts/api-types.ts'
import { ERROR_CODE_LIST } from '../../src/kit/error-codes.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../../', import.meta.url))
const bin = (name: string) => join(root, 'node_modules', '.bin', name)

let t: TestService
let doc: any
let dir: string
before(async () => {
  t = await startTestService()
  doc = await (await fetch(`${t.url}/openapi.json`)).json()
  dir = mkdtempSync(join(tmpdir(), 'patchbay-contract-'))
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc))
})
after(async () => {
  await t.close()
  rmSync(dir, { recursive: true, force: true })
})

const operations = () =>
  Object.entries(doc.paths).flatMap(([path, ops]: [string, any]) =>
    Object.entries(ops).map(([method, op]: [string, any]) => ({
      where: `${method.toUpperCase()} ${path}`,
      op,
    })),
  )

test('every operation has its own operationId and a success answer with a schema', () => {
  const ids = new Set<string>()
  for (const { where, op } of operations()) {
    assert.match(op.operationId ?? '', /^[a-z][A-Za-z0-9]+$/, `${where} has no operationId`)
    assert.ok(!ids.has(op.operationId), `${where}: operationId ${op.operationId} is used twice`)
    ids.add(op.operationId)
    const success = Object.entries(op.responses).filter(([status]) => status.startsWith('2'))
    assert.ok(success.length > 0, `${where} has no success answer`)
    for (const [status, answer] of success as Array<[string, any]>)
      if (status !== '204' && status !== '202' && status !== '302')
        for (const [type, content] of Object.entries(answer.content ?? {}) as Array<[string, any]>)
          assert.ok(
            content.schema && JSON.stringify(content.schema) !== '{}',
            `${where} ${status} ${type} is untyped`,
          )
  }
  assert.ok(ids.size >= 50, `only ${ids.size} operations`)
})

test('the catalog, steps, runs, events, deliveries and triggers are typed, not any', () => {
  const ok = (path: string, method = 'get', status = '200') =>
    doc.paths[path][method].responses[status].content['application/json'].schema
  assert.equal(ok('/v1/catalog').properties.connectors.items.$ref, '#/components/schemas/Connector')
  assert.equal(ok('/v1/steps').properties.steps.items.$ref, '#/components/schemas/Step')
  assert.equal(ok('/v1/steps/{stepId}').$ref, '#/components/schemas/Step')
  assert.equal(ok('/v1/runs').properties.runs.items.$ref, '#/components/schemas/StepRun')
  assert.equal(ok('/v1/events').properties.events.items.$ref, '#/components/schemas/Event')
  assert.equal(ok('/v1/deliveries').properties.deliveries.items.$ref, '#/components/schemas/Delivery')
  assert.ok(ok('/v1/agents/{agentId}/triggers').properties.triggers.items)
  const error = doc.components.schemas.Error.properties.error.properties.code
  assert.deepEqual(error.enum, ERROR_CODE_LIST)
})

test('redocly lint finds no errors in /openapi.json', async () => {
  const res = await run(bin('redocly'), ['lint', join(dir, 'openapi.json'), '--format=json'], {
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
    maxBuffer: 32 * 1024 * 1024,
  }).catch((err) => err)
  const report = JSON.parse(res.stdout)
  const errors = report.problems.filter((p: any) => p.severity === 'error')
  assert.deepEqual(
    errors.map((p: any) => `${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`),
    [],
  )
  assert.equal(report.totals.errors, 0)
})

test('a client generated with openapi-typescript compiles, with the API’s names', async () => {
  writeFileSync(join(dir, 'api.d.ts'), await generateClientTypes(doc))
  writeFileSync(
    join(dir, 'use.ts'),
    `import type { components, operations, paths } from './api.js'
type Json<T> = T extends { content: { 'application/json': infer J } } ? J : never
type Catalog = Json<paths['/v1/catalog']['get']['responses'][200]>
const catalog: Catalog = { connectors: [] }
const code: components['schemas']['Error']['error']['code'] = 'STEP_NOT_FOUND'
type Run = Json<operations['runStep']['responses'][200]>
const run: Run = { output: null, meta: { runId: 'run_1', durationMs: 1, attempts: 1 } }
type Event = components['schemas']['Event']
const seq = (e: Event): number => e.seq
// @ts-expect-error a code the API never answers
const wrong: components['schemas']['Error']['error']['code'] = 'NO_SUCH_CODE'
export { catalog, code, run, seq, wrong }
`,
  )
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, module: 'NodeNext', target: 'ES2022', types: [] },
      files: ['use.ts', 'api.d.ts'],
    }),
  )
  const res = await run(bin('tsc'), ['-p', join(dir, 'tsconfig.json')]).catch((err) => err)
  assert.equal(res.code ?? 0, 0, `${res.stdout}${res.stderr}`)
})

test('the SDK’s and the dashboard’s API types are the contract’s (src/sdk/api-schema.ts, src/sdk/step-types.ts; npm run api:types rewrites them)', async () => {
  assert.equal(
    readFileSync(API_SCHEMA, 'utf8'),
    await apiSchemaSource(doc),
    'src/sdk/api-schema.ts is out of date: run npm run api:types',
  )
  assert.equal(
    readFileSync(STEP_TYPES, 'utf8'),
    await stepTypesSource((await t.api('GET', '/v1/catalog')).body),
    'src/sdk/step-types.ts is out of date: run npm run api:types',
  )
})
