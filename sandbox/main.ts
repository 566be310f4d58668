// `npm run sandbox`: the three emulated upstreams on fixed ports, for trying agents offline.
// `--state-dir DIR` (or SANDBOX_STATE_DIR) keeps their state there across restarts; `--fresh`
// discards what is there and starts from the seed. Without a state directory nothing is kept.
import { parseArgs } from 'node:util'
import { describeSandboxes, startSandboxes } from './index.ts'

const { values: args } = parseArgs({
  options: { 'state-dir': { type: 'string' }, fresh: { type: 'boolean', default: false } },
})
const stateDir = args['state-dir'] ?? process.env.SANDBOX_STATE_DIR

const port = (name: string, fallback: number) => Number(process.env[name] ?? fallback)
const sandboxes = await startSandboxes({
  host: process.env.SANDBOX_HOST ?? '127.0.0.1',
  ports: {
    taskboard: port('SANDBOX_TASKBOARD_PORT', 4101),
    codehost: port('SANDBOX_CODEHOST_PORT', 4102),
    contactdata: port('SANDBOX_CONTACTDATA_PORT', 4103),
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
