// The package as a user gets it: `npm pack` (prepack builds dist/), the tarball installed into a
// fresh folder (its dependencies from this machine's npm cache, or the registry), `patchbay/sdk`
// imported from plain ESM, a TypeScript consumer type-checked with module NodeNext, and
// `npx patchbay --help`. The package is small: the SDK and the command (types from the API
// contract, nothing of the service), with a few dependencies of their own. It can be published
// (not private, with its Apache-2.0 LICENSE), and its engines say what runs it: the SDK and the
// command are run here on the oldest Node its engines allow (the machine's own Node 20) against a
// real Patchbay, as well as on Node 24.
import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { startTestService, type TestService } from '../helpers/service.ts'

const exec = promisify(execFile)
const root = fileURLToPath(new URL('../../', import.meta.url))
// npm and npx run with Node 24 first on the PATH, as for a user of the package.
const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH}`, NO_COLOR: '1' }
const npm = (args: string[], cwd: string) => exec('npm', args, { cwd, env, maxBuffer: 16 * 1024 * 1024 })

let dir: string
let app: string
let files: string[]
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'patchbay-package-'))
  const packed = JSON.parse((await npm(['pack', '--json', '--pack-destination', dir], root)).stdout)
  files = packed[0].files.map((f: { path: string }) => f.path)
  app = join(dir, 'app')
  mkdirSync(app)
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
  )
  await npm(
    ['install', join(dir, packed[0].filename), '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline'],
    app,
  )
})
after(() => rmSync(dir, { recursive: true, force: true }))

test('the tarball carries the built SDK and command, not the sources, tests or benchmarks', () => {
  for (const f of [
    'dist/sdk/index.js',
    'dist/sdk/index.d.ts',
    'dist/cli/main.js',
    'src/cli/patchbay.mjs',
    'LICENSE',
  ])
    assert.ok(files.includes(f), `${f} is missing`)
  const extra = files.filter(
    (f) =>
      !/^dist\/.*\.(js|d\.ts)$/.test(f) &&
      !['src/cli/patchbay.mjs', 'package.json', 'README.md', 'LICENSE'].includes(f),
  )
  assert.deepEqual(extra, [])
  // A small, self-contained SDK: its types come from the API contract, so nothing of the service
  // (engine, store, server, connectors) is built into the package.
  const service = files.filter((f) => /^dist\/(engine|store|server|connectors)\//.test(f))
  assert.deepEqual(service, [])
  const js = files.filter((f) => f.endsWith('.js'))
  assert.ok(js.length <= 20, `${js.length} JavaScript files: ${js.join(', ')}`)
})

test('installing it pulls the few dependencies of the SDK and the command, none of the service', () => {
  const installed = Object.keys(
    JSON.parse(readFileSync(join(app, 'node_modules', '.package-lock.json'), 'utf8')).packages,
  ).map((p) => p.replace(/^.*node_modules\//, ''))
  for (const server of [
    'fastify',
    'kysely',
    'pg',
    'pg-boss',
    'ioredis',
    'pino',
    'zod',
    '@modelcontextprotocol/sdk',
  ])
    assert.ok(!installed.includes(server), `${server} was installed`)
  // patchbay, standardwebhooks and string-width, with what they need.
  assert.ok(installed.length <= 12, `${installed.length} packages: ${installed.join(', ')}`)
})

test('plain ESM imports patchbay/sdk from the installed package', async () => {
  writeFileSync(
    join(app, 'use.mjs'),
    `import { PatchbayClient, PatchbayApiError, verifyDelivery } from 'patchbay/sdk'
const client = new PatchbayClient({ url: 'http://127.0.0.1:9', key: 'pb_agent_x' })
const err = new PatchbayApiError(404, { code: 'STEP_NOT_FOUND', message: 'no such step' })
console.log(JSON.stringify({ url: client.url, code: err.code, verify: typeof verifyDelivery }))`,
  )
  const { stdout } = await exec(process.execPath, ['use.mjs'], { cwd: app, env })
  assert.deepEqual(JSON.parse(stdout), {
    url: 'http://127.0.0.1:9',
    code: 'STEP_NOT_FOUND',
    verify: 'function',
  })
})

test('a TypeScript consumer (module NodeNext) type-checks against the package’s types', async () => {
  writeFileSync(
    join(app, 'use.ts'),
    `import { PatchbayApiError, PatchbayClient, type StepInput, type StepOutput } from 'patchbay/sdk'

const client = new PatchbayClient({ key: 'pb_agent_x' })
const input: StepInput<'taskboard.create_card'> = { idList: '5f0c0c0c0c0c0c0c0c0c0c0c', name: 'Hello' }
// @ts-expect-error a card needs its list
const incomplete: StepInput<'taskboard.create_card'> = { name: 'Hello' }
export async function create(): Promise<StepOutput<'taskboard.create_card'> | string> {
  try {
    return (await client.runStep('taskboard.create_card', input)).output
  } catch (err) {
    if (err instanceof PatchbayApiError && err.code === 'CONNECTION_REQUIRED') return err.hint ?? ''
    throw err
  }
}
export { incomplete }
`,
  )
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2022',
        types: ['node'],
        typeRoots: [join(root, 'node_modules', '@types')],
      },
      files: ['use.ts'],
    }),
  )
  const res = await exec(join(root, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], {
    cwd: app,
    env,
  }).catch((err) => err)
  assert.equal(res.code ?? 0, 0, `${res.stdout}${res.stderr}`)
})

test('npx patchbay --help runs the installed command', async () => {
  const { stdout } = await exec('npx', ['--no-install', 'patchbay', '--help'], { cwd: app, env })
  assert.match(stdout, /Usage: patchbay <command>/)
  assert.match(stdout, /connections list/)
})

const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

test('the package can be published: not private, Apache-2.0 with its license text, engines from Node 20', () => {
  assert.equal(manifest.private, undefined, 'npm refuses to publish a private package')
  assert.equal(manifest.license, 'Apache-2.0')
  const license = readFileSync(join(root, 'LICENSE'), 'utf8')
  assert.match(license, /^\s*Apache License\s+Version 2\.0, January 2004/)
  assert.match(license, /END OF TERMS AND CONDITIONS/)
  const installed = JSON.parse(readFileSync(join(app, 'node_modules', 'patchbay', 'package.json'), 'utf8'))
  assert.equal(installed.engines.node, '>=20')
  // Nothing it installs asks for a newer Node than its engines do.
  const lock = JSON.parse(readFileSync(join(app, 'node_modules', '.package-lock.json'), 'utf8')).packages
  for (const [where, p] of Object.entries<{ engines?: { node?: string } }>(lock)) {
    const least = /^>=\s*(\d+)/.exec(p.engines?.node ?? '')?.[1]
    assert.ok(least === undefined || Number(least) <= 20, `${where} needs Node ${p.engines?.node}`)
  }
  // The service (src/main.ts, run from the repository or the image) needs Node 24: its workspace says so,
  // and stays private (it is a list of the service's dependencies, never published on its own).
  const service = JSON.parse(readFileSync(join(root, 'packages', 'service', 'package.json'), 'utf8'))
  assert.equal(service.engines.node, '>=24')
  assert.equal(service.private, true)
  assert.match(readFileSync(join(root, 'Dockerfile'), 'utf8'), /^FROM node:24/m)
})

/** The machine's own Node of the major version the engines start at (Node 20 here), not the project's 24. */
function oldestNode(): string {
  const major = Number(/^>=(\d+)$/.exec(manifest.engines.node)?.[1])
  for (const candidate of ['/usr/local/bin/node', '/usr/bin/node', '/bin/node']) {
    try {
      const version = execFileSync(candidate, ['--version'], { encoding: 'utf8' }).trim()
      if (Number(/^v(\d+)\./.exec(version)?.[1]) === major) return candidate
    } catch {}
  }
  throw new Error(`no Node ${major} on this machine to check the engines with`)
}

test('on Node 20 (the oldest its engines allow) the installed SDK and command work against a real Patchbay', async () => {
  const node = oldestNode()
  const { stdout: version } = await exec(node, ['--version'])
  assert.match(version, /^v20\./)
  let service: TestService | undefined
  try {
    service = await startTestService()
    writeFileSync(
      join(app, 'steps.mjs'),
      `import { PatchbayClient, PatchbayApiError } from 'patchbay/sdk'
const client = new PatchbayClient({ url: process.env.PATCHBAY_URL, key: process.env.PATCHBAY_KEY })
const steps = await client.searchSteps('card')
let refused = null
try { await client.step('nothing.here') } catch (err) { refused = err instanceof PatchbayApiError ? err.code : String(err) }
console.log(JSON.stringify({ node: process.version, found: steps.some((s) => s.id === 'taskboard.create_card'), refused }))`,
    )
    const sdkEnv = { ...env, PATCHBAY_URL: service.url, PATCHBAY_KEY: service.adminKey }
    const sdk = JSON.parse((await exec(node, ['steps.mjs'], { cwd: app, env: sdkEnv })).stdout)
    assert.match(sdk.node, /^v20\./)
    assert.equal(sdk.found, true)
    assert.equal(sdk.refused, 'STEP_NOT_FOUND')

    // The command, started by Node 20 through its launcher, with Node 20 first on the PATH.
    const bin = join(app, 'node_modules', '.bin', 'patchbay')
    const node20Env = { ...sdkEnv, PATH: `${dirname(node)}:${process.env.PATH}` }
    const { stdout } = await exec(node, [bin, 'steps', 'search', 'card', '--json'], {
      cwd: app,
      env: node20Env,
    })
    const listed = JSON.parse(stdout)
    assert.ok(
      (Array.isArray(listed) ? listed : listed.steps).some(
        (s: { id: string }) => s.id === 'taskboard.create_card',
      ),
      stdout,
    )
  } finally {
    await service?.close()
  }
})
