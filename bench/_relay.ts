// The bare relay: the least any receive-verify-push hop costs on this machine, for bench/events.ts
// to hold Patchbay against in the same run. node:http in, the task-board's webhook signature
// checked (HMAC-SHA1 over body + callback address, as Patchbay's ingress checks it), answered 200,
// then the body pushed, signed as Standard Webhooks sign (HMAC-SHA256), with undici to the agent
// endpoint — no storage, no matching, no retries. Run as a child process like Patchbay:
//   node bench/_relay.ts <port> <agent-url> <task-board secret> [public base]
// (the public base: the balancer's address when several relays stand behind one, as the task-board
// signs the address it delivers to).
// GET /v1/delivery-backlog answers the pushes on their way, as Patchbay's route does.
//
// It holds back as Patchbay's ingress does by default (DEFAULT_DELIVERY_BACKLOG_LIMIT, 1,000 pushes
// under way; a growing share refused from half of that): a refused delivery is answered 503 with
// Retry-After and the senders send it again. Without it, at 256 senders the relay took deliveries
// faster than the agent endpoint, which shares the benchmark's process with the senders, took its
// pushes: it accepted 5,136/s and delivered 2,813/s with 9,107 still on their way at the end, so its
// delivered/s measured that endpoint's share of the process, not the hop.
import { createHmac, timingSafeEqual } from 'node:crypto'
import http from 'node:http'
import { Agent, request } from 'undici'

const [port, agentUrl, secret, publicBase] = process.argv.slice(2)
const target = new URL(agentUrl)
const pool = new Agent({ connections: 256 })
const pushSecret = Buffer.from('bench-relay-signing-secret')
let inFlight = 0
let n = 0
const BACKLOG_LIMIT = 1_000
const REFUSALS_FROM = BACKLOG_LIMIT / 2
let refusalsOwed = 0
/** Whether to refuse this delivery: none below half the limit, then a share growing to all at it. */
function holdBack(): boolean {
  if (inFlight < REFUSALS_FROM) {
    refusalsOwed = 0
    return false
  }
  refusalsOwed += Math.min(1, (inFlight - REFUSALS_FROM) / (BACKLOG_LIMIT - REFUSALS_FROM))
  if (refusalsOwed < 1) return false
  refusalsOwed -= 1
  return true
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ backlog: inFlight }))
    return
  }
  if (holdBack()) {
    req.resume()
    res.writeHead(503, { 'retry-after': '1' }).end()
    return
  }
  const chunks: Buffer[] = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString()
    const callback = `${publicBase ?? `http://${req.headers.host}`}${req.url}`
    const want = createHmac('sha1', secret)
      .update(body + callback)
      .digest()
    const got = Buffer.from(String(req.headers['x-taskboard-webhook'] ?? ''), 'base64')
    if (got.length !== want.length || !timingSafeEqual(got, want)) {
      res.writeHead(401).end()
      return
    }
    res.writeHead(200).end()
    const id = `msg_${process.pid}_${n++}`
    const timestamp = Math.floor(Date.now() / 1000)
    const signature = createHmac('sha256', pushSecret).update(`${id}.${timestamp}.${body}`).digest('base64')
    inFlight++
    request(target, {
      method: 'POST',
      dispatcher: pool,
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': `v1,${signature}`,
      },
      body,
    })
      .then((r) => r.body.dump())
      .catch(() => {})
      .finally(() => inFlight--)
  })
})
server.listen(Number(port), '127.0.0.1')
process.on('SIGTERM', () => server.close(() => process.exit(0)))
