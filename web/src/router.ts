// Hash routes (#/connections, #/agents/agt_…): the server serves one page at /, and the OAuth
// return address keeps its query string (?connectionId=… or ?error=…) in front of the hash.
import { useEffect, useState } from 'react'

export interface Route {
  /** Path segments after "#/", e.g. ["agents", "agt_1"]. */
  parts: string[]
  query: URLSearchParams
}

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '')
  const [path, qs] = raw.split('?', 2)
  return {
    parts: path.split('/').filter(Boolean).map(decodeURIComponent),
    query: new URLSearchParams(qs ?? ''),
  }
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash))
  useEffect(() => {
    const on = () => setRoute(parseHash(location.hash))
    window.addEventListener('hashchange', on)
    return () => window.removeEventListener('hashchange', on)
  }, [])
  return route
}

export function href(...parts: string[]): string {
  return `#/${parts.map(encodeURIComponent).join('/')}`
}

export function navigate(...parts: string[]): void {
  location.hash = href(...parts)
}
