// `npm start` and the container image start Patchbay with the same Node flags: a bounded young
// generation and heap (README: Operating, Memory), which bench/events.ts starts it with too.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'

const root = path.resolve(import.meta.dirname, '../..')

test('npm start and the container image run src/main.ts with the same bounded-memory Node flags', () => {
  const start: string = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.start
  const npmStart = start.split(/\s+/)
  assert.deepEqual(npmStart.slice(0, 2), ['exec', 'node'])
  assert.equal(npmStart.at(-1), 'src/main.ts')
  const cmd = /^CMD (\[.*\])$/m.exec(fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8'))
  assert.ok(cmd, 'the Dockerfile has a CMD in exec form')
  const image: string[] = JSON.parse(cmd[1])
  assert.deepEqual(image, npmStart.slice(1))
  const flags = image.filter((w) => w.startsWith('--'))
  assert.ok(
    flags.some((f) => /^--max-semi-space-size=\d+$/.test(f)),
    flags.join(' '),
  )
  assert.ok(
    flags.some((f) => /^--max-old-space-size=\d+$/.test(f)),
    flags.join(' '),
  )
})
