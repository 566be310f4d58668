// Trying Patchbay offline: the sandboxes on ports a person pins (PATCHBAY_SANDBOX_PORTS) for
// `npm start`'s embedded ones and for `npm run sandbox`, which prints every demo secret a person
// needs (the code-host OAuth app's client secret too). A pinned port that is taken is one line and
// exit code 2.
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import net from 'node:net'
import path from 'node:path'
import { after, test } from 'node:test'
import { startCodehostSandbox } from '../../sandbox/codehost/index.ts'
import { DEMO } from '../../sandbox/taskboard/index.ts'
import { tempDir } from '../helpers/databases.ts'

const root = path.resolve(import.meta.dirname, '../..')
const children: ChildProcess[] = []
after(() => {
  for (const c of children) c.kill('SIGTERM')
})

/** Three ports free just now (each held, then released together). */
async function freePorts(): Promise<number[]> {
  const servers = await Promise.all(
    [0, 1, 2].map(
      () =>
        new Promise<net.Server>((resolve) => {
          const s = net.createServer()
          s.listen(0, '127.0.0.1', () => resolve(s))
        }),
    ),
  )
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port)
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))))
  return ports
}

/** Runs `file` until its output matches `until` (resolves with it) or it exits. */
function run(file: string, env: Record<string, string>, until: RegExp) {
  const child = spawn(process.execPath, [path.join(root, file)], {
    cwd: root,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  let stdout = ''
  let stderr = ''
  return new Promise<{ stdout: string; stderr: string; code: number | null }>((resolve) => {
    child.stdout!.on('data', (c) => {
      stdout += c
      if (until.test(stdout)) resolve({ stdout, stderr, code: null })
    })
    child.stderr!.on('data', (c) => (stderr += c))
    child.on('close', (code) => resolve({ stdout, stderr, code }))
  })
}

test('npm run sandbox: on pinned ports, with every demo secret printed', async () => {
  const ports = await freePorts()
  const out = await run('sandbox/main.ts', { PATCHBAY_SANDBOX_PORTS: ports.join(',') }, /Control API/)
  assert.equal(out.code, null, out.stderr)
  const codehost = await startCodehostSandbox()
  await codehost.close()
  for (const [what, value] of Object.entries({
    'task-board address': `http://127.0.0.1:${ports[0]}`,
    'code-host address': `http://127.0.0.1:${ports[1]}`,
    'contact-data address': `http://127.0.0.1:${ports[2]}`,
    'task-board API key': DEMO.key,
    'task-board token': DEMO.token,
    'task-board API secret': DEMO.secret,
    'task-board demo password': `password ${DEMO.password}`,
    'task-board admin page': `http://127.0.0.1:${ports[0]}/power-ups/admin`,
    'code-host token': codehost.demo.token,
    'code-host password': codehost.demo.password,
    'code-host OAuth client id': codehost.demo.oauthClientId,
    'code-host OAuth client secret': codehost.demo.oauthClientSecret,
  }))
    assert.ok(out.stdout.includes(value), `${what} (${value}) is printed:\n${out.stdout}`)
  const page = await fetch(`http://127.0.0.1:${ports[0]}/power-ups/admin`)
  assert.equal(page.status, 200)
})

test('npm start: the embedded sandboxes listen on the ports PATCHBAY_SANDBOX_PORTS pins', async () => {
  const ports = await freePorts()
  const out = await run(
    'src/main.ts',
    { PORT: '0', PATCHBAY_DATA_DIR: tempDir('patchbay-offline-'), PATCHBAY_SANDBOX_PORTS: ports.join(',') },
    /contact-data sandbox .*\n.*\n/,
  )
  assert.equal(out.code, null, out.stderr)
  assert.match(out.stdout, new RegExp(`task-board sandbox +http://127\\.0\\.0\\.1:${ports[0]}\\b`))
  assert.match(out.stdout, new RegExp(`code-host sandbox +http://127\\.0\\.0\\.1:${ports[1]}\\b`))
  assert.match(out.stdout, new RegExp(`contact-data sandbox http://127\\.0\\.0\\.1:${ports[2]}\\b`))
  const me = await fetch(`http://127.0.0.1:${ports[0]}/1/members/me?key=${DEMO.key}&token=${DEMO.token}`)
  assert.equal(me.status, 200)
})

test('npm start: a pinned sandbox port that is taken is one line and exit code 2', async () => {
  const taken = net.createServer()
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r))
  const port = (taken.address() as net.AddressInfo).port
  const [a, b] = await freePorts()
  try {
    const out = await run(
      'src/main.ts',
      {
        PORT: '0',
        PATCHBAY_DATA_DIR: tempDir('patchbay-offline-'),
        PATCHBAY_SANDBOX_PORTS: `${a},${port},${b}`,
      },
      /(?!)/,
    )
    assert.equal(out.code, 2, out.stderr)
    assert.equal(out.stderr.trimEnd().split('\n').length, 1, out.stderr)
    assert.match(
      out.stderr,
      new RegExp(
        `^patchbay: a sandbox could not listen on 127\\.0\\.0\\.1:${port}, which is in use: free it`,
      ),
    )
  } finally {
    taken.close()
  }
})
