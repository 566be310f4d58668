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

/**
 * Waits until the Patchbay at `url` answers /healthz (a loaded machine can take a while to start
 * it); when its `child` process is given and ends first, fails at once with how it ended.
 */
export async function untilHealthy(url: string, child?: ChildProcess, timeoutMs = 120_000): Promise<void> {
  const ended = () =>
    child && (child.exitCode !== null || child.signalCode !== null)
      ? `code ${child.exitCode ?? child.signalCode}`
      : null
  await eventually(
    async () =>
      ended() !== null ||
      // Ready, not only listening: until the start is done the API answers 503 SERVICE_STARTING.
      (await fetch(`${url}/readyz`)
        .then((r) => r.ok)
        .catch(() => false)),
    (ok) => ok,
    timeoutMs,
  )
  const how = ended()
  if (how) throw new ExitedBeforeHealthy(`Patchbay for ${url} exited (${how}) before it answered /healthz`)
}
