// The code-host sandbox: a local emulator of the code-host REST v3 API, its GraphQL slice, the
// OAuth web flow and webhooks, with a control API for tests. See README.md.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { createEmulator, type Emulator, listen } from '../common/emulator-app.ts'
import { tick } from './actions.ts'
import { ApiError, type Ctx, type RunSettings } from './context.ts'
import { registerControl } from './control.ts'
import { registerGraphql } from './graphql.ts'
import { requireUserAgent, sendError, writeApiError } from './http.ts'
import { registerOAuth } from './oauth.ts'
import { Limits, rateLimitHook, trackInFlight } from './ratelimit.ts'
import { RequestLog } from './request-log.ts'
import { registerActionRoutes } from './routes/actions.ts'
import { registerContentRoutes } from './routes/contents.ts'
import { registerGistRoutes } from './routes/gists.ts'
import { registerGitRoutes } from './routes/git.ts'
import { registerHookRoutes } from './routes/hooks.ts'
import { registerIssueRoutes } from './routes/issues.ts'
import { registerMiscRoutes } from './routes/misc.ts'
import { registerProjectRoutes } from './routes/projects.ts'
import { registerPullRoutes } from './routes/pulls.ts'
import { registerReleaseRoutes } from './routes/releases.ts'
import { registerRepoRoutes } from './routes/repos.ts'
import { registerSearchRoutes } from './routes/search.ts'
import { registerUserRoutes } from './routes/users.ts'
import { DEMO_REPO, type SeedInfo, seed } from './seed.ts'
import { Store } from './store.ts'

export interface CodehostSandbox {
  /** API base, e.g. http://127.0.0.1:PORT — REST paths like /repos/{o}/{r}, /user, /graphql. */
  url: string
  /** Base of /login/oauth/authorize and /login/oauth/access_token (the same server). */
  webUrl: string
  demo: {
    login: string
    password: string
    /** Classic token (chp_) of the demo user. */
    token: string
    oauthClientId: string
    oauthClientSecret: string
    repo: { owner: string; name: string }
  }
  emulator: Emulator
  close(): Promise<void>
}

export const DEFAULT_RUN_SETTINGS: RunSettings = {
  queuedMs: 1000,
  inProgressMs: 3000,
  defaultConclusion: 'success',
  autoComplete: true,
}

const BODY_LIMIT = 1024 * 1024

function errorHandler(err: FastifyError | ApiError, _req: FastifyRequest, reply: FastifyReply) {
  if (err instanceof ApiError) return writeApiError(reply, err)
  const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500
  if (status === 500) console.error('[codehost sandbox]', err)
  const message =
    status === 413
      ? 'Request body is too large'
      : status === 500
        ? 'Server Error'
        : status === 415
          ? 'Unsupported Media Type'
          : err.message
  return sendError(reply, status, message)
}

export async function startCodehostSandbox(
  opts: { port?: number; host?: string; stateFile?: string } = {},
): Promise<CodehostSandbox> {
  const ctx = { store: new Store(), url: '', webUrl: '', runSettings: { ...DEFAULT_RUN_SETTINGS } } as Ctx
  let info: SeedInfo | undefined
  let limits: Limits | undefined
  const requests = new RequestLog()
  const emulator = createEmulator({
    sendError: (reply, status, message) => sendError(reply, status, message),
    reset: () => {
      info = seed(ctx)
      limits?.reset()
      requests.clear()
      Object.assign(ctx.runSettings, DEFAULT_RUN_SETTINGS)
    },
    bodyLimit: BODY_LIMIT,
    // `/repositories/{id}/…` is the repository by id (where a renamed one redirects to).
    rewriteUrl: (url) => {
      const m = /^\/repositories\/(\d+)(?=\/|\?|$)/.exec(url)
      const repo = m ? ctx.store.repos.get(Number(m[1])) : undefined
      if (!m || !repo) return url
      return `/repos/${ctx.store.user(repo.ownerId).login}/${repo.name}${url.slice(m[0].length)}`
    },
  })
  ctx.emulator = emulator
  info = seed(ctx)
  // Seeding is the same on every start, so the demo credentials above hold for a kept state too.
  if (opts.stateFile)
    emulator.persistTo(opts.stateFile, {
      snapshot: () => ctx.store.snapshot(),
      restore: (state) => ctx.store.restore(state),
    })
  limits = new Limits(emulator.clock)
  const lim = limits
  trackInFlight(emulator.app, lim)

  await emulator.app.register(async (api: FastifyInstance) => {
    api.setErrorHandler(errorHandler)
    api.addHook('onSend', requests.keepAnswer)
    api.addHook('onResponse', requests.hook)
    api.addHook('onRequest', requireUserAgent)
    api.addHook('onRequest', async () => tick(ctx))
    api.addHook('onRequest', rateLimitHook(ctx, lim))
    registerUserRoutes(api, ctx)
    registerRepoRoutes(api, ctx)
    registerContentRoutes(api, ctx)
    registerGitRoutes(api, ctx)
    registerIssueRoutes(api, ctx)
    registerPullRoutes(api, ctx)
    registerActionRoutes(api, ctx)
    registerGistRoutes(api, ctx)
    registerReleaseRoutes(api, ctx)
    registerSearchRoutes(api, ctx)
    registerProjectRoutes(api, ctx)
    registerHookRoutes(api, ctx)
    registerMiscRoutes(api, ctx, lim)
    registerGraphql(api, ctx, lim)
    // Unknown paths and wrong methods answer 404 from inside the API scope, so they too carry
    // the rate-limit headers and need valid credentials when credentials are sent.
    api.all('*', async (_req, reply) => sendError(reply, 404, 'Not Found'))
  })
  await emulator.app.register(async (web: FastifyInstance) => {
    web.setErrorHandler(errorHandler)
    web.addHook('onSend', requests.keepAnswer)
    web.addHook('onResponse', requests.hook)
    registerOAuth(web, ctx)
    requests.register(web)
    registerControl(web, ctx, lim, () => info!, DEFAULT_RUN_SETTINGS)
  })

  const url = await listen(emulator.app, opts.port ?? 0, opts.host)
  ctx.url = url
  ctx.webUrl = url
  const timer = setInterval(() => tick(ctx), 20)
  timer.unref()

  const s = info
  return {
    url,
    webUrl: url,
    demo: {
      login: s.demo.login,
      password: s.demo.password,
      token: s.demoToken.value,
      oauthClientId: s.app.clientId,
      oauthClientSecret: s.app.clientSecret,
      repo: { owner: s.demo.login, name: DEMO_REPO },
    },
    emulator,
    async close() {
      clearInterval(timer)
      await emulator.app.close()
    },
  }
}
