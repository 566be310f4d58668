// What every part of the emulator shares: the common emulator shell, the current store (replaced
// on reset, so always read `ctx.store` at call time), addresses, settings and the error type.
import type { Emulator } from '../common/emulator-app.ts'
import type { Conclusion, Store, User } from './store.ts'

export interface RunSettings {
  /** Sandbox-clock milliseconds a run stays queued, then in progress. */
  queuedMs: number
  inProgressMs: number
  defaultConclusion: Conclusion
  /** When false, runs stay in progress until completed through the control API. */
  autoComplete: boolean
}

export interface Ctx {
  emulator: Emulator
  store: Store
  /** API base, e.g. http://127.0.0.1:PORT (set once listening). */
  url: string
  webUrl: string
  runSettings: RunSettings
}

export const DOCS = 'https://docs.codehost.com/rest'

export interface FieldError {
  resource?: string
  field?: string
  code: string
  message?: string
  value?: unknown
}

/** Thrown anywhere below a route; the route wrapper writes it as the code-host does. */
export class ApiError extends Error {
  status: number
  /** Field errors, or plain sentences (the code host answers some refusals that way). */
  errors: Array<FieldError | string> | undefined
  docs: string
  headers: Record<string, string>

  constructor(
    status: number,
    message: string,
    errors?: Array<FieldError | string>,
    docs = DOCS,
    headers: Record<string, string> = {},
  ) {
    super(message)
    this.status = status
    this.errors = errors
    this.docs = docs
    this.headers = headers
  }
}

export const notFound = (): ApiError => new ApiError(404, 'Not Found')

export function validationFailed(
  errors: Array<FieldError | string>,
  message = 'Validation Failed',
): ApiError {
  return new ApiError(422, message, errors)
}

/** GitHub's wording for a missing required body parameter. */
export function missingParam(name: string): ApiError {
  return new ApiError(422, `Invalid request.\n\n"${name}" wasn't supplied.`)
}

export interface Actor {
  user: User
}
