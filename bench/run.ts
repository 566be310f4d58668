// `npm run bench`: runs every benchmark under bench/ one after another; each prints one JSON line
// with its targets and `met`. A last line sums up which benchmarks met all their targets.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

const dir = import.meta.dirname
const only = process.argv.slice(2)
const files = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.startsWith('_'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort()

let failed = 0
const met: Record<string, boolean | null> = {}
for (const f of files) {
  const r = spawnSync(process.execPath, [path.join(dir, f)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
  process.stdout.write(r.stdout ?? '')
  if (r.status !== 0) failed++
  const line = (r.stdout ?? '')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .pop()
  let printed: { met?: unknown } | null = null
  try {
    printed = line ? JSON.parse(line) : null
  } catch {}
  // null: the benchmark crashed or printed no targets.
  met[f.replace(/\.ts$/, '')] = r.status === 0 && typeof printed?.met === 'boolean' ? printed.met : null
}
console.log(JSON.stringify({ bench: 'all', met, allMet: Object.values(met).every((m) => m === true) }))
process.exit(failed ? 1 : 0)
