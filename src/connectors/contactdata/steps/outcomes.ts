// Turning the upstream's per-record answers into step results.
import { PatchbayError } from '../../../kit/errors.ts'

const CODES: Record<string, string> = {
  insufficient_credits: 'INSUFFICIENT_CREDITS',
  invalid_request: 'UPSTREAM_REJECTED',
}

/** A per-record error of a bulk answer, in Patchbay's codes. */
export function recordError(e: { code: string; message: string } | undefined) {
  return e ? { code: CODES[e.code] ?? 'UPSTREAM_REJECTED', message: e.message } : undefined
}

/** A single lookup whose record came back with an error (it shared a bulk call) fails like a single call would. */
export function throwRecordError(what: string, e: { code: string; message: string }): never {
  if (e.code === 'insufficient_credits')
    throw new PatchbayError('INSUFFICIENT_CREDITS', `The ${what} lookup was refused: ${e.message}.`, {
      hint: 'The contact-data account has too few credits for this lookup; nothing was charged. Add credits to the account, or use the free Search steps meanwhile.',
    })
  throw new PatchbayError('UPSTREAM_REJECTED', `The ${what} lookup was refused: ${e.message}.`, {
    hint: 'Correct the identifying fields and try again.',
  })
}
