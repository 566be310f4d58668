// `npm run sandbox`: the three emulated upstreams on fixed ports, for trying agents offline.
import { describeSandboxes, startSandboxes } from './index.ts'

const port = (name: string, fallback: number) => Number(process.env[name] ?? fallback)
const sandboxes = await startSandboxes({
  host: process.env.SANDBOX_HOST ?? '127.0.0.1',
  ports: {
    taskboard: port('SANDBOX_TASKBOARD_PORT', 4101),
    codehost: port('SANDBOX_CODEHOST_PORT', 4102),
    contactdata: port('SANDBOX_CONTACTDATA_PORT', 4103),
  },
})
console.log(describeSandboxes(sandboxes))
console.log(
  'Control API: POST <address>/_sandbox/reset, /_sandbox/clock, /_sandbox/faults … (see sandbox/*/README.md)',
)

const stop = async () => {
  await sandboxes.close()
  process.exit(0)
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
