// The /1/ API: every route here is authenticated (key, token, optional OAuth signature) and
// counted against the rate limits before its handler runs.
import type { FastifyInstance } from 'fastify'
import { authenticate } from '../auth.ts'
import { registerBoardRoutes } from './boards.ts'
import { registerCardRoutes } from './cards.ts'
import { registerChecklistRoutes } from './checklists.ts'
import { registerFieldRoutes } from './fields.ts'
import type { Deps } from './helpers.ts'
import { registerMemberRoutes } from './members.ts'
import { registerTokenRoutes } from './tokens.ts'

export function registerApi(app: FastifyInstance, deps: Deps): void {
  app.register(async (api) => {
    api.addHook('preHandler', async (req, reply) => {
      // `/1/tokens/{token}/...` may name the token in the path instead of the query.
      const pathToken = req.routeOptions.url?.startsWith('/1/tokens/:token')
        ? (req.params as Record<string, string>).token
        : undefined
      try {
        req.tb = authenticate(deps.store, req, pathToken)
      } catch (err) {
        deps.limits.setIdleHeaders(reply)
        throw err
      }
      if (!deps.limits.admit(reply, req.tb.app!.key, req.tb.token?.value ?? null)) return reply
    })
    registerMemberRoutes(api, deps)
    registerBoardRoutes(api, deps)
    registerCardRoutes(api, deps)
    registerChecklistRoutes(api, deps)
    registerTokenRoutes(api, deps)
    registerFieldRoutes(api, deps)
  })
}
