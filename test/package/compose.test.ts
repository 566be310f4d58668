// compose.yaml and the balancer's configuration (compose.balancer.json, Caddy's JSON form), read as
// `docker compose` and Caddy read them and checked against each other and against what the
// services really serve — no container engine runs here, so this is what holds them together:
// every dependency on a health check has one that can pass (the sandbox's own, run here against
// running sandboxes), the public address is one the sandbox reaches inside the network, the
// balancer spreads requests round robin over exactly the Patchbay instances and takes one out when
// its /readyz fails, and each instance's settings pass Patchbay's own configuration check.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { parse } from 'yaml'
import { startSandboxes } from '../../sandbox/index.ts'
import { parseSandboxPorts } from '../../sandbox/ports.ts'
import { loadConfig } from '../../src/config.ts'

const exec = promisify(execFile)
const root = path.resolve(import.meta.dirname, '../..')
const read = (file: string) => readFileSync(path.join(root, file), 'utf8')
const composeText = read('compose.yaml')
// Merge keys (`<<: *patchbay`) as compose applies them.
const compose = parse(composeText, { merge: true }) as {
  services: Record<string, Service>
}
interface Service {
  build?: string
  image?: string
  command?: string[]
  environment?: Record<string, string>
  healthcheck?: { test: string[] }
  depends_on?: Record<string, { condition: string }>
  ports?: string[]
  volumes?: string[]
}
const services = compose.services
const dockerfile = read('Dockerfile')

/** `${NAME:-default}` as compose substitutes it when NAME is unset; `${NAME:?…}` needs a value, given here. */
function substitute(value: string, given: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_m, name: string, kind?: string, rest = '') => {
    if (given[name] !== undefined) return given[name]
    if (kind === '-') return rest
    throw new Error(`${name} must be set: ${rest}`)
  })
}

const instances = Object.entries(services).filter(([, s]) => s.environment?.PATCHBAY_DATABASE_URL)
const balancer = JSON.parse(read('compose.balancer.json'))
const proxy = balancer.apps.http.servers.balancer.routes[0].handle[0]

test('two Patchbay instances, and every dependency names a service whose health check can pass', () => {
  assert.deepEqual(
    instances.map(([name]) => name),
    ['patchbay-1', 'patchbay-2'],
  )
  for (const [name, service] of Object.entries(services))
    for (const [dep, { condition }] of Object.entries(service.depends_on ?? {})) {
      assert.ok(services[dep], `${name} depends on ${dep}, which is no service`)
      if (condition !== 'service_healthy') continue
      const target = services[dep]!
      // A service built from the Dockerfile inherits its HEALTHCHECK (Patchbay's /readyz) unless it
      // has its own; only Patchbay itself answers that.
      const inherits = target.build !== undefined && !target.healthcheck
      assert.ok(target.healthcheck || inherits, `${dep} has no health check for ${name} to wait on`)
      if (inherits)
        assert.ok(
          target.environment?.PATCHBAY_DATABASE_URL && /\/readyz/.test(dockerfile),
          `${dep} would inherit the image's /readyz check, which only Patchbay answers`,
        )
    }
  assert.equal(services['patchbay-1']!.depends_on?.sandbox?.condition, 'service_healthy')
})

test('the sandbox has its own health check, and it passes only when all three sandboxes answer', async () => {
  const sandbox = services.sandbox!
  assert.deepEqual(sandbox.command, ['node', 'sandbox/main.ts'])
  assert.equal(sandbox.environment?.SANDBOX_HOST, '0.0.0.0', 'reachable from the other containers')
  const ports = parseSandboxPorts(String(sandbox.environment?.PATCHBAY_SANDBOX_PORTS))
  // The instances reach each sandbox where it listens.
  for (const [, s] of instances) {
    assert.equal(s.environment?.PATCHBAY_TASKBOARD_URL, `http://sandbox:${ports.taskboard}`)
    assert.equal(s.environment?.PATCHBAY_CODEHOST_URL, `http://sandbox:${ports.codehost}`)
    assert.equal(s.environment?.PATCHBAY_CONTACTDATA_URL, `http://sandbox:${ports.contactdata}`)
  }
  const [kind, command, ...args] = sandbox.healthcheck!.test
  assert.equal(kind, 'CMD')
  assert.equal(command, 'node')
  // Run it here, against sandboxes on free ports (the ports of the file stood in for).
  const running = await startSandboxes()
  const script = args
    .join(' ')
    .replace(/^-e /, '')
    .replace(String(ports.taskboard), new URL(running.taskboard!.url).port)
    .replace(String(ports.codehost), new URL(running.codehost!.url).port)
    .replace(String(ports.contactdata), new URL(running.contactdata!.url).port)
  for (const port of Object.values(ports)) assert.ok(args.join(' ').includes(String(port)), `checks ${port}`)
  try {
    const ok = await exec(process.execPath, ['-e', script]).then(
      () => 0,
      (err) => err.code,
    )
    assert.equal(ok, 0, 'healthy while all three answer')
    await running.contactdata!.close()
    const down = await exec(process.execPath, ['-e', script]).then(
      () => 0,
      (err) => err.code,
    )
    assert.equal(down, 1, 'unhealthy when one does not')
  } finally {
    await running.close()
  }
})

test('the public address is the balancer inside the network, where the sandbox sends webhooks', () => {
  const env = services['patchbay-1']!.environment!
  const publicUrl = new URL(substitute(env.PATCHBAY_PUBLIC_URL!, {}))
  assert.notEqual(publicUrl.hostname, 'localhost', 'localhost in the sandbox container is the sandbox')
  assert.ok(services[publicUrl.hostname], `${publicUrl.hostname} is a service of the network`)
  assert.equal(publicUrl.hostname, 'proxy')
  assert.deepEqual(balancer.apps.http.servers.balancer.listen, [`:${publicUrl.port}`])
  assert.ok(
    services.proxy!.ports?.includes(`${publicUrl.port}:${publicUrl.port}`),
    'the same port is published on the host',
  )
})

test('each instance’s settings pass Patchbay’s own configuration check', () => {
  for (const [name, s] of instances) {
    const env = Object.fromEntries(
      Object.entries(s.environment!).map(([k, v]) => [
        k,
        substitute(String(v), {
          PATCHBAY_MASTER_KEY: Buffer.alloc(32, 7).toString('base64'),
          PATCHBAY_ADMIN_KEY: 'pb_admin_0123456789abcdef',
        }),
      ]),
    )
    // The image's own environment (Dockerfile ENV) is under the service's.
    const config = loadConfig({ HOST: '0.0.0.0', PORT: '8080', ...env })
    assert.equal(config.publicUrl, 'http://proxy:8080', name)
    assert.equal(config.upstreams.codehost, 'http://sandbox:4102', name)
    assert.deepEqual(config.egressAllow, ['sandbox'], name)
  }
})

test('the balancer: Caddy with compose.balancer.json, round robin over the instances, /readyz checks', () => {
  const p = services.proxy!
  assert.equal(p.image, 'caddy:2')
  const configAt = p.command![p.command!.indexOf('--config') + 1]
  assert.deepEqual(p.command, ['caddy', 'run', '--config', configAt])
  assert.ok(
    p.volumes?.includes(`./compose.balancer.json:${configAt}:ro`),
    'the file is mounted where it is read',
  )
  assert.equal(proxy.handler, 'reverse_proxy')
  const servicePort = /PORT=(\d+)/.exec(dockerfile)![1]
  assert.deepEqual(
    proxy.upstreams.map((u: { dial: string }) => u.dial),
    instances.map(([name]) => `${name}:${servicePort}`),
  )
  assert.equal(proxy.load_balancing.selection_policy.policy, 'round_robin')
  const active = proxy.health_checks.active
  assert.equal(active.uri, '/readyz')
  assert.equal(active.expect_status, 200)
  for (const d of [active.interval, active.timeout, proxy.load_balancing.try_duration])
    assert.match(d, /^\d+(ms|s|m)$/, 'a Caddy duration')
  assert.ok(proxy.health_checks.passive.fail_duration, 'an instance failing requests is taken out too')
  // /readyz is a route Patchbay serves (and the image's own health check asks it).
  assert.match(read('src/server/observability.ts'), /app\.get\('\/readyz'/)
  // What the file's comment says is what the configuration does.
  assert.match(composeText, /round robin; an instance whose\n\s*# \/readyz does not answer 200 is taken out/)
  assert.doesNotMatch(composeText, /reverse-proxy/, 'the command-line form balances randomly, unchecked')
})
