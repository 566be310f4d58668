// Runs the task-board emulator on its own: `node sandbox/taskboard/serve.ts [--port 4101] [--host 127.0.0.1]`.
import { parseArgs } from 'node:util'
import { startTaskboardSandbox } from './index.ts'

const { values } = parseArgs({ options: { port: { type: 'string' }, host: { type: 'string' } } })
const sandbox = await startTaskboardSandbox({ port: Number(values.port ?? 4101), host: values.host })
console.log(`taskboard sandbox at ${sandbox.url}`)
console.log(JSON.stringify(sandbox.demo, null, 2))
const stop = () => void sandbox.close().then(() => process.exit(0))
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
