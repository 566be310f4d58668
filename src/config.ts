// Every setting Patchbay reads, in one Zod schema: each environment variable with what it expects,
// its default and its meaning. loadConfig checks them all at once and reports every problem, one
// line each (the variable, its value shown safely, what was expected); main.ts prints those lines
// and exits 2. The configuration table in docs/configuration.md is checked against `settings` by a test.
import net from 'node:net'
import path from 'node:path'
import { z } from 'zod'
import { type PinnedPorts, parseSandboxPorts } from '../sandbox/ports.ts'
import { connectors } from './connectors/index.ts'
import { parseAllowList } from './kit/egress.ts'

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export interface Config {
  port: number
  host: string
  /** The address upstreams and browsers reach this service at (webhook callbacks, OAuth). */
  publicUrl: string | null
  dataDir: string
  databaseUrl: string | null
  /** The most connections of the PostgreSQL pool of one instance. */
  databasePoolSize: number
  /** PostgreSQL: whether statements that ask to be prepared are (PATCHBAY_DATABASE_PREPARED_STATEMENTS). */
  databasePreparedStatements: boolean
  redisUrl: string | null
  /** Prefix of every Redis key Patchbay writes (several deployments may share one Redis). */
  redisPrefix: string
  /** While Redis is away: the share of each pacing budget this instance uses on its own. */
  redisOutagePacingShare: number
  /** The embedded database: below this much free disk (MiB), new work is refused. */
  minFreeDiskMb: number
  masterKey: string | null
  previousMasterKeys: string[]
  adminKey: string | null
  /** Each connector's configured API address (PATCHBAY_<ID>_URL), by connector id; null: the sandbox's. */
  upstreams: Record<string, string | null>
  upstreamTimeoutMs: number
  upstreamRetries: number
  /** Pacing budgets of ready-made steps per connector, overriding the connector's default. */
  pacing: Record<string, { points: number; durationMs: number }>
  logLevel: LogLevel
  /** `pretty` (human-readable) or `json`; unset: pretty when stdout is a terminal. */
  logFormat: 'pretty' | 'json'
  /** Bearer token `/metrics` asks for; null leaves `/metrics` off. */
  metricsToken: string | null
  /** Where OpenTelemetry traces are sent (OTLP/HTTP); null: tracing is off and not loaded. */
  tracing: { url: string; serviceName: string } | null
  /** Result cache and coalescing of lookups per connector (contact-data), overriding its defaults. */
  lookups: Record<string, { cacheTtlMs?: number; cacheMaxEntries?: number; coalesceWindowMs?: number }>
  /** Push deliveries: waits between attempts (the last one dead-letters), timeout, retry scan. */
  deliveryRetryScheduleMs: number[] | undefined
  deliveryTimeoutMs: number
  deliveryScanMs: number
  /** The shortest poll interval a polled trigger may ask for. */
  minPollIntervalMs: number
  /** Causation depth at which a tool run is refused (the loop guard). */
  loopDepthLimit: number
  /** How often upstream webhooks are reconciled (one instance at a time). */
  reconcileIntervalMs: number
  /** How often a connection with triggers is checked upstream (engine/connections/connection-health.ts). */
  connectionCheckMs: number
  /** Deliveries waiting on an instance at which its ingress answers 503 with Retry-After. */
  deliveryBacklogLimit: number
  /** Patchbay's OAuth app per connector, for sign-in flows (PATCHBAY_<ID>_CLIENT_ID / _CLIENT_SECRET). */
  oauthApps: Record<string, { clientId: string; clientSecret: string }>
  /** Upstream web addresses (authorize pages) where they differ from the API address (PATCHBAY_<ID>_WEB_URL). */
  webUrls: Record<string, string>
  /** Non-public hosts, host:port pairs and CIDR ranges Patchbay may send to (PATCHBAY_EGRESS_ALLOW). */
  egressAllow: string[]
  /** Who may make an account with a password: anyone, invited people only, or no one. */
  signup: 'open' | 'invite' | 'off'
  /** How long a person's sign-in session lasts. */
  sessionTtlMs: number
  /** SMTP for invitation mail (PATCHBAY_SMTP_URL and PATCHBAY_MAIL_FROM); null: links are copied. */
  smtp: { url: string; from: string } | null
  /** Reverse proxies whose X-Forwarded-For is believed (the client's address: sign-in limits, audit). */
  trustProxy: string[]
  /** Single sign-on with OpenID Connect; null when not configured. */
  oidc: { issuer: string; clientId: string; clientSecret: string; joinByDomain: boolean } | null
  /** The ports of the embedded sandboxes (PATCHBAY_SANDBOX_PORTS); null picks free ones. */
  sandboxPorts: PinnedPorts | null
}

/** Bad settings, one line per problem; main.ts prints them and exits 2. */
export class ConfigError extends Error {
  readonly problems: string[]
  constructor(problems: string[]) {
    super(problems.join('\n'))
    this.name = 'ConfigError'
    this.problems = problems
  }
}

/** A start that cannot go on (a database or Redis that does not answer): one line, exit 2. */
export class StartupError extends Error {
  override name = 'StartupError'
}

/** A variable's value as it may be printed: secrets hidden, passwords in URLs masked. */
export function shownSafely(name: string, value: string): string {
  if (/KEY|SECRET|TOKEN|PASSWORD/.test(name)) return `(hidden, ${value.length} characters)`
  return JSON.stringify(maskUrlPassword(value).slice(0, 200))
}

export function maskUrlPassword(value: string): string {
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/:@]*:)[^/@]*@/i, '$1***@')
}

// ---- what a value may be: each parser returns undefined for a value it refuses, and the
// setting's `expected` text says what it wanted.

const wholeNumber = (min: number, max: number) => (v: string) => {
  if (!/^\d+$/.test(v.trim())) return undefined
  const n = Number(v.trim())
  return n >= min && n <= max ? n : undefined
}

const httpUrl = (v: string) => {
  try {
    const u = new URL(v)
    return u.protocol === 'http:' || u.protocol === 'https:' ? v.replace(/\/+$/, '') : undefined
  } catch {
    return undefined
  }
}

const urlWithSchemes = (schemes: string[]) => (v: string) => {
  try {
    return schemes.includes(new URL(v).protocol) ? v : undefined
  } catch {
    return undefined
  }
}

/** An IP address, or a host name made of letters, digits, hyphens and dots (not all digits). */
const hostAddress = (v: string) => {
  if (net.isIP(v)) return v
  if (/^[\d.]+$/.test(v)) return undefined
  return /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(v)
    ? v
    : undefined
}

const anything = (v: string) => v

const DURATION_UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** `30m`, `12h`, `14d` (or seconds: `3600s`) → milliseconds, from `min` to `max`. */
const duration = (minMs: number, maxMs: number) => (v: string) => {
  const m = /^(\d+)\s*([smhd])$/i.exec(v.trim())
  if (!m) return undefined
  const ms = Number(m[1]) * DURATION_UNITS[m[2].toLowerCase()]
  return ms >= minMs && ms <= maxMs ? ms : undefined
}

/** An IP address or a CIDR range (`10.0.0.0/8`, `fd00::/8`). */
const ipOrRange = (v: string) => {
  const [ip, bits, extra] = v.split('/')
  if (extra !== undefined || !net.isIP(ip)) return undefined
  if (bits === undefined) return v
  const max = net.isIPv4(ip) ? 32 : 128
  return /^\d+$/.test(bits) && Number(bits) <= max ? v : undefined
}

/** `a@b.example` or `Patchbay <a@b.example>`. */
const mailbox = (v: string) =>
  /^([^<>]*<)?[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+>?$/.test(v.trim()) && v.includes('<') === v.includes('>')
    ? v.trim()
    : undefined

const oneOf =
  <T extends string>(values: readonly T[]) =>
  (v: string) =>
    (values as readonly string[]).includes(v.trim().toLowerCase()) ? (v.trim().toLowerCase() as T) : undefined

/** `100/10000`: requests per milliseconds. */
const budget = (v: string) => {
  const m = /^(\d+)\/(\d+)$/.exec(v.trim())
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) return undefined
  return { points: Number(m[1]), durationMs: Number(m[2]) }
}

const millisecondsList = (v: string) => {
  const parts = v.split(',').map((p) => p.trim())
  return parts.every((p) => /^\d+$/.test(p)) ? parts.map(Number) : undefined
}

const base64Key = (v: string) => (Buffer.from(v.trim(), 'base64').length === 32 ? v.trim() : undefined)

const commaList = (check: (v: string) => string | undefined) => (v: string) => {
  const parts = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  return parts.every((p) => check(p) !== undefined) ? parts : undefined
}

export interface Setting {
  /** Shown in the table of docs/configuration.md. */
  default: string
  meaning: string
  /** What a good value looks like, for the error line. */
  expected: string
  /** The value read, or undefined (or a thrown Error saying why) when it is refused. */
  parse: (value: string) => unknown
}

const setting = (
  def: string,
  meaning: string,
  expected: string,
  parse: (value: string) => unknown,
): Setting => ({ default: def, meaning, expected, parse })

const MS = 'a whole number of milliseconds'
// The connectors' settings come from the connectors list: each connector with an upstream of its
// own (not one named by each connection, as the http connector's) has its address, OAuth app and
// pacing; one that declares web pages its web address; one with lookups its cache and coalescing.
const upstreamConnectors = connectors.filter((c) => !c.baseUrlFrom)
const connectorIds = upstreamConnectors.map((c) => c.id)
const names = Object.fromEntries(upstreamConnectors.map((c) => [c.id, c.name.toLowerCase()]))
const settingName = (id: string, what: string) => `PATCHBAY_${id.toUpperCase()}_${what}`

/** Every variable Patchbay reads. */
export const settings: Record<string, Setting> = {
  PORT: setting('`8080`', 'HTTP port', 'a port number from 0 to 65535', wholeNumber(0, 65535)),
  HOST: setting(
    '`127.0.0.1`',
    'address to listen on (`0.0.0.0` for all interfaces)',
    'an IP address (e.g. 127.0.0.1, 0.0.0.0, ::) or a host name',
    hostAddress,
  ),
  PATCHBAY_PUBLIC_URL: setting(
    '—',
    'the address upstreams and browsers reach Patchbay at (webhook callbacks, OAuth redirects)',
    'an http:// or https:// address, e.g. https://patchbay.example.com',
    httpUrl,
  ),
  PATCHBAY_DATA_DIR: setting(
    '`./data`',
    'where the embedded SQLite database and the generated master key file live',
    'a directory path',
    anything,
  ),
  PATCHBAY_DATABASE_URL: setting(
    '—',
    'PostgreSQL URL; when set, PostgreSQL is the store instead of SQLite',
    'a PostgreSQL address postgres://user:password@host:5432/database (unset for the embedded SQLite)',
    urlWithSchemes(['postgres:', 'postgresql:']),
  ),
  PATCHBAY_DATABASE_POOL_SIZE: setting(
    '`10`',
    "the most PostgreSQL connections an instance opens for its queries (besides one that listens for changes and three of the job queue); size it so that instances × (this + 4) stays under the server's max_connections",
    'a whole number from 1 to 1000',
    wholeNumber(1, 1000),
  ),
  PATCHBAY_DATABASE_PREPARED_STATEMENTS: setting(
    '`on`',
    "`on`: the event path's busiest PostgreSQL statements are prepared once on each connection and then run by name (less work for the database at every webhook); `off` sends every statement unprepared, for a connection pooler in transaction mode that does not track prepared statements (PgBouncer before 1.21, or without `max_prepared_statements`)",
    'on or off',
    oneOf(['on', 'off'] as const),
  ),
  REDIS_URL: setting(
    '—',
    "Redis: when set, ready-made steps' pacing budgets live there, so every instance sharing a token shares its budget (a sliding log in one Lua script); lookup results are shared (a lookup paid for on one instance is a cache hit on the others); changes between instances travel over its pub/sub",
    'a Redis address redis://host:6379 or rediss://…',
    urlWithSchemes(['redis:', 'rediss:']),
  ),
  PATCHBAY_REDIS_PREFIX: setting(
    '`patchbay:`',
    'prefix of every Redis key Patchbay writes (to share one Redis between deployments)',
    'a non-empty prefix',
    (v) => (v.trim() ? v.trim() : undefined),
  ),
  PATCHBAY_REDIS_OUTAGE_PACING_SHARE: setting(
    '`0.25`',
    "while Redis is away, each instance paces ready-made steps on its own with this share of each credential's budget (so up to 1/share instances together stay within it; 0.25: four), and goes back to the shared budget by itself when Redis answers. Set it to 1 ÷ the number of instances",
    'a number above 0 and at most 1, e.g. 0.25',
    (v) => {
      const n = Number(v.trim())
      return /^\d*\.?\d+$/.test(v.trim()) && n > 0 && n <= 1 ? n : undefined
    },
  ),
  PATCHBAY_MIN_FREE_DISK_MB: setting(
    '`32`',
    'the embedded database: when the disk of `PATCHBAY_DATA_DIR` has less free space than this many MiB, new work is refused (webhook deliveries `503` with `Retry-After`, API writes `507` `STORAGE_FULL`, `/readyz` not ready) before the disk is full, and taken again by itself once there is room; `0` refuses only when the disk is full',
    'a whole number of MiB from 0 to 1048576',
    wholeNumber(0, 1_048_576),
  ),
  PATCHBAY_MASTER_KEY: setting(
    'generated',
    "base64 of 32 bytes: the vault's key. Unset: a key file `master.key` (mode 0600) is generated in the data directory",
    'the base64 of exactly 32 bytes (openssl rand -base64 32)',
    base64Key,
  ),
  PATCHBAY_PREVIOUS_MASTER_KEYS: setting(
    '—',
    'comma-separated older master keys, still used to read secrets sealed before a rotation',
    'comma-separated base64 keys of 32 bytes each',
    commaList(base64Key),
  ),
  PATCHBAY_ADMIN_KEY: setting(
    'generated',
    'the workspace admin key to create on first start (otherwise one is generated and printed once)',
    'a key of at least 16 characters',
    (v) => (v.trim().length >= 16 ? v.trim() : undefined),
  ),
  ...Object.fromEntries(
    connectorIds.map((id) => [
      settingName(id, 'URL'),
      setting(
        'sandbox',
        `${names[id]} API base address; unset runs the sandbox ${names[id]} in-process`,
        'an http:// or https:// address',
        httpUrl,
      ),
    ]),
  ),
  ...Object.fromEntries(
    upstreamConnectors.flatMap((c) =>
      c.webPages
        ? [
            [
              settingName(c.id, 'WEB_URL'),
              setting(
                'the API address',
                `the ${names[c.id]}'s web address (${c.webPages})`,
                'an http:// or https:// address',
                httpUrl,
              ),
            ],
          ]
        : [],
    ),
  ),
  ...Object.fromEntries(
    upstreamConnectors.flatMap((c) => [
      [
        settingName(c.id, 'CLIENT_ID'),
        setting(
          c.auth.some((a) => a.oauth) ? 'sandbox demo app' : '—',
          `Patchbay's ${names[c.id]} OAuth app (with \`${settingName(c.id, 'CLIENT_SECRET')}\`), for sign-ins`,
          'the OAuth app id',
          anything,
        ),
      ],
      [
        settingName(c.id, 'CLIENT_SECRET'),
        setting(
          c.auth.some((a) => a.oauth) ? 'sandbox demo app' : '—',
          `the secret of Patchbay's ${names[c.id]} OAuth app`,
          'the OAuth app secret',
          anything,
        ),
      ],
      [
        settingName(c.id, 'PACING'),
        setting(
          c.pacing ? `\`${c.pacing.points}/${c.pacing.durationMs}\`` : "the connector's",
          `pacing budget per ${names[c.id]} credential, shared by ready-made steps and trigger polls: requests/milliseconds`,
          'requests/milliseconds, e.g. 100/10000',
          budget,
        ),
      ],
    ]),
  ),
  ...Object.fromEntries(
    upstreamConnectors.flatMap((c) =>
      c.lookups
        ? [
            [
              settingName(c.id, 'CACHE_TTL_MS'),
              setting(
                `\`${c.lookups.cacheTtlMs}\``,
                "how long a lookup result is served from the connection's cache; `0` turns the cache off",
                MS,
                wholeNumber(0, Number.MAX_SAFE_INTEGER),
              ),
            ],
            [
              settingName(c.id, 'CACHE_MAX_ENTRIES'),
              setting(
                `\`${c.lookups.cacheMaxEntries}\``,
                'lookup results kept per connection',
                'a whole number',
                wholeNumber(0, Number.MAX_SAFE_INTEGER),
              ),
            ],
            [
              settingName(c.id, 'COALESCE_MS'),
              setting(
                `\`${c.lookups.coalesceWindowMs}\``,
                'how long a single lookup waits for others to share a bulk call; `0` turns coalescing off',
                MS,
                wholeNumber(0, Number.MAX_SAFE_INTEGER),
              ),
            ],
          ]
        : [],
    ),
  ),
  PATCHBAY_UPSTREAM_TIMEOUT_MS: setting(
    '`15000`',
    'per-request timeout for upstream calls',
    MS,
    wholeNumber(1, 600_000),
  ),
  PATCHBAY_UPSTREAM_RETRIES: setting(
    '`3`',
    'retries of a failed upstream request (idempotent requests on 5xx and network errors; any request on 429)',
    'a whole number from 0 to 10',
    wholeNumber(0, 10),
  ),
  PATCHBAY_DELIVERY_RETRY_SCHEDULE_MS: setting(
    '`5000,300000,1800000,7200000,18000000,36000000,36000000`',
    'waits between push delivery attempts; after the last, a delivery is dead-lettered',
    'comma-separated milliseconds, e.g. 5000,300000',
    millisecondsList,
  ),
  PATCHBAY_DELIVERY_TIMEOUT_MS: setting(
    '`10000`',
    'how long an agent endpoint has to answer a push',
    MS,
    wholeNumber(1, 600_000),
  ),
  PATCHBAY_DELIVERY_SCAN_MS: setting(
    '`1000`',
    'how often due retries are looked for',
    MS,
    wholeNumber(1, 3_600_000),
  ),
  PATCHBAY_MIN_POLL_INTERVAL_MS: setting(
    '`10000`',
    'the shortest poll interval a polled trigger may ask for',
    MS,
    wholeNumber(0, Number.MAX_SAFE_INTEGER),
  ),
  PATCHBAY_LOOP_DEPTH_LIMIT: setting(
    '`3`',
    "the loop guard: a tool run for an event caused at this depth by the workspace's own tool runs is refused (`LOOP_DETECTED` on its delivery)",
    'a whole number, e.g. 3',
    wholeNumber(1, 1000),
  ),
  PATCHBAY_DELIVERY_BACKLOG_LIMIT: setting(
    '`1000`',
    "backpressure: when this many deliveries to agents are waiting to be sent (or running) on an instance, its ingress answers upstreams that send a refused delivery again (the task-board) `503` with `Retry-After` (`DELIVERY_BACKLOG_FULL`) instead of accepting, so the backlog and the end-to-end latency stay bounded; the code-host, which does not send again, is always accepted. The backlog is shown at `GET /v1/delivery-backlog`, on the dashboard's Deliveries tab and in `/metrics`",
    'a whole number, e.g. 1000',
    wholeNumber(1, 10_000_000),
  ),
  PATCHBAY_RECONCILE_INTERVAL_MS: setting(
    '`900000`',
    'how often upstream webhooks are checked against the stored ones, by one instance at a time (a lease in the store): missing ones registered again, a connection the upstream refuses marked lapsed and its webhooks `missing`',
    MS,
    wholeNumber(1, Number.MAX_SAFE_INTEGER),
  ),
  PATCHBAY_CONNECTION_CHECK_MS: setting(
    '`25000`',
    'how often a connection that has triggers is asked upstream about its account (one request, paced within its budget, claimed so several instances make one check; skipped while its steps, its polls or (task-board) its webhook deliveries prove it alive): a revoked or expired credential is seen within two intervals, the connection `lapsed` and its triggers `paused`',
    MS,
    wholeNumber(100, Number.MAX_SAFE_INTEGER),
  ),
  PATCHBAY_EGRESS_ALLOW: setting(
    "— (`npm start`: its embedded sandboxes' `host:port`)",
    'non-public hosts Patchbay may send to: comma-separated host names (`*.corp.example`), `host:port`, IPs or CIDR ranges (`10.0.0.0/8`). Link-local and metadata addresses are never allowed. See [Security](security.md#security)',
    'comma-separated hosts, host:port pairs or CIDR ranges, e.g. 10.0.0.0/8,git.corp.example',
    (v) => {
      const entries = v.split(/[\s,]+/).filter(Boolean)
      parseAllowList(entries)
      return entries
    },
  ),
  PATCHBAY_TRUST_PROXY: setting(
    '— (the connecting address is the client’s)',
    "the reverse proxies in front of Patchbay (comma-separated IPs or CIDR ranges): from a request they pass on, the client's address is read from `X-Forwarded-For`. It is what failed sign-ins are limited by and what the audit log and the sessions list show; without it every person behind one proxy shares the proxy's address",
    'comma-separated IP addresses or CIDR ranges, e.g. 127.0.0.1,10.0.0.0/8',
    commaList(ipOrRange),
  ),
  PATCHBAY_SIGNUP: setting(
    '`invite`',
    'who may make an account with a password (`POST /v1/auth/sign-up`): `open` (anyone), `invite` (only with an invitation token, for its email) or `off` (no one; invitations are accepted by existing accounts or single sign-on)',
    'open, invite or off',
    oneOf(['open', 'invite', 'off'] as const),
  ),
  PATCHBAY_SESSION_TTL: setting(
    '`14d`',
    "how long a person's sign-in session (the dashboard's cookie) lasts from sign-in: a number with `m`, `h` or `d`",
    'a duration from 5m to 365d, e.g. 12h or 14d',
    duration(5 * 60_000, 365 * 86_400_000),
  ),
  PATCHBAY_SMTP_URL: setting(
    '— (invitation links are copied, not mailed)',
    'the SMTP server invitations are mailed through (with `PATCHBAY_MAIL_FROM`): `smtp://user:password@host:587` (STARTTLS when offered) or `smtps://…:465`',
    'an smtp:// or smtps:// address, e.g. smtps://user:password@mail.example.com:465',
    urlWithSchemes(['smtp:', 'smtps:']),
  ),
  PATCHBAY_MAIL_FROM: setting(
    '—',
    'the sender of the mail Patchbay sends (required with `PATCHBAY_SMTP_URL`)',
    'an email address, or Name <address>',
    mailbox,
  ),
  PATCHBAY_OIDC_ISSUER: setting(
    '— (single sign-on off)',
    'the OpenID Connect provider people sign in with (its issuer address; with `PATCHBAY_OIDC_CLIENT_ID` and `PATCHBAY_OIDC_CLIENT_SECRET`). Register `<PATCHBAY_PUBLIC_URL>/v1/auth/sso/callback` as the redirect address there',
    'an https:// (or http://) issuer address, exactly as the provider names itself, e.g. https://login.example.com',
    // Kept as given: the issuer is compared exactly, trailing slash included.
    urlWithSchemes(['http:', 'https:']),
  ),
  PATCHBAY_OIDC_CLIENT_ID: setting(
    '—',
    "Patchbay's client id at the OpenID Connect provider",
    'the client id',
    anything,
  ),
  PATCHBAY_OIDC_CLIENT_SECRET: setting(
    '—',
    "Patchbay's client secret at the OpenID Connect provider",
    'the client secret',
    anything,
  ),
  PATCHBAY_OIDC_JOIN_BY_DOMAIN: setting(
    '`false`',
    "`true` lets a person whose email the provider verified join, as `member`, every workspace whose settings claim the email's domain (`emailDomain`); otherwise single sign-on admits invited people and existing accounts only (and anyone with `PATCHBAY_SIGNUP=open`)",
    'true or false',
    oneOf(['true', 'false'] as const),
  ),
  PATCHBAY_SANDBOX_PORTS: setting(
    '— (free ports, new on every start)',
    "pins the ports of `npm start`'s embedded sandboxes (and `npm run sandbox`'s): one base port (`4101`: task-board on it, code-host on the next, contact-data on the one after) or three (`4101,4102,4103`), on 127.0.0.1",
    'one base port from 1 to 65533, or three different ports, e.g. 4101 or 4101,4102,4103',
    parseSandboxPorts,
  ),
  LOG_LEVEL: setting(
    '`info`',
    'the least severe log lines written: `fatal`, `error`, `warn`, `info`, `debug` (adds one line per request), `trace` or `silent`',
    `one of ${LOG_LEVELS.join(', ')}`,
    oneOf(LOG_LEVELS),
  ),
  LOG_FORMAT: setting(
    '`pretty` on a terminal, else `json`',
    'log lines as readable text (`pretty`) or one JSON object per line (`json`)',
    'pretty or json',
    oneOf(['pretty', 'json'] as const),
  ),
  PATCHBAY_METRICS_TOKEN: setting(
    '— (`/metrics` off)',
    'turns on Prometheus metrics at `/metrics`, readable with `Authorization: Bearer <token>`',
    'a token of at least 16 characters',
    (v) => (v.trim().length >= 16 ? v.trim() : undefined),
  ),
  OTEL_EXPORTER_OTLP_ENDPOINT: setting(
    '— (tracing off)',
    'turns on OpenTelemetry traces, sent over OTLP/HTTP (JSON) to this address + `/v1/traces`',
    'an http:// or https:// address, e.g. http://127.0.0.1:4318',
    httpUrl,
  ),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: setting(
    '— (`OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`)',
    'the full address traces are sent to, over the one above',
    'an http:// or https:// address, e.g. http://127.0.0.1:4318/v1/traces',
    httpUrl,
  ),
  OTEL_SERVICE_NAME: setting(
    '`patchbay`',
    'the `service.name` of the traces',
    'a name of 1 to 100 characters',
    (v) => (v.trim().length >= 1 && v.trim().length <= 100 ? v.trim() : undefined),
  ),
}

/** The schema over the whole environment: every variable optional, each checked by its setting. */
export const environmentSchema = z.object(
  Object.fromEntries(
    Object.entries(settings).map(([name, s]) => [
      name,
      z
        .string()
        .optional()
        .transform((v, ctx) => {
          if (v === undefined || v === '') return undefined
          let out: unknown
          let why = ''
          try {
            out = s.parse(v)
          } catch (err) {
            why = ` (${(err as Error).message})`
          }
          if (out === undefined)
            ctx.addIssue({
              code: 'custom',
              message: `${name}=${shownSafely(name, v)}: expected ${s.expected}${why}`,
            })
          return out
        }),
    ]),
  ),
)

/** Reads and checks every setting; throws ConfigError listing every problem. */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  opts: { stdoutIsTerminal?: boolean } = {},
): Config {
  const parsed = environmentSchema.safeParse(env)
  const problems = parsed.success ? [] : parsed.error.issues.map((i) => i.message)
  // The settings' parsed values, each of its own type: the schema is built from the settings table
  // (one entry per variable), so TypeScript cannot name them one by one here.
  // biome-ignore lint/suspicious/noExplicitAny: values typed by the settings table, read by name below
  const v = (parsed.success ? parsed.data : {}) as Record<string, any>
  const oauthApps: Config['oauthApps'] = {}
  for (const id of connectorIds) {
    const p = `PATCHBAY_${id.toUpperCase()}_CLIENT_`
    const clientId = env[`${p}ID`]
    const clientSecret = env[`${p}SECRET`]
    if (clientId && clientSecret) oauthApps[id] = { clientId, clientSecret }
    else if (clientId || clientSecret)
      problems.push(
        `${clientId ? `${p}SECRET` : `${p}ID`} is not set: expected ${p}ID and ${p}SECRET together`,
      )
  }
  const oidcNames = ['PATCHBAY_OIDC_ISSUER', 'PATCHBAY_OIDC_CLIENT_ID', 'PATCHBAY_OIDC_CLIENT_SECRET']
  const oidcMissing = oidcNames.filter((n) => !env[n])
  if (oidcMissing.length > 0 && oidcMissing.length < oidcNames.length)
    problems.push(`${oidcMissing.join(' and ')} not set: expected ${oidcNames.join(', ')} together`)
  if (env.PATCHBAY_SMTP_URL && !env.PATCHBAY_MAIL_FROM)
    problems.push(
      'PATCHBAY_MAIL_FROM is not set: expected it with PATCHBAY_SMTP_URL (the sender of invitations)',
    )
  const pinned = v.PATCHBAY_SANDBOX_PORTS as PinnedPorts | undefined
  const servicePort = (v.PORT as number | undefined) ?? 8080
  if (pinned && Object.values(pinned).includes(servicePort))
    problems.push(
      `PATCHBAY_SANDBOX_PORTS=${shownSafely('PATCHBAY_SANDBOX_PORTS', String(env.PATCHBAY_SANDBOX_PORTS))}: expected ports other than PORT (${servicePort}), which Patchbay itself listens on`,
    )
  if (problems.length > 0) throw new ConfigError(problems)

  const pacing: Config['pacing'] = {}
  for (const id of connectorIds) {
    const b = v[`PATCHBAY_${id.toUpperCase()}_PACING`]
    if (b) pacing[id] = b
  }
  const lookups: Config['lookups'] = {}
  const webUrls: Config['webUrls'] = {}
  for (const c of upstreamConnectors) {
    const t = {
      cacheTtlMs: v[settingName(c.id, 'CACHE_TTL_MS')],
      cacheMaxEntries: v[settingName(c.id, 'CACHE_MAX_ENTRIES')],
      coalesceWindowMs: v[settingName(c.id, 'COALESCE_MS')],
    }
    if (c.lookups && Object.values(t).some((x) => x !== undefined)) lookups[c.id] = t
    const w = c.webPages ? v[settingName(c.id, 'WEB_URL')] : undefined
    if (w) webUrls[c.id] = w
  }
  return {
    port: v.PORT ?? 8080,
    host: v.HOST ?? '127.0.0.1',
    publicUrl: v.PATCHBAY_PUBLIC_URL ?? null,
    dataDir: path.resolve(v.PATCHBAY_DATA_DIR ?? './data'),
    databaseUrl: v.PATCHBAY_DATABASE_URL ?? null,
    databasePoolSize: v.PATCHBAY_DATABASE_POOL_SIZE ?? 10,
    databasePreparedStatements: v.PATCHBAY_DATABASE_PREPARED_STATEMENTS !== 'off',
    redisUrl: v.REDIS_URL ?? null,
    redisPrefix: v.PATCHBAY_REDIS_PREFIX ?? 'patchbay:',
    redisOutagePacingShare: v.PATCHBAY_REDIS_OUTAGE_PACING_SHARE ?? 0.25,
    minFreeDiskMb: v.PATCHBAY_MIN_FREE_DISK_MB ?? 32,
    masterKey: v.PATCHBAY_MASTER_KEY ?? null,
    previousMasterKeys: v.PATCHBAY_PREVIOUS_MASTER_KEYS ?? [],
    adminKey: v.PATCHBAY_ADMIN_KEY ?? null,
    upstreams: Object.fromEntries(connectorIds.map((id) => [id, v[settingName(id, 'URL')] ?? null])),
    upstreamTimeoutMs: v.PATCHBAY_UPSTREAM_TIMEOUT_MS ?? 15_000,
    upstreamRetries: v.PATCHBAY_UPSTREAM_RETRIES ?? 3,
    pacing,
    logLevel: v.LOG_LEVEL ?? 'info',
    logFormat: v.LOG_FORMAT ?? ((opts.stdoutIsTerminal ?? process.stdout.isTTY) ? 'pretty' : 'json'),
    metricsToken: v.PATCHBAY_METRICS_TOKEN ?? null,
    tracing:
      v.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || v.OTEL_EXPORTER_OTLP_ENDPOINT
        ? {
            url:
              (v.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as string | undefined) ??
              `${String(v.OTEL_EXPORTER_OTLP_ENDPOINT).replace(/\/+$/, '')}/v1/traces`,
            serviceName: (v.OTEL_SERVICE_NAME as string | undefined) ?? 'patchbay',
          }
        : null,
    lookups,
    deliveryRetryScheduleMs: v.PATCHBAY_DELIVERY_RETRY_SCHEDULE_MS,
    deliveryTimeoutMs: v.PATCHBAY_DELIVERY_TIMEOUT_MS ?? 10_000,
    deliveryScanMs: v.PATCHBAY_DELIVERY_SCAN_MS ?? 1_000,
    minPollIntervalMs: v.PATCHBAY_MIN_POLL_INTERVAL_MS ?? 10_000,
    loopDepthLimit: v.PATCHBAY_LOOP_DEPTH_LIMIT ?? 3,
    reconcileIntervalMs: v.PATCHBAY_RECONCILE_INTERVAL_MS ?? 900_000,
    connectionCheckMs: v.PATCHBAY_CONNECTION_CHECK_MS ?? 25_000,
    deliveryBacklogLimit: v.PATCHBAY_DELIVERY_BACKLOG_LIMIT ?? 1_000,
    oauthApps,
    webUrls,
    egressAllow: v.PATCHBAY_EGRESS_ALLOW ?? [],
    trustProxy: v.PATCHBAY_TRUST_PROXY ?? [],
    signup: v.PATCHBAY_SIGNUP ?? 'invite',
    sessionTtlMs: v.PATCHBAY_SESSION_TTL ?? 14 * 86_400_000,
    smtp: v.PATCHBAY_SMTP_URL ? { url: v.PATCHBAY_SMTP_URL, from: v.PATCHBAY_MAIL_FROM } : null,
    oidc: v.PATCHBAY_OIDC_ISSUER
      ? {
          issuer: v.PATCHBAY_OIDC_ISSUER,
          clientId: env.PATCHBAY_OIDC_CLIENT_ID!,
          clientSecret: env.PATCHBAY_OIDC_CLIENT_SECRET!,
          joinByDomain: v.PATCHBAY_OIDC_JOIN_BY_DOMAIN === 'true',
        }
      : null,
    sandboxPorts: v.PATCHBAY_SANDBOX_PORTS ?? null,
  }
}

/** The configuration table of docs/configuration.md, from `settings` (npm run docs:config writes it). */
export function configTable(): string {
  const rows = Object.entries(settings).map(([name, s]) => `| \`${name}\` | ${s.default} | ${s.meaning} |`)
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n')
}
