// The task-board emulator: a local stand-in for the classic task-board REST API v1 (keys and
// tokens, boards, lists, cards, checklists, labels, actions, notifications, webhooks, the token
// page and OAuth 1.0a), with a control API under /_sandbox for tests.
import { createEmulator, type Emulator, listen } from '../common/emulator-app.ts'
import { ADMIN_PATH, registerAdminPage } from './admin-page.ts'
import { registerControl } from './control.ts'
import { sendError } from './errors.ts'
import { registerOAuth1 } from './oauth1.ts'
import { RateLimits } from './rate-limits.ts'
import { registerApi } from './routes/api.ts'
import type { Deps } from './routes/helpers.ts'
import { DEMO, seedDemo } from './seed.ts'
import { Store } from './store.ts'
import { registerTokenPage } from './token-page.ts'
import { registerWebPages } from './web-pages.ts'
import { WebhookHub } from './webhooks.ts'

export interface TaskboardSandbox {
  /** API base; every API path starts with /1/. */
  url: string
  /** Base of /1/authorize and the OAuth 1.0a pages. */
  authUrl: string
  /** Base of page addresses /b/{shortLink}/{slug} and /c/{shortLink}/{slug} (+ .json). */
  webUrl: string
  /** The extension admin page, where a member makes an extension and copies its API key. */
  adminUrl: string
  demo: {
    key: string
    secret: string
    token: string
    /** The demo member's password (the token page and the extension admin page ask for it). */
    password: string
    memberId: string
    username: string
    fullName: string
    boardId: string
    listIds: string[]
  }
  emulator: Emulator
  close(): Promise<void>
}

const DEFAULT_WEBHOOK_TIMEOUT_MS = 30_000

const SINGULAR =
  /^\/1\/(action|board|card|checklist|label|list|member|notification|organization|token|webhook)(?=\/|\?|$)/i

/** `/1/member/me` → `/1/members/me`: the service takes either spelling of a model's path. */
export function singularToPlural(url: string): string {
  return url.replace(SINGULAR, (_m, model: string) => `/1/${model}s`)
}

export async function startTaskboardSandbox(
  opts: { port?: number; host?: string; stateFile?: string } = {},
): Promise<TaskboardSandbox> {
  // The shell needs the reset hook before the store exists; it only runs on a control call.
  let deps: Deps | undefined
  const emulator = createEmulator({
    sendError,
    ignoreTrailingSlash: true,
    // The classic API's paths match in any case (`/1/checklists/{id}/checkitems`) and name a
    // model in the singular too (`/1/member/me`, `/1/card/{id}`).
    caseInsensitive: true,
    rewriteUrl: singularToPlural,
    reset: () => {
      if (!deps) return
      deps.store.reset()
      deps.limits.reset()
      deps.hub.timeoutMs = DEFAULT_WEBHOOK_TIMEOUT_MS
    },
  })
  const store = new Store(emulator.clock, seedDemo)
  const hub = new WebhookHub(store, emulator)
  hub.timeoutMs = DEFAULT_WEBHOOK_TIMEOUT_MS
  deps = { store, hub, limits: new RateLimits(emulator.clock), emulator }

  registerApi(emulator.app, deps)
  registerTokenPage(emulator.app, deps)
  registerOAuth1(emulator.app, deps)
  registerWebPages(emulator.app, deps)
  registerAdminPage(emulator.app, deps, () => store.webUrl)
  registerControl(emulator.app, deps)

  // The demo's ids, read from the fresh seed: seeding is the same on every start, so they hold for
  // a kept state too (even one where the demo board was renamed).
  const demoMember = store.findMember(DEMO.username)!
  const demoBoard = [...store.boards.values()].find((b) => b.name === 'Demo Board')!
  const listIds = [...store.lists.values()]
    .filter((l) => l.idBoard === demoBoard.id)
    .sort((a, b) => a.pos - b.pos)
    .map((l) => l.id)
  if (opts.stateFile) emulator.persistTo(opts.stateFile, store)

  const base = await listen(emulator.app, opts.port ?? 0, opts.host)
  store.webUrl = base

  return {
    url: base,
    authUrl: base,
    webUrl: base,
    adminUrl: `${base}${ADMIN_PATH}`,
    demo: {
      key: DEMO.key,
      secret: DEMO.secret,
      token: DEMO.token,
      password: DEMO.password,
      memberId: demoMember.id,
      username: DEMO.username,
      fullName: DEMO.fullName,
      boardId: demoBoard.id,
      listIds,
    },
    emulator,
    async close() {
      hub.closed = true
      // Pending retries would otherwise hold the process open for minutes after a close.
      emulator.webhooks.stop()
      await emulator.app.close()
    },
  }
}

export { DEMO } from './seed.ts'
