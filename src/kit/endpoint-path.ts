// The rules that keep an API Call step on its connector's base address: the endpoint is a path,
// never a URL, and nothing in it can climb out of the base or smuggle a header.
//
// The path is normalized once: each segment decoded once, checked, and encoded again the one
// canonical way. Every check (scope attribution, credit budgets, the sandbox-control refusal)
// compares the decoded segments, and the canonical path is what goes upstream, so what was
// checked is what is sent. Spellings an upstream could read as something else are refused
// rather than guessed at: encoded dots, slashes, backslashes and percent signs, `;` path
// parameters (`..;/`), and fullwidth or ideographic dots.
import { PatchbayError } from './errors.ts'

/** The longest endpoint (path and query) an API Call step takes. */
export const ENDPOINT_MAX_LENGTH = 4096

export interface ParsedEndpoint {
  /** The canonical path sent upstream: the segments below, each encoded one way. */
  path: string
  /** The decoded segments (no empty ones; a trailing slash is kept in `path` only). */
  segments: string[]
  query: Record<string, string>
}

const HINT =
  "Give the endpoint as a path below the connector's base address, such as /1/cards/{id}; put query parameters in the query field."

/** Characters some servers read as a dot (NFKC leaves the ideographic ones alone). */
const LOOKALIKE_DOTS = /[\u3002\uff0e\uff61\ufe12\ufe52\u2024\u2025\u2026]/

export function parseEndpointPath(endpoint: string): ParsedEndpoint {
  const refuse = (why: string) =>
    new PatchbayError('INVALID_ENDPOINT', `The endpoint "${printable(endpoint)}" is refused: ${why}.`, {
      hint: HINT,
    })
  if (typeof endpoint !== 'string' || endpoint.trim() === '') throw refuse('it is empty')
  if (endpoint.length > ENDPOINT_MAX_LENGTH)
    throw refuse(`it is ${endpoint.length} characters long; at most ${ENDPOINT_MAX_LENGTH} are taken`)
  if (/^[a-z][a-z0-9+.-]*:/i.test(endpoint)) throw refuse('it is a URL; only paths are allowed')
  if (!endpoint.startsWith('/')) throw refuse('it must start with /')

  const [rawPath, rawQuery = ''] = splitOnce(endpoint, '?')
  if (rawPath.includes('#') || rawQuery.includes('#')) throw refuse('it contains a fragment (#)')
  if (/[\r\n]/.test(rawPath)) throw refuse('it contains a line break')
  if (rawPath.includes('\\')) throw refuse('it contains a backslash')
  if (rawPath.includes('//')) throw refuse('it contains an empty segment (//)')

  const raw = rawPath.slice(1).split('/')
  const trailingSlash = raw.length > 1 && raw[raw.length - 1] === ''
  if (trailingSlash) raw.pop()
  const segments: string[] = []
  for (const r of raw) {
    if (/%(2e|2f|5c|25|3b)/i.test(r))
      throw refuse('it percent-encodes a dot, slash, backslash, percent sign or semicolon')
    let seg: string
    try {
      seg = decodeURIComponent(r)
    } catch {
      throw refuse('it contains a malformed percent-encoding')
    }
    if (/[\r\n]/.test(seg)) throw refuse('it contains a line break')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
    if (/[\u0000-\u001f\u007f]/.test(seg)) throw refuse('it contains a control character')
    if (seg === '.' || seg === '..') throw refuse('it contains a relative segment (. or ..)')
    if (seg.includes(';'))
      throw refuse('it contains a ; (servers read path parameters such as ..; differently)')
    if (LOOKALIKE_DOTS.test(seg) || seg.normalize('NFKC') !== seg.normalize('NFC'))
      throw refuse(
        'it contains a fullwidth, ideographic or compatibility character some servers read as another',
      )
    segments.push(seg)
  }
  if (/[\r\n]/.test(decodeSafe(rawQuery))) throw refuse('its query contains a line break')
  // The sandbox upstreams keep their control API beside the emulated one; no agent may reach it.
  const first = segments[0] === '1' ? segments[1] : segments[0]
  if (first?.toLowerCase() === '_sandbox') throw refuse("it names the sandbox's control API")
  const path = `/${segments.map(encodeSegment).join('/')}${trailingSlash ? '/' : ''}`
  return { path, segments, query: Object.fromEntries(new URLSearchParams(rawQuery)) }
}

/** One segment encoded the canonical way: as encodeURIComponent, keeping :@,=+$& readable. */
function encodeSegment(s: string): string {
  return encodeURIComponent(s).replace(/%(3A|40|2C|3D|2B|24|26)/g, (m) => decodeURIComponent(m))
}

function splitOnce(s: string, sep: string): [string, string?] {
  const i = s.indexOf(sep)
  return i < 0 ? [s] : [s.slice(0, i), s.slice(i + 1)]
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

function printable(s: string): string {
  return String(s)
    .replace(/[\r\n]/g, (c) => (c === '\r' ? '\\r' : '\\n'))
    .slice(0, 200)
}
