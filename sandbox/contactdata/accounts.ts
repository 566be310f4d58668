// API accounts: key, plan, credit balance and the per-minute request window the plan allows.
import type { Clock } from '../common/clock.ts'
import { RateWindow, type WindowState } from '../common/rate-window.ts'
import { Rng } from '../common/rng.ts'

export const PLAN_LIMITS: Record<string, number> = { free: 10, basic: 60, pro: 300, enterprise: 1000 }
export const DEFAULT_PER_MINUTE = 60
const MINUTE_MS = 60_000

/** The fixed demo account, the same on every start so docs and local configs can name its key. */
export const DEMO_ACCOUNT = {
  apiKey: 'cd_demo_4Rk8Lw2XnP5tQv7H9mZc',
  name: 'Patchbay Demo Workspace',
  plan: 'pro',
  credits: 10_000,
} as const

export interface Account {
  apiKey: string
  name: string
  plan: string
  credits: { remaining: number; used: number }
}

interface LimitOverride {
  perMinute?: number
  windowMs?: number
}

export class Accounts {
  #clock: Clock
  #accounts = new Map<string, Account>()
  #windows = new Map<string, RateWindow>()
  #overrideAll: LimitOverride = {}
  #overrideByKey = new Map<string, LimitOverride>()
  // Generated keys follow a seeded sequence so a test run that creates accounts sees the same keys.
  #keyRng = new Rng(0x5eed)

  constructor(clock: Clock) {
    this.#clock = clock
    this.reset()
  }

  reset(): void {
    this.#accounts.clear()
    this.#windows.clear()
    this.#overrideAll = {}
    this.#overrideByKey.clear()
    this.#keyRng = new Rng(0x5eed)
    this.create({ ...DEMO_ACCOUNT })
  }

  /** The accounts (keys, plans, credits used) for a state file; rate windows start afresh. */
  snapshot() {
    return {
      accounts: this.#accounts,
      overrideAll: this.#overrideAll,
      overrideByKey: this.#overrideByKey,
      keyRng: this.#keyRng.state,
    }
  }

  restore(state: ReturnType<Accounts['snapshot']>): void {
    this.#accounts = state.accounts
    this.#overrideAll = state.overrideAll
    this.#overrideByKey = state.overrideByKey
    this.#keyRng = new Rng(state.keyRng)
    this.#windows.clear()
  }

  get(apiKey: string | undefined): Account | undefined {
    return apiKey ? this.#accounts.get(apiKey) : undefined
  }

  list(): Account[] {
    return [...this.#accounts.values()]
  }

  /** Returns null when the key is taken. */
  create(opts: { name: string; plan?: string; credits?: number; apiKey?: string }): Account | null {
    const apiKey = opts.apiKey ?? `cd_sbx_${this.#keyRng.alnum(24)}`
    if (this.#accounts.has(apiKey)) return null
    const account: Account = {
      apiKey,
      name: opts.name,
      plan: opts.plan ?? 'basic',
      credits: { remaining: opts.credits ?? 1000, used: 0 },
    }
    this.#accounts.set(apiKey, account)
    return account
  }

  charge(account: Account, credits: number): void {
    account.credits.remaining -= credits
    account.credits.used += credits
  }

  /** Counts one request in the account's current window. */
  hit(account: Account): WindowState {
    return this.#window(account).hit(account.apiKey)
  }

  peek(account: Account): WindowState {
    return this.#window(account).peek(account.apiKey)
  }

  limitsFor(account: Account): { perMinute: number; windowMs: number } {
    const o = { ...this.#overrideAll, ...this.#overrideByKey.get(account.apiKey) }
    return {
      perMinute: o.perMinute ?? PLAN_LIMITS[account.plan] ?? DEFAULT_PER_MINUTE,
      windowMs: o.windowMs ?? MINUTE_MS,
    }
  }

  /** Overrides the plan limits for one key, or for every account when no key is given. */
  overrideLimits(apiKey: string | undefined, o: LimitOverride): void {
    if (apiKey) this.#overrideByKey.set(apiKey, { ...this.#overrideByKey.get(apiKey), ...o })
    else {
      this.#overrideAll = { ...this.#overrideAll, ...o }
      this.#overrideByKey.clear()
    }
    // Windows restart under the new limits, as they would after a plan change.
    if (apiKey) this.#windows.delete(apiKey)
    else this.#windows.clear()
  }

  clearLimitOverrides(): void {
    this.#overrideAll = {}
    this.#overrideByKey.clear()
    this.#windows.clear()
  }

  #window(account: Account): RateWindow {
    const { perMinute, windowMs } = this.limitsFor(account)
    let w = this.#windows.get(account.apiKey)
    if (!w) {
      w = new RateWindow(this.#clock, perMinute, windowMs)
      this.#windows.set(account.apiKey, w)
    }
    return w
  }
}
