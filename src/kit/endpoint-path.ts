// The rules that keep an API Call step on its connector's base address: the endpoint is a path,
// never a URL, and nothing in it can climb out of the base or smuggle a header.
import { PatchbayError } from './errors.ts'

export interface ParsedEndpoint {
  path: string
  query: Record<string, string>
}

const HINT =
  "Give the endpoint as a path below the connector's base address, such as /1/cards/{id}; put query parameters in the query field."

export function parseEndpointPath(endpoint: string): ParsedEndpoint {
  const refuse = (why: string) =>
    new PatchbayError('INVALID_ENDPOINT', `The endpoint "${printable(endpoint)}" is refused: ${why}.`, {
      hint: HINT,
    })
  if (typeof endpoint !== 'string' || endpoint.trim() === '') throw refuse('it is empty')
  if (/^[a-z][a-z0-9+.-]*:/i.test(endpoint)) throw refuse('it is a URL; only paths are allowed')
  if (!endpoint.startsWith('/')) throw refuse('it must start with /')

  const [rawPath, rawQuery = ''] = splitOnce(endpoint, '?')
  if (rawPath.includes('#') || rawQuery.includes('#')) throw refuse('it contains a fragment (#)')

  // Check the path as written and as every layer of percent-decoding would read it.
  let layer = rawPath
  for (let i = 0; i < 4; i++) {
    if (/[\r\n]/.test(layer)) throw refuse('it contains a line break')
    if (layer.includes('\\')) throw refuse('it contains a backslash')
    if (layer.includes('//')) throw refuse('it contains an empty segment (//)')
    if (layer.split('/').some((seg) => seg === '..' || seg === '.'))
      throw refuse('it contains a relative segment (. or ..)')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
    if (/[\u0000-\u001f\u007f]/.test(layer)) throw refuse('it contains a control character')
    let next: string
    try {
      next = decodeURIComponent(layer)
    } catch {
      throw refuse('it contains a malformed percent-encoding')
    }
    if (next === layer) break
    layer = next
  }
  if (/[\r\n]/.test(decodeSafe(rawQuery))) throw refuse('its query contains a line break')
  // The sandbox upstreams keep their control API beside the emulated one; no agent may reach it.
  if (/^\/(?:1\/)?_sandbox(?:\/|$)/i.test(layer)) throw refuse("it names the sandbox's control API")
  return { path: rawPath, query: Object.fromEntries(new URLSearchParams(rawQuery)) }
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
