// /1/tokens and /1/webhooks.
import type { FastifyInstance } from 'fastify'
import { requireMember } from '../access.ts'
import { invalidToken, unauthorized } from '../errors.ts'
import type { Store, Token } from '../store.ts'
import { memberView, tokenView, webhookView } from '../views.ts'
import { ctxOf, type Deps, idParam, params } from './helpers.ts'

/** A token named in the path, readable by its own member only. */
function pathToken(s: Store, req: Parameters<typeof ctxOf>[0]): Token {
  const ctx = ctxOf(req)
  const member = requireMember(ctx, 'read')
  const token = s.tokens.get(idParam(req, 'token'))
  if (!token || token.key !== ctx.app?.key) throw invalidToken()
  if (token.idMember !== member.id) throw unauthorized()
  return token
}

export function registerTokenRoutes(api: FastifyInstance, { store: s, hub }: Deps): void {
  api.get('/1/tokens/:token', async (req) => tokenView(pathToken(s, req)))

  api.get('/1/tokens/:token/member', async (req) => memberView(s, s.members.get(pathToken(s, req).idMember)!))

  api.delete('/1/tokens/:token', async (req) => {
    s.revokeToken(pathToken(s, req).value)
    return { _value: null }
  })

  api.get('/1/tokens/:token/webhooks', async (req) => hub.forToken(pathToken(s, req).value).map(webhookView))

  api.post('/1/tokens/:token/webhooks', async (req) =>
    webhookView(await hub.create(ctxOf(req), params(req), idParam(req, 'token'))),
  )

  api.post('/1/webhooks', async (req) => webhookView(await hub.create(ctxOf(req), params(req))))

  api.get('/1/webhooks/:id', async (req) => webhookView(hub.find(ctxOf(req), idParam(req))))

  api.put('/1/webhooks/:id', async (req) =>
    webhookView(await hub.update(ctxOf(req), idParam(req), params(req))),
  )

  api.delete('/1/webhooks/:id', async (req) => {
    hub.remove(ctxOf(req), idParam(req))
    return { _value: null }
  })
}
