// The API's one error shape as an Error: {"error":{"code","message","hint"?,"retryAfterMs"?,…}}.
import type { ErrorCode } from './contract.ts'

/** A code of the API (the table in docs/api.md), or HTTP_<status> for an answer that is not the API's. */
export type ApiErrorCode = ErrorCode | `HTTP_${number}`

export interface ApiErrorBody {
  code: ApiErrorCode
  message: string
  hint?: string
  retryAfterMs?: number
  upstream?: { status: number; body?: string }
  details?: unknown
}

export class PatchbayApiError extends Error {
  readonly status: number
  readonly code: ApiErrorCode
  readonly hint?: string
  readonly retryAfterMs?: number
  readonly upstream?: { status: number; body?: string }
  readonly details?: unknown

  constructor(status: number, body: ApiErrorBody) {
    super(body.message)
    this.name = 'PatchbayApiError'
    this.status = status
    this.code = body.code
    this.hint = body.hint
    this.retryAfterMs = body.retryAfterMs
    this.upstream = body.upstream
    this.details = body.details
  }

  /** Reads an error answer; a body that is not the API's shape still gives a code and message. */
  static async from(res: Response): Promise<PatchbayApiError> {
    const text = await res.text().catch(() => '')
    try {
      const parsed = JSON.parse(text)
      if (parsed?.error?.code) return new PatchbayApiError(res.status, parsed.error)
    } catch {}
    return new PatchbayApiError(res.status, {
      code: `HTTP_${res.status}`,
      message: `Patchbay answered ${res.status} ${res.statusText}${text ? `: ${text.slice(0, 200)}` : ''}`,
    })
  }
}

/** Whether an error is the API's rate-limit refusal (an upstream said "too many requests"). */
export const isRateLimited = (err: unknown): err is PatchbayApiError =>
  err instanceof PatchbayApiError && err.code === 'RATE_LIMITED'
