// The one egress guard. Every address Patchbay sends to (connector base addresses, the http
// connector's base address, agents' delivery URLs, sign-in token exchanges) goes through the
// dispatcher built here, whose connect hook checks the address actually dialled: an IP literal as
// it is, a name through the resolver, each resolved address before the socket opens. So a name
// that re-resolves to an internal address later is refused too. The same rules check addresses
// when a connection or agent is saved (`check`), so a bad one is refused with a clear error early.
//
// Never allowed: link-local and cloud metadata addresses, unspecified, broadcast and multicast
// addresses, and every IPv4-mapped, IPv4-compatible, NAT64, 6to4 and Teredo spelling of them.
// Allowed only when the operator opts in (PATCHBAY_EGRESS_ALLOW: host names, host:port, IPs or CIDR
// ranges): loopback, private, unique-local, carrier-grade NAT and other non-public ranges.
// Redirects are never followed: no interceptor here follows them, and callers map 3xx to errors.
import dns from 'node:dns'
import net from 'node:net'
import ipaddr from 'ipaddr.js'
import { Agent, buildConnector } from 'undici'
import { PatchbayError } from './errors.ts'

type Address = ipaddr.IPv4 | ipaddr.IPv6

/** What a resolver returns: the `dns.lookup(name, { all: true })` shape. */
export type Resolve = (hostname: string) => Promise<{ address: string; family: number }[]>

/** Names of cloud metadata services; refused whatever they resolve to. */
const METADATA_NAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'metadata.azure.internal',
  'instance-data',
  'instance-data.ec2.internal',
])

/** Metadata addresses outside the link-local range (which is refused as a whole). */
const METADATA_ADDRESSES = ['100.100.100.200/32', 'fd00:ec2::254/128', '192.0.0.192/32'].map((c) =>
  ipaddr.parseCIDR(c),
)

export type AddressClass =
  | { kind: 'public' }
  | { kind: 'internal'; what: string; v4?: ipaddr.IPv4 }
  | { kind: 'never'; what: string }

/** The IPv4 address an IPv6 address spells (mapped, compatible, NAT64, 6to4, Teredo), if any. */
export function embeddedIPv4(a: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = a.parts
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 255, lo >> 8, lo & 255])
  const range = a.range()
  if (range === 'ipv4Mapped' || range === 'rfc6145') return v4(p[6], p[7])
  // 64:ff9b::/96 (well-known NAT64) carries the address in its last 32 bits.
  if (a.match(ipaddr.parseCIDR('64:ff9b::/96'))) return v4(p[6], p[7])
  if (range === '6to4') return v4(p[1], p[2])
  if (range === 'teredo') return v4(~p[6] & 0xffff, ~p[7] & 0xffff)
  // IPv4-compatible (::a.b.c.d, deprecated): 96 zero bits, then anything but :: and ::1.
  if (p.slice(0, 6).every((x) => x === 0) && !(p[6] === 0 && p[7] <= 1)) return v4(p[6], p[7])
  return null
}

/** Where an address lies, by the rules above. */
export function classifyAddress(a: Address): AddressClass {
  if (METADATA_ADDRESSES.some((cidr) => a.kind() === cidr[0].kind() && a.match(cidr)))
    return { kind: 'never', what: 'a cloud metadata address' }
  if (a.kind() === 'ipv6') {
    const v4 = embeddedIPv4(a as ipaddr.IPv6)
    if (v4) {
      const inner = classifyAddress(v4)
      if (inner.kind === 'public') return inner
      const what = `${inner.what}, spelled as IPv6 (${v4.toString()})`
      return inner.kind === 'never' ? { kind: 'never', what } : { kind: 'internal', what, v4 }
    }
  }
  const range = a.range()
  switch (range) {
    case 'unicast':
      return { kind: 'public' }
    case 'linkLocal':
      return { kind: 'never', what: 'a link-local address (cloud metadata lives there)' }
    case 'unspecified':
      return { kind: 'never', what: 'an unspecified ("any") address' }
    case 'broadcast':
    case 'multicast':
      return { kind: 'never', what: `a ${range} address` }
    case 'loopback':
      return { kind: 'internal', what: 'a loopback address' }
    case 'private':
    case 'uniqueLocal':
      return { kind: 'internal', what: 'a private address' }
    default:
      return { kind: 'internal', what: `a non-public address (${range})` }
  }
}

/**
 * Why a host can never be reached, whatever the operator allows and before any resolution:
 * metadata names, and link-local, metadata, unspecified, broadcast and multicast addresses in any
 * spelling. For checks inside input schemas; the full check (EgressGuard) adds the rest.
 */
export function neverReachable(hostname: string): string | undefined {
  const host = hostname.replace(/^\[|\]$/g, '')
  if (net.isIP(host)) {
    const c = classifyAddress(ipaddr.parse(host))
    return c.kind === 'never' ? c.what : undefined
  }
  const name = normalizeName(host)
  if (METADATA_NAMES.has(name) || name.endsWith('.metadata.internal')) return 'a cloud metadata name'
  return undefined
}

/** One entry of the operator's allow list. */
type AllowEntry =
  | { type: 'cidr'; range: [Address, number]; port?: number }
  | { type: 'host'; host: string; port?: number }

/** Parses PATCHBAY_EGRESS_ALLOW's entries: `10.0.0.0/8`, `::1`, `git.corp`, `*.corp`, `127.0.0.1:4010`. */
export function parseAllowList(entries: Iterable<string>): AllowEntry[] {
  const out: AllowEntry[] = []
  for (const raw of entries) {
    const entry = raw.trim()
    if (!entry) continue
    if (entry.includes('/')) {
      try {
        out.push({ type: 'cidr', range: ipaddr.parseCIDR(entry) })
      } catch {
        throw new Error(`"${entry}" is not a CIDR range such as 10.0.0.0/8 or fd00::/8`)
      }
      continue
    }
    if (ipaddr.isValid(entry) && net.isIP(entry)) {
      const a = ipaddr.parse(entry)
      out.push({ type: 'cidr', range: [a, a.kind() === 'ipv4' ? 32 : 128] })
      continue
    }
    const m = /^(?:\[([0-9a-f:.]+)\]|([^:[\]]+)):(\d{1,5})$/i.exec(entry)
    if (m) {
      const host = (m[1] ?? m[2]).toLowerCase()
      const port = Number(m[3])
      if (port < 1 || port > 65535) throw new Error(`"${entry}" has no valid port`)
      if (net.isIP(host)) {
        const a = ipaddr.parse(host)
        out.push({ type: 'cidr', range: [a, a.kind() === 'ipv4' ? 32 : 128], port })
      } else out.push({ type: 'host', host: normalizeName(host), port })
      continue
    }
    if (!/^(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$/i.test(entry))
      throw new Error(`"${entry}" is not a host name, host:port, IP address or CIDR range`)
    out.push({ type: 'host', host: normalizeName(entry) })
  }
  return out
}

const normalizeName = (h: string) => h.toLowerCase().replace(/\.+$/, '')

/** A refusal by the guard: the address and why. */
export class EgressRefusedError extends Error {
  readonly code = 'EGRESS_REFUSED'
  readonly host: string
  readonly reason: string
  /** The PATCHBAY_EGRESS_ALLOW entry that would allow it (`host:port`), or null when nothing can. */
  readonly allowEntry: string | null
  constructor(host: string, reason: string, target?: { name: string; port: number }) {
    super(`Patchbay does not send to ${host}: it is ${reason}.`)
    this.name = 'EgressRefusedError'
    this.host = host
    this.reason = reason
    const name = target?.name.replace(/^\[|\]$/g, '')
    this.allowEntry =
      target && name && /PATCHBAY_EGRESS_ALLOW/.test(reason)
        ? `${net.isIPv6(name) ? `[${name}]` : name}:${target.port}`
        : null
  }
}

/**
 * The API error for a refused address (403 EGRESS_REFUSED): `where` names the field or setting that
 * holds it, the hint the exact PATCHBAY_EGRESS_ALLOW entry that allows it (when one can).
 */
export function egressRefused(err: EgressRefusedError, where?: string): PatchbayError {
  return new PatchbayError('EGRESS_REFUSED', `${where ? `${where}: ` : ''}${err.message} Nothing was sent.`, {
    // Link-local, metadata and unspecified addresses are never allowed: PATCHBAY_EGRESS_ALLOW would not help.
    hint: err.allowEntry
      ? `Use a public address, or have the operator allow this one: add ${err.allowEntry} (or its host, or a range holding it) to PATCHBAY_EGRESS_ALLOW (for a self-hosted installation on a private network).`
      : /link-local|metadata|unspecified|broadcast|multicast/.test(err.reason)
        ? 'Use the public address of the service; link-local, metadata and unspecified addresses are never reachable.'
        : undefined,
  })
}

/** The refusal in an error or its causes, if the guard refused. */
export function findEgressRefusal(err: unknown): EgressRefusedError | null {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++)
    if (e instanceof EgressRefusedError) return e
  return null
}

export interface EgressGuardOptions {
  /** Allow-list entries (PATCHBAY_EGRESS_ALLOW, plus what Patchbay itself starts, such as the embedded sandbox). */
  allow?: Iterable<string>
  /** Name resolution; the system resolver when absent (tests give a stub). */
  resolve?: Resolve
}

export class EgressGuard {
  #allow: AllowEntry[]
  #resolve: Resolve

  constructor(opts: EgressGuardOptions = {}) {
    this.#allow = parseAllowList(opts.allow ?? [])
    this.#resolve = opts.resolve ?? ((host) => dns.promises.lookup(host, { all: true, verbatim: true }))
  }

  /**
   * Why an address may not be dialled (undefined: it may). `name` is the host name it was
   * resolved from, if any; an allowed name lets its non-public addresses through.
   */
  refusesAddress(address: string, port: number, name?: string): string | undefined {
    let a: Address
    try {
      a = ipaddr.parse(address.replace(/^\[|\]$/g, ''))
    } catch {
      return 'not an IP address'
    }
    const c = classifyAddress(a)
    if (c.kind === 'public') return undefined
    if (c.kind === 'never') return c.what
    const plain = c.v4 ?? a
    const allowed = this.#allow.some((e) =>
      e.type === 'cidr'
        ? (e.port === undefined || e.port === port) &&
          (plain.kind() === e.range[0].kind() ? plain.match(e.range) : false)
        : name !== undefined && (e.port === undefined || e.port === port) && nameMatches(e.host, name),
    )
    return allowed ? undefined : `${c.what}, and PATCHBAY_EGRESS_ALLOW does not allow it`
  }

  /** Why a host name may not be dialled before it is even resolved (metadata names). */
  refusesName(hostname: string): string | undefined {
    return net.isIP(hostname) ? undefined : neverReachable(hostname)
  }

  /**
   * Checks an address when it is saved: the URL, its host, and every address the host resolves
   * to now (connect time checks again). Throws EGRESS_REFUSED (403) naming `where`.
   */
  async check(url: string | URL, where?: string): Promise<void> {
    const u = typeof url === 'string' ? new URL(url) : url
    const host = u.hostname.replace(/^\[|\]$/g, '')
    const port = Number(u.port) || (u.protocol === 'https:' ? 443 : 80)
    try {
      await this.#checkHost(host, port)
    } catch (err) {
      const refusal = findEgressRefusal(err)
      if (refusal) throw egressRefused(refusal, where)
      // A name that does not resolve yet is not refused: the connect-time check sees what it becomes.
    }
  }

  async #checkHost(host: string, port: number): Promise<void> {
    if (net.isIP(host)) {
      const why = this.refusesAddress(host, port)
      if (why) throw new EgressRefusedError(host, why, { name: host, port })
      return
    }
    const byName = this.refusesName(host)
    if (byName) throw new EgressRefusedError(host, byName)
    const addresses = await this.#resolve(normalizeName(host))
    if (addresses.length === 0) throw new Error(`${host} has no address`)
    for (const { address } of addresses) {
      const why = this.refusesAddress(address, port, host)
      if (why) throw new EgressRefusedError(`${host} (${address})`, why, { name: host, port })
    }
  }

  /** The lookup handed to net/tls.connect: resolves, then refuses before the socket opens. */
  #lookup(port: number) {
    return (
      hostname: string,
      options: dns.LookupOptions,
      callback: (err: Error | null, address: string | dns.LookupAddress[], family?: number) => void,
    ) => {
      const byName = this.refusesName(hostname)
      if (byName) return callback(new EgressRefusedError(hostname, byName), '')
      this.#resolve(normalizeName(hostname)).then(
        (all) => {
          const family = options.family === 4 || options.family === 6 ? options.family : 0
          const list = family ? all.filter((a) => a.family === family) : all
          for (const { address } of list) {
            const why = this.refusesAddress(address, port, hostname)
            if (why)
              return callback(
                new EgressRefusedError(`${hostname} (${address})`, why, { name: hostname, port }),
                '',
              )
          }
          if (list.length === 0) {
            const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
            return callback(err, '')
          }
          if (options.all) return callback(null, list)
          return callback(null, list[0].address, list[0].family)
        },
        (err: Error) => callback(err, ''),
      )
    }
  }

  /** An undici dispatcher whose every new connection passes the guard. */
  dispatcher(opts: ConstructorParameters<typeof Agent>[0] = {}): Agent {
    const connectors = new Map<number, buildConnector.connector>()
    const connectorFor = (port: number) => {
      let c = connectors.get(port)
      if (!c) {
        c = buildConnector({ lookup: this.#lookup(port) } as buildConnector.BuildOptions)
        connectors.set(port, c)
      }
      return c
    }
    return new Agent({
      ...opts,
      connect: (options, callback) => {
        const host = options.hostname.replace(/^\[|\]$/g, '')
        const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80)
        // An IP literal is not looked up: it is checked as it is.
        if (net.isIP(host)) {
          const why = this.refusesAddress(host, port)
          if (why) return callback(new EgressRefusedError(host, why, { name: host, port }), null)
        }
        connectorFor(port)(options, callback)
      },
    })
  }
}

function nameMatches(pattern: string, hostname: string): boolean {
  const name = normalizeName(hostname)
  return pattern.startsWith('*.') ? name.endsWith(pattern.slice(1)) : name === pattern
}
