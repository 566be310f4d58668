// Webhooks: creation (with the HEAD check of the callback), the models an action reaches,
// signed deliveries through the common WebhookSender, retries, and removal on 410 Gone or when
// the owning token is revoked or expires.
import { createHmac } from 'node:crypto'
import type { Emulator } from '../common/emulator-app.ts'
import type { DeliveryRecord } from '../common/webhook-sender.ts'
import { type Ctx, canRead, requireMember } from './access.ts'
import { ApiError, invalidId, invalidToken, invalidValue, notFound, unauthorized } from './errors.ts'
import { bool, HEX24, type Params, str } from './params.ts'
import type { Action, Store, Token, Webhook } from './store.ts'
import { actionView, boardView, cardView, listView, memberView, webhookView } from './views.ts'

/** Retries after 30 s, 60 s and 120 s (real time, times the sender's retryDelayScale). */
const RETRY_DELAYS_MS = [30_000, 60_000, 120_000]
const DISABLE_AFTER_FAILURES = 1000
const DISABLE_AFTER_MS = 30 * 86_400_000

export function signDelivery(secret: string, body: string, callbackURL: string): string {
  return createHmac('sha1', secret)
    .update(body + callbackURL)
    .digest('base64')
}

export class WebhookHub {
  store: Store
  emulator: Emulator
  /** How long a callback has to answer, for the HEAD check and for each delivery attempt. */
  timeoutMs = 30_000
  closed = false

  constructor(store: Store, emulator: Emulator) {
    this.store = store
    this.emulator = emulator
    store.onAction = (a) => this.dispatch(a)
    store.onTokensGone = (tokens) => {
      for (const hook of [...store.webhooks.values()])
        if (tokens.includes(hook.token)) store.webhooks.delete(hook.id)
    }
  }

  /** The token a webhook is created for: the one named in the path, else the caller's. */
  ownerToken(ctx: Ctx, pathToken?: string): Token {
    const member = requireMember(ctx, 'read')
    if (pathToken === undefined) {
      if (!ctx.token) throw unauthorized()
      return ctx.token
    }
    const token = this.store.tokens.get(pathToken)
    if (!token || token.key !== ctx.app?.key) throw invalidToken()
    if (token.idMember !== member.id) throw unauthorized()
    return token
  }

  async create(ctx: Ctx, p: Params, pathToken?: string): Promise<Webhook> {
    const token = this.ownerToken(ctx, pathToken)
    const callbackURL = this.#callbackURL(p)
    const idModel = this.#idModel(p, token)
    const description = str(p, 'description') ?? ''
    const active = bool(p, 'active') ?? true
    this.#checkDuplicate(callbackURL, idModel, token.value)
    await this.#headCheck(callbackURL)
    this.#checkDuplicate(callbackURL, idModel, token.value)
    const hook: Webhook = {
      id: this.store.newId(),
      description,
      idModel,
      callbackURL,
      active,
      consecutiveFailures: 0,
      firstConsecutiveFailDate: null,
      token: token.value,
      queue: Promise.resolve(),
    }
    this.store.webhooks.set(hook.id, hook)
    return hook
  }

  find(ctx: Ctx, rawId: string): Webhook {
    const member = requireMember(ctx, 'read')
    if (!HEX24.test(rawId)) throw invalidId()
    const hook = this.store.webhooks.get(rawId)
    if (!hook) throw notFound()
    if (this.store.tokens.get(hook.token)?.idMember !== member.id) throw unauthorized()
    return hook
  }

  async update(ctx: Ctx, rawId: string, p: Params): Promise<Webhook> {
    const hook = this.find(ctx, rawId)
    const token = this.store.tokens.get(hook.token)!
    const description = str(p, 'description')
    const active = bool(p, 'active')
    const callbackURL = p.callbackURL !== undefined ? this.#callbackURL(p) : hook.callbackURL
    const idModel = p.idModel !== undefined ? this.#idModel(p, token) : hook.idModel
    if (callbackURL !== hook.callbackURL || idModel !== hook.idModel) {
      this.#checkDuplicate(callbackURL, idModel, hook.token, hook.id)
      if (callbackURL !== hook.callbackURL) await this.#headCheck(callbackURL)
    }
    hook.callbackURL = callbackURL
    hook.idModel = idModel
    if (description !== undefined) hook.description = description
    if (active !== undefined) hook.active = active
    return hook
  }

  remove(ctx: Ctx, rawId: string): void {
    const hook = this.find(ctx, rawId)
    this.store.webhooks.delete(hook.id)
  }

  forToken(tokenValue: string): Webhook[] {
    return [...this.store.webhooks.values()].filter((h) => h.token === tokenValue)
  }

  #callbackURL(p: Params): string {
    const url = str(p, 'callbackURL', { max: 2048 })
    if (url === undefined) throw invalidValue('callbackURL')
    try {
      const u = new URL(url)
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme')
    } catch {
      throw invalidValue('callbackURL')
    }
    return url
  }

  /** A model the token's member can see: a board, list or card on a reachable board, or themself. */
  #idModel(p: Params, token: Token): string {
    const id = p.idModel
    if (typeof id !== 'string' || !HEX24.test(id)) throw invalidValue('idModel')
    const s = this.store
    const idBoard = s.boards.get(id)?.id ?? s.lists.get(id)?.idBoard ?? s.cards.get(id)?.idBoard
    if (idBoard !== undefined) {
      if (!canRead(s, token.idMember, s.boards.get(idBoard)!)) throw invalidValue('idModel')
      return id
    }
    if (id === token.idMember) return id
    throw invalidValue('idModel')
  }

  #checkDuplicate(callbackURL: string, idModel: string, token: string, except?: string): void {
    for (const h of this.store.webhooks.values()) {
      if (h.id !== except && h.callbackURL === callbackURL && h.idModel === idModel && h.token === token) {
        throw new ApiError(400, 'A webhook with that callback, model, and token already exists')
      }
    }
  }

  async #headCheck(url: string): Promise<void> {
    let status = 0
    try {
      const res = await fetch(url, {
        method: 'HEAD',
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      })
      status = res.status
    } catch {
      status = 0
    }
    if (status !== 200) throw new ApiError(400, 'URL (callbackURL) did not return 200 status code')
  }

  #modelView(id: string): unknown {
    const s = this.store
    const board = s.boards.get(id)
    if (board) return boardView(s, board)
    const card = s.cards.get(id)
    if (card) return cardView(s, card)
    const list = s.lists.get(id)
    if (list) return listView(list, null)
    const member = s.members.get(id)
    if (member) return memberView(s, member)
    return { id }
  }

  dispatch(action: Action): void {
    const s = this.store
    s.sweepExpiredTokens()
    const idBoard = (action.data.board as { id?: string } | undefined)?.id
    const board = idBoard ? s.boards.get(idBoard) : undefined
    for (const hook of s.webhooks.values()) {
      if (!hook.active || !action.models.includes(hook.idModel)) continue
      const token = s.tokens.get(hook.token)
      if (!token) continue
      // A member who has left a board stops hearing about it, even through a member webhook.
      if (board && !canRead(s, token.idMember, board)) continue
      const body = JSON.stringify({
        model: this.#modelView(hook.idModel),
        action: actionView(s, action),
        webhook: webhookView(hook),
      })
      this.#enqueue(hook, action.type, body)
    }
  }

  #enqueue(hook: Webhook, event: string, body: string): void {
    hook.queue = hook.queue
      .then(async () => {
        if (this.closed || this.store.webhooks.get(hook.id) !== hook || !hook.active) return
        const token = this.store.tokens.get(hook.token)
        const app = token ? this.store.apps.get(token.key) : undefined
        if (!app) return
        const { done } = this.emulator.webhooks.send({
          hookId: hook.id,
          url: hook.callbackURL,
          event,
          headers: { 'X-Taskboard-Webhook': signDelivery(app.secret, body, hook.callbackURL) },
          body,
          attempts: 1 + RETRY_DELAYS_MS.length,
          retryDelayMs: (n) => RETRY_DELAYS_MS[n] ?? RETRY_DELAYS_MS[RETRY_DELAYS_MS.length - 1]!,
          timeoutMs: this.timeoutMs,
        })
        this.#settle(hook, await done)
      })
      .catch(() => {})
  }

  #settle(hook: Webhook, record: DeliveryRecord): void {
    if (this.store.webhooks.get(hook.id) !== hook) return
    const now = this.store.clock.now()
    if (record.outcome === 'gone') this.store.webhooks.delete(hook.id)
    else if (record.outcome === 'delivered') {
      hook.consecutiveFailures = 0
      hook.firstConsecutiveFailDate = null
    } else if (record.outcome === 'failed') {
      hook.consecutiveFailures++
      hook.firstConsecutiveFailDate ??= now
      if (
        hook.consecutiveFailures >= DISABLE_AFTER_FAILURES &&
        now - hook.firstConsecutiveFailDate >= DISABLE_AFTER_MS
      ) {
        hook.active = false
      }
    }
  }

  /** Resolves once every queued delivery has been attempted (tests and shutdown wait on it). */
  async idle(): Promise<void> {
    await Promise.all([...this.store.webhooks.values()].map((h) => h.queue))
  }
}
