// When and how long to wait before trying an upstream request again: one policy for every
// connector (in the manner of Octokit's retry plugin), so no step retries by hand.

export interface RetryPolicy {
  /** Retries after the first attempt. */
  retries: number
  baseDelayMs: number
  maxDelayMs: number
}

export const defaultRetryPolicy: RetryPolicy = { retries: 3, baseDelayMs: 200, maxDelayMs: 10_000 }

const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'])

export function isIdempotent(method: string, declared?: boolean): boolean {
  return declared ?? IDEMPOTENT_METHODS.has(method.toUpperCase())
}

/**
 * Whether a failed attempt may be retried. A 429 means the upstream did no work, so any method
 * may be retried; a 5xx or a broken connection may have done the work, so only idempotent ones.
 */
export function shouldRetry(
  outcome: { status?: number; networkError?: boolean },
  idempotent: boolean,
): boolean {
  if (outcome.status === 429) return true
  if (!idempotent) return false
  if (outcome.networkError) return true
  return outcome.status !== undefined && outcome.status >= 500
}

/** Exponential backoff with full jitter, or the upstream's own wait when it gave one. */
export function retryDelayMs(policy: RetryPolicy, retry: number, upstreamWaitMs?: number): number {
  if (upstreamWaitMs !== undefined) return Math.min(upstreamWaitMs, policy.maxDelayMs)
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry)
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2)
}

/** Retry-After as seconds or an HTTP date, in milliseconds from now. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}
