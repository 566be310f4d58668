// `npm start`: Patchbay on its embedded default (SQLite in ./data), with the sandbox upstreams
// in-process for every upstream whose address is not configured (their state kept in ./data/sandbox).
import path from 'node:path'
import type { Sandboxes } from '../sandbox/index.ts'
import { type Config, ConfigError, loadConfig, StartupError } from './config.ts'

/** A bad setting or a service that does not answer: one line each on stderr, exit 2, no stack trace. */
function exitOnStartFailure(err: unknown): never {
  if (err instanceof ConfigError || err instanceof StartupError) {
    const lines = err instanceof ConfigError ? err.problems : [err.message]
    for (const line of lines) process.stderr.write(`patchbay: ${line}\n`)
    process.exit(2)
  }
  throw err
}

let config: Config
try {
  config = loadConfig()
} catch (err) {
  exitOnStartFailure(err)
}
// Loaded once the settings are known good, so a bad one is reported at once.
const { startService } = await import('./service.ts')
// Every connector with an upstream of its own (the connectors list) whose address is not set.
const missing = Object.keys(config.upstreams).filter((id) => !config.upstreams[id])
let sandboxes: Sandboxes | null = null
// The sandbox is loaded only when an upstream is left to it: a production start never imports it.
const sandbox = missing.length > 0 ? await import('../sandbox/index.ts') : null
if (sandbox) {
  // Their state (accounts, tokens, boards, repositories, webhooks) is kept in the data directory,
  // so connections made through them still work after a restart.
  sandboxes = await sandbox
    .startSandboxes({
      only: missing,
      ports: config.sandboxPorts ?? undefined,
      stateDir: path.join(config.dataDir, 'sandbox'),
    })
    .catch((err: NodeJS.ErrnoException) =>
      exitOnStartFailure(
        err.code === 'EADDRINUSE'
          ? new StartupError(
              `a sandbox could not listen on ${(err as { address?: string }).address}:${(err as { port?: number }).port}, which is in use: free it, or pin other ports with PATCHBAY_SANDBOX_PORTS (e.g. 4201)`,
            )
          : err,
      ),
    )
}
const sandboxed = sandbox && sandboxes ? sandbox.sandboxUrls(sandboxes) : {}
const baseUrls = Object.fromEntries(
  Object.entries(config.upstreams).map(([id, url]) => [id, url ?? sandboxed[id]]),
)
// The sandboxes' demo OAuth apps, so the sign-in pop-ups work offline.
const oauthApps = sandbox && sandboxes ? sandbox.demoOAuthApps(sandboxes) : {}
// The embedded sandboxes listen on loopback: exactly their host:port is allowed out, so an address
// a user or the operator sets elsewhere on loopback is still refused unless PATCHBAY_EGRESS_ALLOW allows it.
const egressAllow = Object.values(sandboxed).map((url) => new URL(url).host)
const service = await startService(config, { baseUrls, oauthApps, egressAllow }).catch(async (err) => {
  await sandboxes?.close()
  return exitOnStartFailure(err)
})

const out: string[] = [`Patchbay is listening on ${service.url}  (API reference: ${service.url}/docs)`]
if (service.generatedAdminKey)
  out.push(
    '',
    ...boxed([
      'A workspace was created. Its owner key is shown this once: keep it (only its hash is stored).',
      '',
      `    ${service.generatedAdminKey}`,
    ]),
  )
if (service.ownerSetupUrl)
  out.push(
    '',
    ...boxed([
      'No one owns the workspace yet. The first person to open this link (once) becomes its owner:',
      '',
      `    ${service.ownerSetupUrl}`,
    ]),
  )
if (sandbox && sandboxes)
  out.push(
    '',
    'Sandbox upstreams (in-process, for trying agents offline):',
    sandbox.describeSandboxes(sandboxes),
  )
console.log(out.join('\n'))

/** Lines in a frame, so the one-time admin key stands apart from everything else printed. */
function boxed(lines: string[]): string[] {
  const width = Math.max(...lines.map((l) => l.length))
  return [
    `┌${'─'.repeat(width + 2)}┐`,
    ...lines.map((l) => `│ ${l.padEnd(width)} │`),
    `└${'─'.repeat(width + 2)}┘`,
  ]
}

/** However a stop goes, the process is gone this long after the signal. */
const STOP_LIMIT_MS = 15_000
let stopping = false
const stop = async () => {
  if (stopping) return
  stopping = true
  // Streams end, requests and claimed work under way get up to 10 s (engine), then the process exits.
  setTimeout(() => process.exit(1), STOP_LIMIT_MS).unref()
  try {
    await service.close()
    await sandboxes?.close()
  } finally {
    process.exit(0)
  }
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
