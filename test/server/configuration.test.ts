// Configuration is checked at start: each bad value is one line on stderr naming the variable, its
// value (secrets hidden) and what was expected, and the process exits 2 without a stack trace.
// The configuration table in docs/configuration.md lists exactly the variables of the schema.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { describe, test } from 'node:test'
import { CONFIG_PAGE, withConfigTable } from '../../scripts/docs-config.ts'
import { ConfigError, loadConfig } from '../../src/config.ts'
import { tempDir } from '../helpers/databases.ts'

const root = path.resolve(import.meta.dirname, '../..')

/** Starts `npm start`'s entry with `env` and collects what it says until it exits. */
function start(
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const child = spawn(process.execPath, [path.join(root, 'src/main.ts')], {
    cwd: root,
    env: { PATH: process.env.PATH, PATCHBAY_DATA_DIR: tempDir('patchbay-config-'), PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c) => (stdout += c))
  child.stderr.on('data', (c) => (stderr += c))
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr, stdout })))
}

const cases: Array<[string, Record<string, string>, RegExp]> = [
  [
    'a port out of range',
    { PORT: '99999' },
    /^patchbay: PORT="99999": expected a port number from 0 to 65535$/,
  ],
  [
    'an unknown log level',
    { LOG_LEVEL: 'verbose' },
    /^patchbay: LOG_LEVEL="verbose": expected one of fatal, error, warn, info, debug, trace, silent$/,
  ],
  [
    'an address that is no address',
    { HOST: '999.1.1.1' },
    /^patchbay: HOST="999.1.1.1": expected an IP address/,
  ],
  [
    'a database URL of another kind (its password hidden)',
    { PATCHBAY_DATABASE_URL: 'mysql://root:hunter2@db.example/patchbay' },
    /^patchbay: PATCHBAY_DATABASE_URL="mysql:\/\/root:\*\*\*@db.example\/patchbay": expected a PostgreSQL address/,
  ],
  [
    'a public URL that is not one',
    { PATCHBAY_PUBLIC_URL: 'not-a-url' },
    /^patchbay: PATCHBAY_PUBLIC_URL="not-a-url": expected an http:\/\/ or https:\/\/ address/,
  ],
  [
    'a master key of the wrong size (not shown)',
    { PATCHBAY_MASTER_KEY: 'c2hvcnQ=' },
    /^patchbay: PATCHBAY_MASTER_KEY=\(hidden, 8 characters\): expected the base64 of exactly 32 bytes/,
  ],
  [
    'sandbox ports that are neither one base port nor three',
    { PATCHBAY_SANDBOX_PORTS: '4101,4102' },
    /^patchbay: PATCHBAY_SANDBOX_PORTS="4101,4102": expected one base port from 1 to 65533, or three different ports, e.g. 4101 or 4101,4102,4103 \(2 ports given, one base port or three\)$/,
  ],
  [
    'sandbox ports that take the service’s own',
    { PORT: '4102', PATCHBAY_SANDBOX_PORTS: '4101' },
    /^patchbay: PATCHBAY_SANDBOX_PORTS="4101": expected ports other than PORT \(4102\), which Patchbay itself listens on$/,
  ],
  [
    'a PostgreSQL that does not answer',
    { PATCHBAY_DATABASE_URL: 'postgres://patchbay:s3cret@127.0.0.1:1/patchbay' },
    /^patchbay: PATCHBAY_DATABASE_URL="postgres:\/\/patchbay:\*\*\*@127.0.0.1:1\/patchbay": PostgreSQL did not answer \(.+\); start it, or fix the address$/,
  ],
  [
    'a Redis that does not answer',
    { REDIS_URL: 'redis://127.0.0.1:1' },
    /^patchbay: REDIS_URL="redis:\/\/127.0.0.1:1": Redis did not answer \(.+\); start it, fix the address, or unset REDIS_URL$/,
  ],
]

describe('a bad start', { concurrency: true }, () => {
  for (const [what, env, line] of cases)
    test(`${what}: one line and exit code 2`, async () => {
      const run = await start(env)
      assert.equal(run.code, 2, run.stderr)
      const lines = run.stderr.trimEnd().split('\n')
      assert.equal(lines.length, 1, run.stderr)
      assert.match(lines[0], line)
      assert.ok(!/hunter2|s3cret/.test(run.stderr + run.stdout), 'no password is printed')
    })

  test('a port another program listens on: one line and exit code 2, nothing stored lost', async () => {
    const taken = net.createServer()
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r))
    const port = (taken.address() as net.AddressInfo).port
    try {
      const run = await start({ PORT: String(port), HOST: '127.0.0.1' })
      assert.equal(run.code, 2, run.stderr)
      assert.equal(run.stderr.trimEnd().split('\n').length, 1, run.stderr)
      assert.match(
        run.stderr,
        new RegExp(
          `^patchbay: PORT="${port}": 127\\.0\\.0\\.1:${port} is in use by another program; stop it, or choose another PORT\n$`,
        ),
      )
    } finally {
      taken.close()
    }
  })

  test('every problem is reported at once, one line each', async () => {
    const run = await start({ PORT: 'eighty', LOG_LEVEL: 'loud', PATCHBAY_CODEHOST_CLIENT_ID: 'app' })
    assert.equal(run.code, 2)
    const lines = run.stderr.trimEnd().split('\n')
    assert.equal(lines.length, 3, run.stderr)
    assert.match(run.stderr, /PORT="eighty"/)
    assert.match(run.stderr, /LOG_LEVEL="loud"/)
    assert.match(run.stderr, /PATCHBAY_CODEHOST_CLIENT_SECRET is not set/)
    assert.doesNotMatch(run.stderr, /\bat \S+ \(/, 'no stack trace')
  })
})

test('good values are read; empty ones count as unset', () => {
  const c = loadConfig({
    PORT: '9000',
    HOST: '::',
    LOG_LEVEL: 'DEBUG',
    PATCHBAY_PUBLIC_URL: 'https://pb.example.com/',
    REDIS_URL: '',
  })
  assert.equal(c.port, 9000)
  assert.equal(c.host, '::')
  assert.equal(c.logLevel, 'debug')
  assert.equal(c.publicUrl, 'https://pb.example.com')
  assert.equal(c.redisUrl, null)
  assert.throws(() => loadConfig({ PATCHBAY_UPSTREAM_RETRIES: '-1' }), ConfigError)
  assert.deepEqual(loadConfig({ PATCHBAY_SANDBOX_PORTS: '4201' }).sandboxPorts, {
    taskboard: 4201,
    codehost: 4202,
    contactdata: 4203,
  })
  assert.deepEqual(loadConfig({ PATCHBAY_SANDBOX_PORTS: '5000, 6000,7000' }).sandboxPorts, {
    taskboard: 5000,
    codehost: 6000,
    contactdata: 7000,
  })
  assert.equal(loadConfig({}).sandboxPorts, null)
  assert.throws(() => loadConfig({ PATCHBAY_SANDBOX_PORTS: '4101,4101,4102' }), /three different ports/)
})

test('PATCHBAY_DATABASE_PREPARED_STATEMENTS: on by default, off for a pooler in transaction mode, nothing else', () => {
  assert.equal(loadConfig({}).databasePreparedStatements, true)
  assert.equal(loadConfig({ PATCHBAY_DATABASE_PREPARED_STATEMENTS: 'off' }).databasePreparedStatements, false)
  assert.equal(loadConfig({ PATCHBAY_DATABASE_PREPARED_STATEMENTS: 'on' }).databasePreparedStatements, true)
  assert.throws(
    () => loadConfig({ PATCHBAY_DATABASE_PREPARED_STATEMENTS: 'no' }),
    /PATCHBAY_DATABASE_PREPARED_STATEMENTS="no": expected on or off/,
  )
})

test("people's settings: sign-up mode, session lifetime, SMTP and single sign-on are read, and checked together", () => {
  const c = loadConfig({
    PATCHBAY_SIGNUP: 'Open',
    PATCHBAY_SESSION_TTL: '12h',
    PATCHBAY_SMTP_URL: 'smtps://mailer:pw@mail.example.com:465',
    PATCHBAY_MAIL_FROM: 'Patchbay <patchbay@example.com>',
    PATCHBAY_OIDC_ISSUER: 'https://login.example.com/',
    PATCHBAY_OIDC_CLIENT_ID: 'patchbay',
    PATCHBAY_OIDC_CLIENT_SECRET: 'shh',
  })
  assert.equal(c.signup, 'open')
  assert.equal(c.sessionTtlMs, 12 * 3600_000)
  assert.deepEqual(c.smtp, {
    url: 'smtps://mailer:pw@mail.example.com:465',
    from: 'Patchbay <patchbay@example.com>',
  })
  // The issuer as given: it is compared exactly, trailing slash included.
  assert.deepEqual(c.oidc, {
    issuer: 'https://login.example.com/',
    clientId: 'patchbay',
    clientSecret: 'shh',
    joinByDomain: false,
  })
  const defaults = loadConfig({})
  assert.equal(defaults.signup, 'invite')
  assert.equal(defaults.sessionTtlMs, 14 * 86_400_000)
  assert.equal(defaults.smtp, null)
  assert.equal(defaults.oidc, null)
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig(env)
    } catch (err) {
      return (err as ConfigError).problems
    }
    return []
  }
  assert.deepEqual(problems({ PATCHBAY_SIGNUP: 'maybe' }), [
    'PATCHBAY_SIGNUP="maybe": expected open, invite or off',
  ])
  assert.match(
    problems({ PATCHBAY_SESSION_TTL: '2m' })[0],
    /PATCHBAY_SESSION_TTL="2m": expected a duration from 5m to 365d/,
  )
  assert.match(problems({ PATCHBAY_SESSION_TTL: '10 days' })[0], /expected a duration/)
  assert.match(
    problems({ PATCHBAY_SMTP_URL: 'http://mailer:pw@mail.example.com' })[0],
    /^PATCHBAY_SMTP_URL="http:\/\/mailer:\*\*\*@mail.example.com": expected an smtp:\/\/ or smtps:\/\/ address/,
  )
  assert.deepEqual(problems({ PATCHBAY_SMTP_URL: 'smtp://mail.example.com' }), [
    'PATCHBAY_MAIL_FROM is not set: expected it with PATCHBAY_SMTP_URL (the sender of invitations)',
  ])
  assert.deepEqual(problems({ PATCHBAY_OIDC_ISSUER: 'https://login.example.com' }), [
    'PATCHBAY_OIDC_CLIENT_ID and PATCHBAY_OIDC_CLIENT_SECRET not set: expected PATCHBAY_OIDC_ISSUER, PATCHBAY_OIDC_CLIENT_ID, PATCHBAY_OIDC_CLIENT_SECRET together',
  ])
  assert.match(problems({ PATCHBAY_MAIL_FROM: 'not an address' })[0], /expected an email address/)
})

test('the configuration table in docs/configuration.md is the schema’s (npm run docs:config)', () => {
  const readme = fs.readFileSync(CONFIG_PAGE, 'utf8')
  assert.equal(withConfigTable(readme), readme, 'the page is out of date: run npm run docs:config')
})
