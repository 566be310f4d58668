// `npm run bench`: runs every benchmark under bench/ one after another; each prints one JSON line.
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
for (const f of files) {
  const r = spawnSync(process.execPath, [path.join(dir, f)], { stdio: ['ignore', 'inherit', 'inherit'] })
  if (r.status !== 0) failed++
}
process.exit(failed ? 1 : 0)
