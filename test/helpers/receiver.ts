// A local agent endpoint for tests: records every push delivery, verifies it with the
// Standard Webhooks library (an implementation independent of Patchbay's signer), and can be
// told to fail.
import http from 'node:http'
import { Webhook } from 'standardwebhooks'

export interface Received {
  id: string
  body: any
  verified: boolean
  headers: http.IncomingHttpHeaders
}

export class Receiver {
  received: Received[] = []
  /** Answer this status to the next N requests (then 200). */
  failNext = 0
  failStatus = 500
  /** Answer each push this long after it arrived (a slow agent: pushes stay in flight). */
  delayMs = 0
  secret: string | null = null
  url = ''
  #server: http.Server
  #waiters: Array<() => void> = []

  constructor() {
    this.#server = http.createServer((req, res) => {
      let body = ''
      req.on('data', (c) => (body += c))
      req.on('end', () => {
        if (this.failNext > 0) {
          this.failNext--
          res.writeHead(this.failStatus).end()
          return
        }
        let verified = false
        if (this.secret) {
          try {
            new Webhook(this.secret).verify(body, req.headers as Record<string, string>)
            verified = true
          } catch {}
        }
        const answer = () => {
          this.received.push({
            id: String(req.headers['webhook-id']),
            body: JSON.parse(body),
            verified,
            headers: req.headers,
          })
          res.writeHead(200).end('ok')
          for (const w of this.#waiters.splice(0)) w()
        }
        if (this.delayMs > 0) setTimeout(answer, this.delayMs)
        else answer()
      })
    })
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.#server.listen(0, '127.0.0.1', r))
    const addr = this.#server.address() as { port: number }
    this.url = `http://127.0.0.1:${addr.port}/agent`
    return this
  }

  /** Waits until `predicate` holds over what was received (gives up after `timeoutMs`, generous for loaded machines). */
  async until(predicate: (r: Received[]) => boolean, timeoutMs = 30_000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs
    while (!predicate(this.received)) {
      if (Date.now() > deadline)
        throw new Error(
          `receiver: condition not met in ${timeoutMs} ms; got ${this.received.length} deliveries`,
        )
      await new Promise<void>((r) => {
        this.#waiters.push(r)
        setTimeout(r, 50)
      })
    }
    return this.received
  }

  triggersOf(predicate: (r: Received) => boolean = () => true): string[] {
    return this.received
      .filter(predicate)
      .map((r) => r.body.data.trigger)
      .sort()
  }

  close(): Promise<void> {
    this.#server.closeAllConnections()
    return new Promise((r) => this.#server.close(() => r()))
  }
}

/** Waits for a condition polled from anywhere (an API, the sandbox). */
export async function eventually<T>(
  fn: () => Promise<T>,
  ok: (v: T) => boolean,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await fn()
    if (ok(v)) return v
    if (Date.now() > deadline)
      throw new Error(`condition not met in ${timeoutMs} ms; last value ${JSON.stringify(v).slice(0, 500)}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/**
 * An agent endpoint for New Card pushes that answers 500 while `failing`, nothing while `holding`
 * (the answers wait in `held`), and 200 otherwise; `received` has the cards of the pushes it
 * answered 200, and `release()` answers everything held and stops holding.
 */
export function holdingAgent(initially: { holding: boolean; failing?: boolean }) {
  const agent = {
    holding: initially.holding,
    failing: initially.failing ?? false,
    held: [] as Array<() => void>,
    received: new Set<string>(),
    server: http.createServer((req, res) => {
      let body = ''
      req.on('data', (c) => (body += c))
      req.on('end', () => {
        const answer = () => {
          agent.received.add(JSON.parse(body).data.event.data.card.id)
          res.writeHead(200).end()
        }
        if (agent.failing) res.writeHead(500).end()
        else if (agent.holding) agent.held.push(answer)
        else answer()
      })
    }),
    release() {
      agent.holding = false
      for (const answer of agent.held.splice(0)) answer()
    },
  }
  return agent
}
