// The one error model of Patchbay. Every failure a caller can see is a PatchbayError with a code
// of the registry (error-codes.ts: its HTTP status and default hint), and a message that says what
// was wrong.
import { type AlternativeStatus, ERROR_CODES, type ErrorCode } from './error-codes.ts'

export type { ErrorCode } from './error-codes.ts'

export interface UpstreamErrorInfo {
  status: number
  /** A short excerpt of the upstream's answer, with every credential removed. */
  body?: string
}

export interface ErrorBody {
  error: {
    code: ErrorCode
    message: string
    hint?: string
    retryAfterMs?: number
    upstream?: UpstreamErrorInfo
    details?: unknown
  }
}

export interface PatchbayErrorOptions<C extends ErrorCode = ErrorCode> {
  /** What to do; the registry's hint for the code when left out. */
  hint?: string
  /** Another status the registry allows for this code (most codes have one status only). */
  status?: AlternativeStatus<C>
  retryAfterMs?: number
  upstream?: UpstreamErrorInfo
  details?: unknown
  cause?: unknown
}

/**
 * A sentence that ends in a message ending in a full stop ("refused: (invalid token).. Nothing")
 * keeps one: messages are built from others, and each is a sentence of its own. Two dots that
 * are a path segment ("..") are not after a word or a closing mark, and stay.
 */
export const oneFullStop = (message: string) => message.replace(/([\w)\]"'’])\.\.(?=\s|$)/g, '$1.')

export class PatchbayError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C
  readonly status: number
  readonly hint: string
  readonly retryAfterMs?: number
  readonly upstream?: UpstreamErrorInfo
  readonly details?: unknown

  constructor(code: C, message: string, opts: PatchbayErrorOptions<C> = {}) {
    super(oneFullStop(message), opts.cause === undefined ? undefined : { cause: opts.cause })
    this.name = 'PatchbayError'
    const registered = ERROR_CODES[code]
    this.code = code
    this.status = opts.status ?? registered.status
    this.hint = oneFullStop(opts.hint ?? registered.hint)
    this.retryAfterMs = opts.retryAfterMs
    this.upstream = opts.upstream
    this.details = opts.details
  }

  toBody(): ErrorBody {
    const error: ErrorBody['error'] = { code: this.code, message: this.message, hint: this.hint }
    if (this.retryAfterMs !== undefined) error.retryAfterMs = this.retryAfterMs
    if (this.upstream) error.upstream = this.upstream
    if (this.details !== undefined) error.details = this.details
    return { error }
  }
}

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
  return new PatchbayError('VALIDATION_FAILED', `Invalid ${prefix || 'request'}: ${summary}`, {
    hint: 'Correct the named fields and send the request again.',
    details: parts,
  })
}
