// Headers a caller hands to an API Call step: credentials never (they come from the connection),
// nothing that would change how the request is framed or where it goes, no line breaks.
import { PatchbayError } from './errors.ts'

/** Headers that carry credentials: refused with CREDENTIALS_IN_REQUEST. */
const CREDENTIAL_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'x-api-key',
  'api-key',
  'x-auth-token',
  'private-token',
  'x-access-token',
])

/** Headers the client sets itself: refused with INVALID_HEADER. */
const FRAMING_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-connection',
])

/** The headers with lower-case names, or a refusal naming the offending one. */
export function checkCallerHeaders(
  headers: Record<string, string> | undefined,
  opts: { field?: string; alsoCredentials?: string[] } = {},
): Record<string, string> {
  const field = opts.field ?? 'headers'
  const extra = new Set((opts.alsoCredentials ?? []).map((h) => h.toLowerCase()))
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers ?? {})) {
    const k = name.toLowerCase()
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(k))
      throw new PatchbayError('INVALID_HEADER', `${field}: "${name}" is not a valid header name.`, {
        hint: 'Header names are letters, digits and - (e.g. x-codehost-api-version).',
      })
    if (CREDENTIAL_HEADERS.has(k) || extra.has(k))
      throw new PatchbayError(
        'CREDENTIALS_IN_REQUEST',
        `${field}: the header "${name}" carries credentials and is refused.`,
        {
          hint: "Credentials come from the connection; remove the header (the step adds the connection's own).",
        },
      )
    if (FRAMING_HEADERS.has(k))
      throw new PatchbayError(
        'INVALID_HEADER',
        `${field}: the header "${name}" is set by Patchbay and cannot be given.`,
        {
          hint: 'Remove the header.',
        },
      )
    if (/[\r\n\0]/.test(value))
      throw new PatchbayError('INVALID_HEADER', `${field}: the value of "${name}" contains a line break.`, {
        hint: 'Header values are one line.',
      })
    out[k] = value
  }
  return out
}
