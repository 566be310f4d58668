// For tests that run Patchbay as `npm start` does (src/main.ts in a child process): a free port to
// give it, and its API with the admin key.
import net from 'node:net'

/** A port nothing listens on right now. */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port
      s.close(() => resolve(p))
    })
  })

/** Calls the API of the Patchbay on `port` with `adminKey`; answers the status and JSON body. */
export function adminApi(port: () => number, adminKey: string) {
  return async (method: string, p: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${port()}${p}`, {
      method,
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return { status: res.status, body: await res.json() }
  }
}
