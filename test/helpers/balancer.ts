// A round-robin balancer in front of several Patchbay instances, as a deployment has one shared
// public address: each request (API call, upstream webhook, sign-in callback) goes to the next
// instance in turn.
import http from 'node:http'

export interface Balancer {
  url: string
  /** Where the next requests go (instances can be replaced or taken out). */
  targets: string[]
  /** Answers other than 2xx/3xx, for explaining a failure: method, path, status. */
  refused: string[]
  close(): Promise<void>
}

export async function startBalancer(targets: string[]): Promise<Balancer> {
  let next = 0
  const balancer: Balancer = { url: '', targets: [...targets], refused: [], close: async () => {} }
  const server = http.createServer((req, res) => {
    const target = new URL(balancer.targets[next++ % balancer.targets.length])
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        if ((answer.statusCode ?? 502) >= 400)
          balancer.refused.push(`${req.method} ${req.url} → ${answer.statusCode} (${target.port})`)
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    upstream.on('error', (err) => {
      balancer.refused.push(`${req.method} ${req.url} → ${err.message} (${target.port})`)
      if (!res.headersSent) res.writeHead(502)
      res.end()
    })
    // A sender that gives up mid-request resets its socket: that ends this request, not the balancer.
    req.on('error', () => upstream.destroy())
    res.on('error', () => upstream.destroy())
    req.pipe(upstream)
  })
  // Kept open idle longer than any client keeps its end (undici closes after about 4 s, Node's
  // server after 5 s by default), as balancers do (a minute is common): with 5 s a client could send
  // on a connection in the very moment the balancer closed it, and got a reset, not an answer.
  server.keepAliveTimeout = 65_000
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  balancer.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  balancer.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections()
      server.close(() => r())
    })
  return balancer
}
