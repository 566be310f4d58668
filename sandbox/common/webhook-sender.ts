// Outgoing webhook deliveries of an emulator, with each one's attempts and outcome kept for the
// control API (`GET /_sandbox/webhooks/deliveries`).
import { randomUUID } from 'node:crypto'
import type { Clock } from './clock.ts'
import type { Faults } from './faults.ts'
import { keepNewest } from './keep-newest.ts'

export interface DeliveryAttempt {
  at: string
  status: number | null
  error?: string
  durationMs: number
}

export interface DeliveryRecord {
  id: string
  hookId: string
  url: string
  event: string
  headers: Record<string, string>
  body: string
  attempts: DeliveryAttempt[]
  outcome: 'pending' | 'delivered' | 'failed' | 'dropped' | 'gone'
}

export interface SendOptions {
  hookId: string
  url: string
  event: string
  headers: Record<string, string>
  body: string
  /** Delivery id; a redelivery passes the original one. */
  id?: string
  /** How many attempts in all (1 = no retry). */
  attempts: number
  /** Delay before retry n (0-based), real milliseconds. */
  retryDelayMs: (retry: number) => number
  timeoutMs: number
}

export class WebhookSender {
  deliveries: DeliveryRecord[] = []
  /** Real-time delays between retries are multiplied by this (tests shrink it). */
  retryDelayScale = 1
  #clock: Clock
  #faults: Faults
  #maxKept = 5000
  #stopped = false
  #wakers = new Set<() => void>()

  constructor(clock: Clock, faults: Faults) {
    this.#clock = clock
    this.#faults = faults
  }

  /** Sends in the background; resolves with the record once the last attempt is done. */
  send(opts: SendOptions): { record: DeliveryRecord; done: Promise<DeliveryRecord> } {
    const record: DeliveryRecord = {
      id: opts.id ?? randomUUID(),
      hookId: opts.hookId,
      url: opts.url,
      event: opts.event,
      headers: opts.headers,
      body: opts.body,
      attempts: [],
      outcome: 'pending',
    }
    this.deliveries.push(record)
    keepNewest(this.deliveries, this.#maxKept)
    const done = this.#run(record, opts)
    return { record, done }
  }

  async #run(record: DeliveryRecord, opts: SendOptions): Promise<DeliveryRecord> {
    if (this.#faults.dropWebhook()) {
      record.outcome = 'dropped'
      return record
    }
    for (let attempt = 0; attempt < opts.attempts; attempt++) {
      if (attempt > 0) await this.#wait(opts.retryDelayMs(attempt - 1) * this.retryDelayScale)
      if (this.#stopped) break
      const started = performance.now()
      try {
        const res = await fetch(opts.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...opts.headers },
          body: opts.body,
          signal: AbortSignal.timeout(opts.timeoutMs),
        })
        await res.arrayBuffer().catch(() => undefined)
        record.attempts.push({
          at: this.#clock.iso(),
          status: res.status,
          durationMs: performance.now() - started,
        })
        if (res.status === 410) {
          record.outcome = 'gone'
          return record
        }
        if (res.ok) {
          record.outcome = 'delivered'
          return record
        }
      } catch (err) {
        record.attempts.push({
          at: this.#clock.iso(),
          status: null,
          error: (err as Error).name === 'TimeoutError' ? 'timeout' : (err as Error).message,
          durationMs: performance.now() - started,
        })
      }
    }
    record.outcome = 'failed'
    return record
  }

  /**
   * For shutdown: retry waits end at once and no further attempts are made (those deliveries end
   * as failed), so a closed emulator does not keep the process alive for minutes of retries.
   */
  stop(): void {
    this.#stopped = true
    for (const wake of this.#wakers) wake()
    this.#wakers.clear()
  }

  #wait(ms: number): Promise<void> {
    if (this.#stopped) return Promise.resolve()
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer)
        this.#wakers.delete(wake)
        resolve()
      }
      const timer = setTimeout(wake, ms)
      this.#wakers.add(wake)
    })
  }

  find(id: string): DeliveryRecord | undefined {
    return this.deliveries.find((d) => d.id === id)
  }

  reset(): void {
    this.deliveries = []
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
