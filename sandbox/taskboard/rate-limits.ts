// Request budgets: 100 per 10 s per token and 300 per 10 s per key. Every API answer reports both
// budgets in x-rate-limit-api-{token,key}-* headers; over budget is a 429 with a JSON body and,
// like the real service, no Retry-After.
import type { FastifyReply } from 'fastify'
import type { Clock } from '../common/clock.ts'
import { RateWindow, type WindowState } from '../common/rate-window.ts'

export const DEFAULT_TOKEN_LIMIT = 100
export const DEFAULT_KEY_LIMIT = 300
export const DEFAULT_WINDOW_MS = 10_000

export class RateLimits {
  tokens: RateWindow
  keys: RateWindow

  constructor(clock: Clock) {
    this.tokens = new RateWindow(clock, DEFAULT_TOKEN_LIMIT, DEFAULT_WINDOW_MS)
    this.keys = new RateWindow(clock, DEFAULT_KEY_LIMIT, DEFAULT_WINDOW_MS)
  }

  configure(opts: { tokenLimit?: number; keyLimit?: number; windowMs?: number }): void {
    this.tokens.configure(opts.tokenLimit, opts.windowMs)
    this.keys.configure(opts.keyLimit, opts.windowMs)
  }

  reset(): void {
    this.tokens.configure(DEFAULT_TOKEN_LIMIT, DEFAULT_WINDOW_MS)
    this.keys.configure(DEFAULT_KEY_LIMIT, DEFAULT_WINDOW_MS)
  }

  toJSON() {
    return { tokenLimit: this.tokens.limit, keyLimit: this.keys.limit, windowMs: this.tokens.windowMs }
  }

  /**
   * Counts one request for the key and token (if any) and sets the headers. Answers the 429 itself
   * and returns false when either budget is spent; a refused request spends nothing.
   */
  admit(reply: FastifyReply, key: string, token: string | null): boolean {
    const tokenKey = token ?? `anonymous:${key}`
    const tokenPeek = this.tokens.peek(tokenKey)
    const keyPeek = this.keys.peek(key)
    let refused: string | null = null
    let tokenState = tokenPeek
    let keyState = keyPeek
    if (token !== null && !tokenPeek.allowed) refused = 'API_TOKEN_LIMIT_EXCEEDED'
    else if (!keyPeek.allowed) refused = 'API_KEY_LIMIT_EXCEEDED'
    else {
      if (token !== null) tokenState = this.tokens.hit(tokenKey)
      keyState = this.keys.hit(key)
    }
    this.setHeaders(reply, tokenState, keyState)
    if (refused) {
      void reply
        .code(429)
        .type('application/json; charset=utf-8')
        .send({ error: refused, message: 'Rate limit exceeded' })
      return false
    }
    return true
  }

  /**
   * Headers for an answer that spent nothing (a failed authentication). The budgets shown are
   * full ones: counting windows for made-up keys would let bogus requests grow memory.
   */
  setIdleHeaders(reply: FastifyReply): void {
    this.setHeaders(reply, this.tokens.peek(''), this.keys.peek(''))
  }

  setHeaders(reply: FastifyReply, token: WindowState, key: WindowState): void {
    reply.header('x-rate-limit-api-token-interval-ms', String(this.tokens.windowMs))
    reply.header('x-rate-limit-api-token-max', String(token.limit))
    reply.header('x-rate-limit-api-token-remaining', String(token.remaining))
    reply.header('x-rate-limit-api-key-interval-ms', String(this.keys.windowMs))
    reply.header('x-rate-limit-api-key-max', String(key.limit))
    reply.header('x-rate-limit-api-key-remaining', String(key.remaining))
  }
}
