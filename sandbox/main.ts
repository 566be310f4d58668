// `npm run sandbox`: the three emulated upstreams on fixed ports, for trying agents offline.
// `--state-dir DIR` (or SANDBOX_STATE_DIR) keeps their state there across restarts; `--fresh`
// discards what is there and starts from the seed. Without a state directory nothing is kept.
import { parseArgs } from 'node:util'
import { describeSandboxes, startSandboxes } from './index.ts'
import { type PinnedPorts, parseSandboxPorts } from './ports.ts'

const { values: args } = parseArgs({
  options: { 'state-dir': { type: 'string' }, fresh: { type: 'boolean', default: false } },
})
const stateDir = args['state-dir'] ?? process.env.SANDBOX_STATE_DIR

// PATCHBAY_SANDBOX_PORTS as `npm start` reads it (one base port, or three); 4101–4103 otherwise.
let pinned: PinnedPorts = { taskboard: 4101, codehost: 4102, contactdata: 4103 }
if (process.env.PATCHBAY_SANDBOX_PORTS) {
  try {
    pinned = parseSandboxPorts(process.env.PATCHBAY_SANDBOX_PORTS)
  } catch (err) {
    process.stderr.write(
      `sandbox: PATCHBAY_SANDBOX_PORTS=${JSON.stringify(process.env.PATCHBAY_SANDBOX_PORTS)}: expected one base port or three different ports, e.g. 4101 or 4101,4102,4103 (${(err as Error).message})\n`,
    )
    process.exit(2)
  }
}
const port = (name: string, fallback: number) => Number(process.env[name] ?? fallback)
const sandboxes = await startSandboxes({
  host: process.env.SANDBOX_HOST ?? '127.0.0.1',
  ports: {
    taskboard: port('SANDBOX_TASKBOARD_PORT', pinned.taskboard),
    codehost: port('SANDBOX_CODEHOST_PORT', pinned.codehost),
    contactdata: port('SANDBOX_CONTACTDATA_PORT', pinned.contactdata),
  },
  stateDir,
  fresh: args.fresh,
})
console.log(describeSandboxes(sandboxes))
console.log(
  stateDir
    ? `State kept in ${stateDir} (${args.fresh ? 'started fresh' : 'carried over from the last run, if any'}).`
    : 'State is not kept (give --state-dir DIR to keep it across restarts).',
)
console.log(
  'Control API: POST <address>/_sandbox/reset, /_sandbox/clock, /_sandbox/faults … (see sandbox/*/README.md)',
)

const stop = async () => {
  await sandboxes.close()
  process.exit(0)
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
