// Snippets ("gists"): create, read, update, delete, list.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { principalOf, requireAccountAccess } from '../auth.ts'
import { type Ctx, notFound } from '../context.ts'
import { createGist, updateGist } from '../gists.ts'
import { body, expectBool, expectString, isoOrUndefined, paginate, params, query } from '../http.ts'
import type { Gist } from '../store.ts'
import { gistView } from '../views-misc.ts'

export function registerGistRoutes(api: FastifyInstance, ctx: Ctx): void {
  const newestFirst = (req: FastifyRequest, list: Gist[]) => {
    const since = isoOrUndefined(query(req).since, 'since')
    return list
      .filter((g) => since === undefined || Date.parse(g.updatedAt) >= since)
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
  }

  api.post('/gists', async (req, reply) => {
    const user = requireAccountAccess(req, { scopes: ['gist'], fg: ['gists', 'write'] })
    const b = body(req)
    const gist = createGist(ctx, user, {
      description: expectString(b, 'description') ?? null,
      public: expectBool(b, 'public'),
      files: b.files,
    })
    return reply.code(201).send(gistView(ctx, gist))
  })

  api.get('/gists', async (req, reply) => {
    const viewer = principalOf(req).user
    const all = [...ctx.store.gists.values()]
    const list = viewer ? all.filter((g) => g.ownerId === viewer.id) : all.filter((g) => g.public)
    return paginate(ctx, req, reply, newestFirst(req, list)).map((g) => gistView(ctx, g, false))
  })

  api.get('/gists/public', async (req, reply) => {
    const list = [...ctx.store.gists.values()].filter((g) => g.public)
    return paginate(ctx, req, reply, newestFirst(req, list)).map((g) => gistView(ctx, g, false))
  })

  api.get('/users/:username/gists', async (req, reply) => {
    const u = ctx.store.userByLogin(params(req).username)
    if (!u) throw notFound()
    const self = principalOf(req).user?.id === u.id
    const list = [...ctx.store.gists.values()].filter((g) => g.ownerId === u.id && (g.public || self))
    return paginate(ctx, req, reply, newestFirst(req, list)).map((g) => gistView(ctx, g, false))
  })

  const gistOf = (req: FastifyRequest) => {
    const g = ctx.store.gists.get(params(req).id)
    if (!g) throw notFound()
    return g
  }

  // Secret gists are readable by anyone who has the id, as upstream.
  api.get('/gists/:id', async (req) => gistView(ctx, gistOf(req)))

  api.patch('/gists/:id', async (req) => {
    const user = requireAccountAccess(req, { scopes: ['gist'], fg: ['gists', 'write'] })
    const g = gistOf(req)
    const b = body(req)
    updateGist(ctx, user, g, {
      description: b.description === null ? null : expectString(b, 'description'),
      files: b.files,
    })
    return gistView(ctx, g)
  })

  api.delete('/gists/:id', async (req, reply) => {
    const user = requireAccountAccess(req, { scopes: ['gist'], fg: ['gists', 'write'] })
    const g = gistOf(req)
    if (g.ownerId !== user.id) throw notFound()
    ctx.store.gists.delete(g.id)
    return reply.code(204).send()
  })
}
