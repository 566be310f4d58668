// The one error model of Patchbay. Every failure a caller can see is a PatchbayError with a code,
// a message that says what was wrong and what to do, and the HTTP status it is served with.

export interface UpstreamErrorInfo {
  status: number
  /** A short excerpt of the upstream's answer, with every credential removed. */
  body?: string
}

export interface ErrorBody {
  error: {
    code: string
    message: string
    hint?: string
    retryAfterMs?: number
    upstream?: UpstreamErrorInfo
    details?: unknown
  }
}

export interface PatchbayErrorOptions {
  hint?: string
  retryAfterMs?: number
  upstream?: UpstreamErrorInfo
  details?: unknown
  cause?: unknown
}

export class PatchbayError extends Error {
  readonly code: string
  readonly status: number
  readonly hint?: string
  readonly retryAfterMs?: number
  readonly upstream?: UpstreamErrorInfo
  readonly details?: unknown

  constructor(status: number, code: string, message: string, opts: PatchbayErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause })
    this.name = 'PatchbayError'
    this.status = status
    this.code = code
    this.hint = opts.hint
    this.retryAfterMs = opts.retryAfterMs
    this.upstream = opts.upstream
    this.details = opts.details
  }

  toBody(): ErrorBody {
    const error: ErrorBody['error'] = { code: this.code, message: this.message }
    if (this.hint) error.hint = this.hint
    if (this.retryAfterMs !== undefined) error.retryAfterMs = this.retryAfterMs
    if (this.upstream) error.upstream = this.upstream
    if (this.details !== undefined) error.details = this.details
    return { error }
  }
}

export const badRequest = (code: string, message: string, opts?: PatchbayErrorOptions) =>
  new PatchbayError(400, code, message, opts)
export const notFound = (code: string, message: string, opts?: PatchbayErrorOptions) =>
  new PatchbayError(404, code, message, opts)

/** A validation failure naming each offending field (`input.idList: Required`). */
export function validationError(
  issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>,
  prefix: string,
): PatchbayError {
  const parts = issues.map((i) => {
    const field = [prefix, ...i.path.map(String)].filter(Boolean).join('.')
    return { field, message: i.message }
  })
  const summary = parts.map((p) => `${p.field || 'body'}: ${p.message}`).join('; ')
  return new PatchbayError(400, 'VALIDATION_FAILED', `Invalid ${prefix || 'request'}: ${summary}`, {
    hint: 'Correct the named fields and send the request again.',
    details: parts,
  })
}
