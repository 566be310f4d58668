// `patchbay backup`: a consistent copy of the SQLite store taken while Patchbay runs, which, with
// the master key, brings everything back.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { tempDir } from '../helpers/databases.ts'
import { startTestService } from '../helpers/service.ts'

const root = path.resolve(import.meta.dirname, '../..')
const run = promisify(execFile)
const patchbay = (...args: string[]) =>
  run(process.execPath, [path.join(root, 'src/cli/main.ts'), ...args], {
    env: { PATH: process.env.PATH },
  }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  )

test('a backup taken while Patchbay runs restores its connections, with the master key', async () => {
  const dataDir = tempDir()
  const first = await startTestService({
    db: { name: 'sqlite', fresh: () => ({ databaseUrl: null, dataDir }) },
  })
  let connectionId: string
  const to = path.join(tempDir(), 'copy.db')
  try {
    const made = await first.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: first.taskboard.demo.key, token: first.taskboard.demo.token },
    })
    assert.equal(made.status, 201, JSON.stringify(made.body))
    connectionId = made.body.id
    const done = await patchbay('backup', '--data-dir', dataDir, '--to', to, '--progress')
    assert.equal(done.code, 0, done.stderr)
    // Progress as it copies: lines by tens of per cent, ending at 100 %.
    assert.match(done.stderr, /Copying pages: \d+ % \(\d+ of \d+\)/)
    assert.match(done.stderr, /Copying pages: 100 % \((\d+) of \1\)\n$/)
    assert.match(done.stdout, /Backed up .*patchbay\.db to .*copy\.db/)
    assert.match(done.stdout, /master key/)
    assert.ok(done.stdout.includes(path.join(dataDir, 'master.key')), 'it says where the key is')
    // A second backup to the same file is refused rather than overwriting it.
    const again = await patchbay('backup', '--data-dir', dataDir, '--to', to)
    assert.equal(again.code, 2)
    assert.match(again.stderr, /already exists/)
  } finally {
    await first.close()
  }

  // Restore: the copy and the master key in a new data directory.
  const restored = tempDir()
  fs.copyFileSync(to, path.join(restored, 'patchbay.db'))
  fs.copyFileSync(path.join(dataDir, 'master.key'), path.join(restored, 'master.key'))
  const second = await startTestService({
    taskboard: undefined,
    db: { name: 'sqlite', fresh: () => ({ databaseUrl: null, dataDir: restored }) },
  })
  try {
    const conn = await second.api('GET', `/v1/connections/${connectionId}`)
    assert.equal(conn.status, 200, JSON.stringify(conn.body))
    assert.equal(conn.body.status, 'active')
  } finally {
    await second.close()
  }
})

test('backup says what to give when there is no store', async () => {
  const done = await patchbay('backup', '--data-dir', tempDir())
  assert.equal(done.code, 2)
  assert.match(done.stderr, /There is no store at .*--data-dir/)
})
