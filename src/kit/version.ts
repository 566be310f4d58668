// Patchbay's own name and version, as upstreams see it: every upstream request carries
// `User-Agent: Patchbay/<version> (+<homepage>)` (kit/http.ts), which some upstreams require
// (the code host refuses a request without one with a 403).
import { readFileSync } from 'node:fs'

const pkg: { version: string; homepage?: string } = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
)

export const PATCHBAY_VERSION: string = pkg.version

/** The User-Agent of every upstream request, unless a connector names its own (ConnectorDefinition.userAgent). */
export const PATCHBAY_USER_AGENT = `Patchbay/${PATCHBAY_VERSION}${pkg.homepage ? ` (+${pkg.homepage})` : ''}`
