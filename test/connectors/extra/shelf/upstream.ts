// The shelf connector's upstream, for the tests: one account, items on shelves, in memory.
import http from 'node:http'

export interface ShelfUpstream {
  url: string
  apiKey: string
  /** Puts an item on a shelf. */
  put(shelf: string, id: string, name: string): void
  /** The paths it was asked for. */
  requests: string[]
  close(): Promise<void>
}

export async function startShelfUpstream(): Promise<ShelfUpstream> {
  const apiKey = `shelf-key-${Math.random().toString(36).slice(2)}`
  const shelves = new Map<string, Array<{ id: string; name: string; shelf: string }>>()
  const requests: string[] = []
  let madeCount = 0
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    requests.push(path)
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    if (req.headers['x-shelf-key'] !== apiKey) return send(401, { error: 'bad key' })
    if (path === '/me') return send(200, { id: 'acct-1', name: 'Shelf keeper' })
    const m = /^\/shelves\/([^/]+)\/items(?:\/([^/]+))?$/.exec(path)
    if (!m) return send(404, { error: 'no such path' })
    const shelf = decodeURIComponent(m[1])
    const items = shelves.get(shelf) ?? []
    if (!m[2] && req.method === 'POST') {
      let body = ''
      req.on('data', (c) => (body += c))
      req.on('end', () => {
        const made = { id: `it-${++madeCount}`, name: String(JSON.parse(body).name), shelf }
        shelves.set(shelf, [...items, made])
        send(201, made)
      })
      return
    }
    if (!m[2]) return send(200, items)
    const found = items.find((i) => i.id === decodeURIComponent(m[2]))
    return found ? send(200, found) : send(404, { error: 'no such item' })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}`,
    apiKey,
    requests,
    put: (shelf, id, name) => shelves.set(shelf, [...(shelves.get(shelf) ?? []), { id, name, shelf }]),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}
