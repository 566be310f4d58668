// For tests that run Patchbay as `npm start` does (src/main.ts in a child process): a free port to
// give it, its API with a key, and a wait until it is up.
import type { ChildProcess } from 'node:child_process'
import net from 'node:net'
import { eventually } from './receiver.ts'

/** A port nothing listens on right now. */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port
      s.close(() => resolve(p))
    })
  })

export type Api = (
  method: string,
  path: string,
  body?: unknown,
  base?: string,
) => Promise<{ status: number; body: any }>

/** Calls a Patchbay API at `base()` (or the base given per call) with `key` (or `key()`, when it is known only later); answers the status and JSON body. */
export function keyedApi(base: () => string, key: string | (() => string)): Api {
  return async (method, path, body, at = base()) => {
    const res = await fetch(at + path, {
      method,
      headers: {
        authorization: `Bearer ${typeof key === 'function' ? key() : key}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    })
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : null }
  }
}

/** Calls the API of the Patchbay on `port` with `adminKey`. */
export function adminApi(port: () => number, adminKey: string): Api {
  return keyedApi(() => `http://127.0.0.1:${port()}`, adminKey)
}

/** Patchbay's process ended before it answered: a port taken meanwhile, or a failed start. */
export class ExitedBeforeHealthy extends Error {}

/** What src/main.ts prints once its server listens (with any LOG_LEVEL). */
const LISTENING = 'Patchbay is listening on '

/**
 * Waits until the Patchbay at `url` answers /readyz (a loaded machine can take a while to start
 * it); when its `child` process is given and ends first, fails at once with how it ended.
 *
 * A port found free can be taken by another test's server before the child listens on it; that
 * server then answers /readyz in the child's place. So when the child's stdout is a pipe, it must
 * also have printed that it listens (on `url`'s port): only then is the answer its own.
 */
export async function untilHealthy(url: string, child?: ChildProcess, timeoutMs = 120_000): Promise<void> {
  const ended = () =>
    child && (child.exitCode !== null || child.signalCode !== null)
      ? `code ${child.exitCode ?? child.signalCode}`
      : null
  let printed = ''
  child?.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    printed += chunk
  })
  const port = new URL(url).port
  const listens = () => !child?.stdout || new RegExp(`${LISTENING}https?://[^\\s]*:${port}\\b`).test(printed)
  await eventually(
    async () =>
      ended() !== null ||
      (listens() &&
        // Ready, not only listening: until the start is done the API answers 503 SERVICE_STARTING.
        (await fetch(`${url}/readyz`)
          .then((r) => r.ok)
          .catch(() => false))),
    (ok) => ok,
    timeoutMs,
  )
  const how = ended()
  if (how) throw new ExitedBeforeHealthy(`Patchbay for ${url} exited (${how}) before it answered /readyz`)
}

/**
 * Starts Patchbay with `spawnAt(port)` on a port found free, and waits until it is ready. The port
 * can be taken by another test before the child listens on it: the child then exits, and another
 * port is tried (a start that fails for another reason fails all three times). `spawnAt` must
 * pipe the child's stdout (see untilHealthy).
 */
export async function startOnFreePort(
  spawnAt: (port: number) => ChildProcess,
): Promise<{ child: ChildProcess; port: number; url: string }> {
  for (let tries = 1; ; tries++) {
    const port = await freePort()
    const child = spawnAt(port)
    const url = `http://127.0.0.1:${port}`
    try {
      await untilHealthy(url, child)
      return { child, port, url }
    } catch (err) {
      if (!(err instanceof ExitedBeforeHealthy) || tries === 3) throw err
    }
  }
}
