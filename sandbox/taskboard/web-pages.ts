// Page addresses: `/b/{shortLink}/{slug}` and `/c/{shortLink}/{slug}`. With `.json` appended they
// answer the board's or card's data, which needs a key and token like the API (public boards
// excepted); without it a small HTML page.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { type Ctx, checkBoard } from './access.ts'
import { authenticate, credentials } from './auth.ts'
import { notFound } from './errors.ts'
import { modelPage } from './html.ts'
import { HEX24, SHORT_LINK, slugify } from './params.ts'
import { boardWithNested } from './routes/boards.ts'
import { cardWithNested } from './routes/cards.ts'
import type { Deps } from './routes/helpers.ts'
import type { Store } from './store.ts'

function pageCtx(s: Store, req: FastifyRequest): Ctx {
  const creds = credentials(req)
  if (!creds.key && !creds.token)
    return { app: null, token: null, member: null, scopes: new Set(['read']), internal: false }
  return authenticate(s, req)
}

function parse(req: FastifyRequest): { id: string; json: boolean } {
  const { shortLink, slug } = req.params as { shortLink: string; slug?: string }
  const last = slug ?? shortLink
  const json = last.endsWith('.json')
  const id = json && slug === undefined ? shortLink.slice(0, -5) : shortLink
  if (!SHORT_LINK.test(id) && !HEX24.test(id)) throw notFound()
  return { id, json }
}

export function registerWebPages(app: FastifyInstance, { store: s }: Deps): void {
  const board = async (req: FastifyRequest, reply: FastifyReply) => {
    const { id, json } = parse(req)
    const b = s.findBoard(id)
    if (!b) throw notFound()
    if (!json) {
      const url = `${s.webUrl}/b/${b.shortLink}/${slugify(b.name)}.json`
      return reply.type('text/html; charset=utf-8').send(modelPage('Board', b.name, url))
    }
    const ctx = pageCtx(s, req)
    checkBoard(s, ctx, b, 'read')
    const all = {
      lists: 'all',
      cards: 'all',
      labels: 'all',
      members: 'all',
      checklists: 'all',
      actions: 'all',
    }
    return boardWithNested(s, b, all, ctx.member?.id ?? null)
  }
  app.get('/b/:shortLink', board)
  app.get('/b/:shortLink/:slug', board)

  const card = async (req: FastifyRequest, reply: FastifyReply) => {
    const { id, json } = parse(req)
    const c = s.findCard(id)
    if (!c) throw notFound()
    if (!json) {
      const url = `${s.webUrl}/c/${c.shortLink}/${c.idShort}-${slugify(c.name)}.json`
      return reply.type('text/html; charset=utf-8').send(modelPage('Card', c.name, url))
    }
    const ctx = pageCtx(s, req)
    checkBoard(s, ctx, s.boards.get(c.idBoard)!, 'read')
    const all = { attachments: 'true', checklists: 'all', members: 'true', actions: 'all' }
    return cardWithNested(s, c, all, ctx.member?.id ?? null)
  }
  app.get('/c/:shortLink', card)
  app.get('/c/:shortLink/:slug', card)
}
