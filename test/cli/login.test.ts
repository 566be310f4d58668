// `patchbay login` as a person: one sign-in keeps a personal key per workspace (the person's role
// there) in a file only they can read; later commands use the current workspace's key with no
// --key; `workspace use` switches; `logout` revokes the keys and forgets them.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, statSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, test } from 'node:test'
import { startTestService, type TestService } from '../helpers/service.ts'

const MAIN = path.resolve(import.meta.dirname, '../../src/cli/main.ts')
let t: TestService
const config = path.join(mkdtempSync(path.join(os.tmpdir(), 'patchbay-login-')), 'login.json')
const email = 'ada@example.test'
const password = 'correct horse battery staple'

function cli(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const childEnv: NodeJS.ProcessEnv = {
      ...process.env,
      NO_COLOR: '1',
      PATCHBAY_URL: t.url,
      PATCHBAY_CONFIG: config,
      ...env,
    }
    delete childEnv.NODE_TEST_CONTEXT
    delete childEnv.PATCHBAY_KEY
    const child = spawn(process.execPath, [MAIN, ...args], {
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c) => (stdout += c))
    child.stderr.on('data', (c) => (stderr += c))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

/** A person's session, as the dashboard holds it: the cookie and the CSRF token. */
async function signIn() {
  const res = await fetch(`${t.url}/v1/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  })
  assert.equal(res.status, 200, await res.clone().text())
  const body = (await res.json()) as { csrfToken: string }
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ')
  return async (method: string, p: string, payload?: unknown, workspace?: string) => {
    const r = await fetch(t.url + p, {
      method,
      headers: {
        cookie,
        'x-csrf-token': body.csrfToken,
        ...(workspace ? { 'patchbay-workspace': workspace } : {}),
        ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: payload !== undefined ? JSON.stringify(payload) : undefined,
    })
    const text = await r.text()
    return { status: r.status, body: text ? JSON.parse(text) : null }
  }
}

before(async () => {
  t = await startTestService({ env: { PATCHBAY_SIGNUP: 'open' } })
  const up = await fetch(`${t.url}/v1/auth/sign-up`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password, name: 'Ada' }),
  })
  assert.equal(up.status, 201, await up.text())
})
after(() => t.close())

test('login keeps a key per workspace; commands use the current one; workspace use switches; logout revokes', async () => {
  const session = await signIn()
  const first = await session('POST', '/v1/workspaces', { name: 'Acme' })
  assert.equal(first.status, 201, JSON.stringify(first.body))
  const second = await session('POST', '/v1/workspaces', { name: 'Globex' })
  assert.equal(second.status, 201, JSON.stringify(second.body))
  // An agent in each, so each command's answer shows which workspace it acted on.
  for (const [ws, name] of [
    [first.body.id, 'acme-agent'],
    [second.body.id, 'globex-agent'],
  ]) {
    const made = await session('POST', '/v1/agents', { name, delivery: { type: 'stream' } }, ws)
    assert.equal(made.status, 201, JSON.stringify(made.body))
  }

  const wrong = await cli(['login', '--email', email, '--password', 'not it'])
  assert.equal(wrong.code, 1)
  assert.match(wrong.stderr, /INVALID_CREDENTIALS|SIGN_IN/)

  const login = await cli(['login', '--email', email, '--password', password])
  assert.equal(login.code, 0, login.stderr)
  assert.match(login.stdout, /Signed in as ada@example\.test/)
  assert.equal(statSync(config).mode & 0o777, 0o600, 'only its owner may read the kept keys')
  const kept = JSON.parse(readFileSync(config, 'utf8'))
  assert.equal(kept.workspaces.length, 2)
  assert.ok(
    kept.workspaces.every((w: { key: string; role: string }) => w.key.length > 20 && w.role === 'owner'),
  )

  const listed = await cli(['workspace', 'list', '--json'])
  assert.equal(listed.code, 0, listed.stderr)
  const rows = JSON.parse(listed.stdout)
  assert.deepEqual(rows.map((r: { name: string }) => r.name).sort(), ['Acme', 'Globex'])

  const agentsOf = async () => {
    const r = await cli(['agents', 'list', '--json'])
    assert.equal(r.code, 0, r.stderr)
    const parsed = JSON.parse(r.stdout)
    return (Array.isArray(parsed) ? parsed : parsed.agents).map((a: { name: string }) => a.name)
  }
  assert.equal((await cli(['workspace', 'use', 'Globex'])).code, 0)
  assert.deepEqual(await agentsOf(), ['globex-agent'])
  assert.equal((await cli(['workspace', 'use', first.body.id])).code, 0)
  assert.deepEqual(await agentsOf(), ['acme-agent'])
  const unknown = await cli(['workspace', 'use', 'Initech'])
  assert.equal(unknown.code, 2)
  assert.match(unknown.stderr, /No workspace "Initech"/)

  // The keys show under Keys with their maker; logout revokes them.
  const keys = await session('GET', '/v1/keys', undefined, first.body.id)
  assert.ok(
    keys.body.keys.some(
      (k: { id: string }) =>
        k.id === kept.workspaces.find((w: { id: string }) => w.id === first.body.id).keyId,
    ),
  )
  const out = await cli(['logout'])
  assert.equal(out.code, 0, out.stderr)
  const after = await cli(['agents', 'list', '--key', kept.workspaces[0].key])
  assert.equal(after.code, 1)
  assert.match(after.stderr, /revoked|UNAUTHORIZED/)
  const none = await cli(['agents', 'list'])
  assert.equal(none.code, 2)
  assert.match(none.stderr, /patchbay login/)
})
