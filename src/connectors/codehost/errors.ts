// The code-host's answers read into Patchbay's error model: its own message (with a 422's
// errors[]), rate-limit refusals (primary: remaining 0 until x-ratelimit-reset; secondary:
// retry-after), request budgets from the x-ratelimit-* headers, and names for refusals that
// deserve their own code.
import type { ClassifiedError, RateBudgetState, RateBudgetSupport, RateLimitHint } from '../../kit/define.ts'
import { parseRetryAfter } from '../../kit/retry-policy.ts'

/** An error answer (upstreams.md: `{ message, documentation_url }`, a 422 adds `errors[]`). */
interface ErrorBody {
  message?: unknown
  errors?: Array<string | { message?: string; resource?: string; field?: string; code?: string } | null>
}

export function codehostErrorMessage(_status: number, text: string): string | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return text.trim().slice(0, 200) || undefined
  }
  const j = parsed !== null && typeof parsed === 'object' ? (parsed as ErrorBody) : undefined
  if (typeof j?.message !== 'string') return undefined
  const details = Array.isArray(j.errors)
    ? j.errors
        .map((e) =>
          typeof e === 'string'
            ? e
            : (e?.message ?? [e?.resource, e?.field, e?.code].filter(Boolean).join(' ')),
        )
        .filter(Boolean)
    : []
  return details.length ? `${j.message}: ${details.join('; ')}` : j.message
}

export function codehostRateLimitHint(
  status: number,
  headers: Record<string, string>,
  text: string,
): RateLimitHint | undefined {
  if (status !== 403 && status !== 429) return undefined
  // A 403 is a rate limit only when it says so (the last request of a window can be refused for
  // a permission and still report remaining 0).
  if (status === 403 && !/rate limit/i.test(text)) return undefined
  const retryAfter = parseRetryAfter(headers['retry-after'])
  if (retryAfter !== undefined) return { retryAfterMs: retryAfter }
  if (headers['x-ratelimit-remaining'] === '0') {
    const reset = Number(headers['x-ratelimit-reset'])
    if (Number.isFinite(reset)) return { retryAfterMs: Math.max(0, reset * 1000 - Date.now()) + 250 }
    return {}
  }
  // A secondary limit without a retry-after: the upstream asks for at least a minute.
  if (/secondary rate limit/i.test(text)) return { retryAfterMs: 60_000 }
  return {}
}

const NOT_FOUND_HINT =
  'The repository or resource does not exist, or this connection cannot see it: a fine-grained token reaches only the repositories it was made for, and private repositories need the repo scope. Check owner, repo and the number or id.'

export function classifyCodehostError(status: number, text: string): ClassifiedError | undefined {
  if (status === 404) return { code: 'UPSTREAM_NOT_FOUND', hint: NOT_FOUND_HINT }
  if (status === 405 && /not mergeable/i.test(text))
    return {
      code: 'PULL_REQUEST_NOT_MERGEABLE',
      hint: 'The pull request cannot be merged as it is (closed, draft, or in conflict): resolve it first.',
    }
  if (status === 409)
    return {
      code: 'UPSTREAM_CONFLICT',
      hint: 'The resource changed since it was read (a stale sha, or a head that moved): read it again and retry.',
    }
  if (status === 403 && /not accessible by personal access token/i.test(text))
    return {
      code: 'UPSTREAM_FORBIDDEN',
      hint: 'The fine-grained token lacks the permission for this (contents, issues, pull_requests, actions …): give the token that permission, or use another connection.',
    }
  return undefined
}

const num = (v: string | undefined) => (v === undefined || v === '' ? Number.NaN : Number(v))

export const codehostRateBudget: RateBudgetSupport = {
  read: (h) => {
    const limit = num(h['x-ratelimit-limit'])
    const remaining = num(h['x-ratelimit-remaining'])
    const reset = num(h['x-ratelimit-reset'])
    if (![limit, remaining, reset].every(Number.isFinite)) return undefined
    const used = num(h['x-ratelimit-used'])
    return {
      resource: h['x-ratelimit-resource'] || 'core',
      limit,
      remaining,
      used: Number.isFinite(used) ? used : limit - remaining,
      resetAt: reset * 1000,
    }
  },
  resourceOf: ({ path }) =>
    path.startsWith('/search/') ? 'search' : path === '/graphql' ? 'graphql' : 'core',
  status: async (http) => {
    const body = await http.get<{
      resources?: Record<string, { limit?: number; remaining: number; used: number; reset: number } | null>
    }>('/rate_limit')
    const out: Record<string, RateBudgetState> = {}
    for (const [k, v] of Object.entries(body?.resources ?? {}))
      if (v && typeof v.limit === 'number')
        out[k] = { limit: v.limit, remaining: v.remaining, used: v.used, resetAt: v.reset * 1000 }
    return out
  },
}
