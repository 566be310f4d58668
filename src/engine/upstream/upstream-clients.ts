// Builds a connector's ctx.http for one set of credentials: the base address from the
// configuration, the shared keep-alive pool, the retry policy and, for ready-made steps, pacing.
import { createHash } from 'node:crypto'
import type { Dispatcher } from 'undici'
import type { Clock } from '../../kit/clock.ts'
import type { ConnectorDefinition, Credentials } from '../../kit/define.ts'
import { PatchbayError } from '../../kit/errors.ts'
import { UpstreamClient } from '../../kit/http.ts'
import type { Budget, Pacer } from '../../kit/pacer.ts'
import type { RetryPolicy } from '../../kit/retry-policy.ts'
import type { RateBudgets } from './rate-budgets.ts'

export interface UpstreamClientFactoryOptions {
  baseUrls: Record<string, string | undefined>
  dispatcher: Dispatcher
  pacer: Pacer
  timeoutMs: number
  retry: RetryPolicy
  pacing?: Record<string, Budget>
  /** Request budgets upstreams report (connector.rateBudget), tracked per credential. */
  budgets?: RateBudgets
  /** The time the waits between retries are measured in. */
  clock?: Clock
}

export class UpstreamClients {
  #o: UpstreamClientFactoryOptions
  constructor(opts: UpstreamClientFactoryOptions) {
    this.#o = opts
  }

  baseUrl(connector: ConnectorDefinition): string {
    const url = this.#o.baseUrls[connector.id]
    if (!url)
      throw new PatchbayError(
        'UPSTREAM_NOT_CONFIGURED',
        `No address is configured for the ${connector.name} upstream.`,
        {
          hint: `Set PATCHBAY_${connector.id.toUpperCase()}_URL, or leave it unset to use the built-in sandbox.`,
        },
      )
    return url
  }

  create(opts: {
    connector: ConnectorDefinition
    credentials: Credentials
    paced: boolean
    storedConnection: boolean
    onUnauthorized?: (message: string) => Promise<void> | void
    /** The connection's own rate limit (its account plan), over the configured and default pacing. */
    pacing?: Budget
    /** Sees every response's headers (credit metering). */
    onResponse?: (status: number, headers: Record<string, string>) => void
    /** Another address of the upstream than its API base (its web pages, for sign-in flows). */
    baseUrl?: string
  }): UpstreamClient {
    const { connector, credentials } = opts
    const budget = opts.pacing ?? this.defaultPacing(connector)
    const paceKey = budget ? `${connector.id}:${fingerprint(credentials)}` : ''
    // Upstreams that report their request budgets: every response is read, and ready-made
    // requests wait for a spent budget's reset (engine/rate-budgets.ts).
    const budgets = connector.rateBudget && opts.baseUrl === undefined ? this.#o.budgets : undefined
    const budgetKey = budgets ? this.budgetKey(connector, credentials) : ''
    const pacer = opts.paced && budget ? () => this.#o.pacer.wait(paceKey, budget) : undefined
    const gate =
      opts.paced && budgets
        ? (req: { method: string; path: string }) =>
            budgets.gate(connector, budgetKey, req, this.#o.retry.maxDelayMs)
        : undefined
    const onResponse = budgets
      ? (status: number, headers: Record<string, string>) => {
          budgets.record(connector, budgetKey, headers, status)
          opts.onResponse?.(status, headers)
        }
      : opts.onResponse
    return new UpstreamClient({
      connector,
      baseUrl: opts.baseUrl ?? connector.baseUrlFrom?.(credentials) ?? this.baseUrl(connector),
      credentials,
      dispatcher: this.#o.dispatcher,
      timeoutMs: this.#o.timeoutMs,
      retry: this.#o.retry,
      clock: this.#o.clock,
      // The budget's gate comes first (the client calls it before the pacer).
      gate,
      pace: pacer,
      storedConnection: opts.storedConnection,
      onUnauthorized: opts.onUnauthorized,
      onResponse,
    })
  }

  /** The key a credential's request budgets are tracked under. */
  budgetKey(connector: ConnectorDefinition, credentials: Credentials): string {
    return `${connector.id}:${fingerprint(credentials)}`
  }

  /** The pacing of a connector's ready-made steps when a connection sets none: configured, or its default. */
  defaultPacing(connector: ConnectorDefinition): Budget | undefined {
    return this.#o.pacing?.[connector.id] ?? connector.pacing
  }
}

/** Fingerprints of credentials objects: a stored connection's are one object, kept while it is cached. */
const fingerprints = new WeakMap<Credentials, string>()

/** A stable, non-reversible name for a credential, to key its pacing budget. */
function fingerprint(credentials: Credentials): string {
  let known = fingerprints.get(credentials)
  if (known === undefined) {
    const token =
      credentials.token ?? credentials.accessToken ?? credentials.apiKey ?? JSON.stringify(credentials)
    known = createHash('sha256').update(token).digest('hex').slice(0, 16)
    fingerprints.set(credentials, known)
  }
  return known
}
