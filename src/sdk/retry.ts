// RATE_LIMITED means an upstream refused for now; the spec leaves retrying to the caller, "with
// increasing delays". This does that: exponential delays, never shorter than the retryAfterMs
// Patchbay passes on, and only for RATE_LIMITED (anything else is thrown at once).
import { isRateLimited, type PatchbayApiError } from './errors.ts'

export interface RetryOptions {
  /** Retries after the first attempt (default 5). */
  retries?: number
  /** The first delay (default 500 ms); each next one is `factor` times longer. */
  baseDelayMs?: number
  factor?: number
  /** The longest backoff delay (default 30 s); a longer retryAfterMs is still honoured. */
  maxDelayMs?: number
  /** Up to this fraction is added at random to each backoff delay (default 0.2), so callers spread out. */
  jitter?: number
  /** Told before each wait. */
  onRetry?: (info: { attempt: number; delayMs: number; error: PatchbayApiError }) => void
  signal?: AbortSignal
  /** How to wait (default: a timer). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>
}

/** The delay before retry number `retry` (0 = the first retry). */
export function rateLimitDelayMs(
  retry: number,
  retryAfterMs: number | undefined,
  o: RetryOptions = {},
): number {
  const base = o.baseDelayMs ?? 500
  const factor = o.factor ?? 2
  const backoff = Math.min(o.maxDelayMs ?? 30_000, base * factor ** retry)
  const jittered = Math.round(backoff * (1 + Math.random() * (o.jitter ?? 0.2)))
  return Math.max(jittered, retryAfterMs ?? 0)
}

/** Runs `fn`, retrying it while it fails with RATE_LIMITED, up to `retries` times. */
export async function retryRateLimited<T>(
  fn: (attempt: number) => Promise<T>,
  o: RetryOptions = {},
): Promise<T> {
  const retries = o.retries ?? 5
  const sleep = o.sleep ?? defaultSleep
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt)
    } catch (err) {
      if (!isRateLimited(err) || attempt >= retries || o.signal?.aborted) throw err
      const delayMs = rateLimitDelayMs(attempt, err.retryAfterMs, o)
      o.onRetry?.({ attempt: attempt + 1, delayMs, error: err })
      await sleep(delayMs, o.signal)
    }
  }
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(done, ms)
    function done() {
      signal?.removeEventListener('abort', abort)
      resolve()
    }
    function abort() {
      clearTimeout(timer)
      reject(signal!.reason)
    }
    signal?.addEventListener('abort', abort, { once: true })
  })
}
