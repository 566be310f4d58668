// SIGTERM with an agent's event stream open: the stream is ended and the process exits (before,
// an open stream kept it alive and unresponsive); the run records of steps run just before the
// signal are in the store after it (they are written in batches, and the stop writes the last).
// Sent to `npm start`, it reaches Patchbay too (before, npm and its shell went and Patchbay kept
// running, orphaned, on its port).
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import path from 'node:path'
import { test } from 'node:test'
import { startTaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { openStore } from '../../src/store/database.ts'
import { tempDir } from '../helpers/databases.ts'
import { startOnFreePort } from '../helpers/main-process.ts'
import { LOOPBACK_EGRESS } from '../helpers/service.ts'

const root = path.resolve(import.meta.dirname, '../..')

test('SIGTERM ends open event streams, writes the last run records and the process exits', {
  timeout: 240_000,
}, async () => {
  const sandbox = await startTaskboardSandbox()
  const dataDir = tempDir()
  const adminKey = 'pb_admin_shutdown_test'
  const { child, url: base } = await startOnFreePort((port) =>
    spawn(process.execPath, [path.join(root, 'src/main.ts')], {
      cwd: root,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        PATCHBAY_DATA_DIR: dataDir,
        PATCHBAY_ADMIN_KEY: adminKey,
        PATCHBAY_TASKBOARD_URL: sandbox.url,
        ...LOOPBACK_EGRESS,
        LOG_LEVEL: 'silent',
      },
      // Piped: untilHealthy reads that it listens, so the answers are its own (see there).
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  )
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
  try {
    const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }
    const agent = await fetch(`${base}/v1/agents`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        name: 'listener',
        scope: { boards: [] },
        connectionIds: [],
        delivery: { type: 'stream' },
      }),
    }).then((r) => r.json())
    const connection = await fetch(`${base}/v1/connections`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        connector: 'taskboard',
        authMethod: 'api_key_token',
        credentials: { key: sandbox.demo.key, token: sandbox.demo.token },
      }),
    }).then((r) => r.json())
    const runIds: string[] = []
    for (let i = 0; i < 3; i++) {
      const run = await fetch(`${base}/v1/steps/taskboard.create_card/run`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          connectionId: connection.id,
          input: { idList: sandbox.demo.listIds[0], name: `just before the stop ${i}` },
        }),
      }).then((r) => r.json())
      runIds.push(run.meta.runId)
    }
    const stream = await fetch(`${base}/v1/agents/${agent.id}/stream`, { headers })
    assert.equal(stream.status, 200)
    const reader = stream.body!.getReader()
    await reader.read()
    child.kill('SIGTERM')
    // The stream is ended by the server…
    for (;;) if ((await reader.read()).done) break
    // …and the process exits by itself…
    assert.equal(await exited, 0)
    // …with every run recorded.
    const store = await openStore({ dataDir })
    const stored = await store.db.selectFrom('step_runs').select('id').execute()
    await store.close()
    assert.deepEqual(stored.map((r) => r.id).sort(), [...runIds].sort())
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL')
    await sandbox.close()
  }
})

test('SIGTERM sent to npm start stops Patchbay: npm exits and nothing answers on the port', {
  timeout: 240_000,
}, async () => {
  const sandbox = await startTaskboardSandbox()
  // As an operator runs it (the dashboard was built by npm test's pretest: its prestart is skipped).
  const { child: npm, url: base } = await startOnFreePort((port) =>
    spawn('npm', ['start', '--ignore-scripts'], {
      cwd: root,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        PATCHBAY_DATA_DIR: tempDir(),
        PATCHBAY_ADMIN_KEY: 'pb_admin_npm_start_test',
        PATCHBAY_TASKBOARD_URL: sandbox.url,
        ...LOOPBACK_EGRESS,
        LOG_LEVEL: 'silent',
      },
      // Piped: untilHealthy reads that Patchbay listens, so the answers are its own (see there).
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  )
  const exited = new Promise<number | null>((r) => npm.on('exit', (code) => r(code)))
  const answers = () =>
    fetch(`${base}/healthz`)
      .then((r) => r.ok)
      .catch(() => false)
  try {
    npm.kill('SIGTERM')
    assert.equal(await exited, 0)
    // Patchbay itself stopped with npm (it exits before npm does), not only npm and its shell.
    assert.equal(await answers(), false, 'Patchbay still answers after npm start was stopped')
  } finally {
    if (npm.exitCode === null) npm.kill('SIGKILL')
    await sandbox.close()
  }
})
