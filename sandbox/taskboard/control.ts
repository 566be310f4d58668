// The task-board's own control routes, on top of the common /_sandbox ones: accounts, apps and
// tokens, bulk seeding, rate-limit settings, acting as another member, and a state summary.
// Control answers are JSON; a refused change answers `{ "error": "<the API's message>" }`.
import type { FastifyInstance, FastifyReply } from 'fastify'
import { type Ctx, memberCtx } from './access.ts'
import { ApiError } from './errors.ts'
import { addMemberToBoard, createBoard, createList, updateBoard, updateList } from './ops/boards.ts'
import {
  addAttachment,
  addComment,
  addLabelToCard,
  addMemberToCard,
  createCard,
  deleteCard,
  removeLabelFromCard,
  removeMemberFromCard,
  updateCard,
  updateCheckItem,
} from './ops/cards.ts'
import { addCheckItem, createChecklist, createLabel, updateLabel } from './ops/checklists.ts'
import type { Params } from './params.ts'
import type { Deps } from './routes/helpers.ts'
import type { Member, Store } from './store.ts'
import { parseExpiration, parseScopes } from './token-page.ts'
import {
  actionView,
  attachmentView,
  boardView,
  cardView,
  checkItemView,
  checklistView,
  labelView,
  listView,
  webhookView,
} from './views.ts'

type Act = (s: Store, ctx: Ctx, id: string, p: Params) => unknown

const str = (v: unknown) => (typeof v === 'string' ? v : '')

/** What `POST /_sandbox/act` can do; `id` is the card, list, board or checklist acted on. */
const ACTS: Record<string, Act> = {
  createBoard: (s, ctx, _id, p) => boardView(s, createBoard(s, ctx, p)),
  updateBoard: (s, ctx, id, p) => boardView(s, updateBoard(s, ctx, id, p)),
  addMemberToBoard: (s, ctx, id, p) =>
    boardView(s, addMemberToBoard(s, ctx, id, str(p.idMember ?? p.value), p)),
  createList: (s, ctx, _id, p) => listView(createList(s, ctx, p), ctx.member!.id),
  updateList: (s, ctx, id, p) => listView(updateList(s, ctx, id, p), ctx.member!.id),
  createCard: (s, ctx, _id, p) => cardView(s, createCard(s, ctx, p)),
  updateCard: (s, ctx, id, p) => cardView(s, updateCard(s, ctx, id, p)),
  moveCard: (s, ctx, id, p) => cardView(s, updateCard(s, ctx, id, { idList: p.idList, pos: p.pos })),
  archiveCard: (s, ctx, id) => cardView(s, updateCard(s, ctx, id, { closed: true })),
  unarchiveCard: (s, ctx, id) => cardView(s, updateCard(s, ctx, id, { closed: false })),
  deleteCard: (s, ctx, id) => {
    deleteCard(s, ctx, id)
    return { limits: {} }
  },
  comment: (s, ctx, id, p) => actionView(s, addComment(s, ctx, id, p)),
  addMemberToCard: (s, ctx, id, p) =>
    cardView(s, addMemberToCard(s, ctx, id, { value: p.value ?? p.idMember })),
  removeMemberFromCard: (s, ctx, id, p) =>
    cardView(s, removeMemberFromCard(s, ctx, id, str(p.idMember ?? p.value))),
  addLabelToCard: (s, ctx, id, p) => cardView(s, addLabelToCard(s, ctx, id, { value: p.value ?? p.idLabel })),
  removeLabelFromCard: (s, ctx, id, p) =>
    cardView(s, removeLabelFromCard(s, ctx, id, str(p.idLabel ?? p.value))),
  createLabel: (s, ctx, _id, p) => labelView(s, createLabel(s, ctx, p)),
  updateLabel: (s, ctx, id, p) => labelView(s, updateLabel(s, ctx, id, p)),
  addChecklist: (s, ctx, id, p) => checklistView(createChecklist(s, ctx, p, id || undefined)),
  addCheckItem: (s, ctx, id, p) => checkItemView(addCheckItem(s, ctx, id, p)),
  updateCheckItem: (s, ctx, id, p) => checkItemView(updateCheckItem(s, ctx, id, str(p.idCheckItem), p)),
  addAttachment: (s, ctx, id, p) => attachmentView(addAttachment(s, ctx, id, p)),
}
ACTS.commentCard = ACTS.comment!
ACTS.addChecklistToCard = ACTS.addChecklist!
ACTS.addAttachmentToCard = ACTS.addAttachment!

function member(s: Store, v: unknown, field = 'member'): Member {
  const m = typeof v === 'string' ? s.findMember(v) : undefined
  if (!m) throw new ApiError(400, `unknown ${field}`)
  return m
}

interface SeedCard {
  name: string
  desc?: string
  due?: string | null
  labels?: string[]
  members?: string[]
  closed?: boolean
}
interface SeedBoard {
  name: string
  desc?: string
  permissionLevel?: 'private' | 'org' | 'public'
  closed?: boolean
  members?: string[]
  labels?: { name: string; color: string | null }[]
  lists?: { name: string; cards?: SeedCard[] }[]
}

export function registerControl(app: FastifyInstance, { store: s, limits, hub }: Deps): void {
  const refused = (reply: FastifyReply, err: unknown) => {
    if (!(err instanceof ApiError)) throw err
    return reply.code(err.statusCode).send({ error: err.message })
  }
  const body = (req: { body?: unknown }) =>
    (req.body && typeof req.body === 'object' ? req.body : {}) as Params

  app.post('/_sandbox/members', async (req, reply) => {
    const p = body(req)
    const username = str(p.username).toLowerCase()
    if (!/^[a-z0-9_]{3,100}$/.test(username))
      return refused(reply, new ApiError(400, 'invalid value for username'))
    if (s.findMember(username)) return refused(reply, new ApiError(409, 'username taken'))
    const password = str(p.password) || s.rng.alnum(12)
    const m = s.addMember(username, str(p.fullName) || username, password)
    return reply.code(201).send({ id: m.id, username: m.username, fullName: m.fullName, password })
  })

  app.post('/_sandbox/apps', async (req, reply) => {
    try {
      const p = body(req)
      const m = member(s, p.member ?? p.memberId ?? p.idMember)
      const origins = Array.isArray(p.allowedOrigins) ? p.allowedOrigins.map(String) : []
      const a = s.addApp(m.id, str(p.name) || `${m.username}'s app`, undefined, undefined, origins)
      return reply
        .code(201)
        .send({ key: a.key, secret: a.secret, idMember: a.idMember, name: a.name, allowedOrigins: origins })
    } catch (err) {
      return refused(reply, err)
    }
  })

  app.post('/_sandbox/tokens', async (req, reply) => {
    try {
      const p = body(req)
      const m = member(s, p.member ?? p.memberId ?? p.idMember)
      const key = str(p.key) || [...s.apps.values()][0]!.key
      if (!s.apps.has(key)) throw new ApiError(400, 'invalid key')
      const scopes = parseScopes(p.scope ?? 'read,write')
      const expiration = parseExpiration(p.expiration ?? 'never')
      const t = s.addToken(key, m.id, scopes, expiration, str(p.name) || 'Sandbox token')
      return reply.code(201).send({
        token: t.value,
        key,
        idMember: m.id,
        scopes: t.scopes,
        expiration,
        dateExpires: t.dateExpires === null ? null : new Date(t.dateExpires).toISOString(),
      })
    } catch (err) {
      return refused(reply, err)
    }
  })

  app.post('/_sandbox/seed', async (req, reply) => {
    try {
      const p = body(req)
      const actor = member(s, p.as ?? p.memberId, 'as')
      const ctx = memberCtx(actor)
      const out = []
      for (const spec of (Array.isArray(p.boards) ? p.boards : []) as SeedBoard[]) {
        const board = createBoard(s, ctx, {
          name: spec.name,
          desc: spec.desc,
          prefs_permissionLevel: spec.permissionLevel,
          defaultLists: false,
          defaultLabels: spec.labels === undefined,
        })
        for (const username of spec.members ?? [])
          addMemberToBoard(s, ctx, board.id, member(s, username).id, {})
        for (const l of spec.labels ?? []) createLabel(s, ctx, { name: l.name, color: l.color }, board.id)
        const labels = [...s.labels.values()].filter((l) => l.idBoard === board.id)
        const lists = []
        for (const listSpec of spec.lists ?? []) {
          const list = createList(s, ctx, { name: listSpec.name, idBoard: board.id })
          const cards = []
          for (const c of listSpec.cards ?? []) {
            const idLabels = (c.labels ?? []).map((name) => {
              const l = labels.find((x) => x.name === name || x.color === name)
              if (!l) throw new ApiError(400, `unknown label ${name}`)
              return l.id
            })
            const card = createCard(s, ctx, {
              idList: list.id,
              name: c.name,
              desc: c.desc,
              due: c.due ?? undefined,
              idLabels,
              idMembers: (c.members ?? []).map((u) => member(s, u).id),
            })
            if (c.closed) updateCard(s, ctx, card.id, { closed: true })
            cards.push({ id: card.id, shortLink: card.shortLink, name: card.name })
          }
          lists.push({ id: list.id, name: list.name, cards })
        }
        if (spec.closed) updateBoard(s, ctx, board.id, { closed: true })
        out.push({
          id: board.id,
          name: board.name,
          shortLink: board.shortLink,
          url: boardView(s, board).url,
          labels: labels.map((l) => ({ id: l.id, name: l.name, color: l.color })),
          lists,
        })
      }
      return reply.code(201).send({ boards: out })
    } catch (err) {
      return refused(reply, err)
    }
  })

  app.get('/_sandbox/rate-limits', async () => limits.toJSON())
  app.post('/_sandbox/rate-limits', async (req) => {
    const p = body(req)
    const num = (v: unknown) => (typeof v === 'number' && v > 0 ? v : undefined)
    limits.configure({ tokenLimit: num(p.tokenLimit), keyLimit: num(p.keyLimit), windowMs: num(p.windowMs) })
    return limits.toJSON()
  })

  app.post('/_sandbox/webhooks/timeout', async (req) => {
    const ms = body(req).ms
    if (typeof ms === 'number' && ms > 0) hub.timeoutMs = ms
    return { ms: hub.timeoutMs }
  })

  app.post('/_sandbox/act', async (req, reply) => {
    try {
      const { as, memberId, type, id, params, ...rest } = body(req)
      const actor = member(s, as ?? memberId, 'as')
      const act = typeof type === 'string' ? ACTS[type] : undefined
      if (!act) throw new ApiError(400, `unknown type; one of ${Object.keys(ACTS).join(', ')}`)
      const p = (params && typeof params === 'object' ? params : rest) as Params
      const before = s.actions.length
      const result = act(s, memberCtx(actor), str(id), p)
      return { result, actions: s.actions.slice(before).map((a) => actionView(s, a)) }
    } catch (err) {
      return refused(reply, err)
    }
  })

  app.get('/_sandbox/state', async () => {
    s.sweepExpiredTokens()
    const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())
    return {
      members: [...s.members.values()].map((m) => ({ id: m.id, username: m.username, fullName: m.fullName })),
      apps: [...s.apps.values()].map((a) => ({ key: a.key, name: a.name, idMember: a.idMember })),
      tokens: [...s.tokens.values()].map((t) => ({
        token: t.value,
        key: t.key,
        idMember: t.idMember,
        scopes: t.scopes,
        identifier: t.identifier,
        dateExpires: iso(t.dateExpires),
        oauth: t.secret !== null,
      })),
      boards: [...s.boards.values()].map((b) => ({
        id: b.id,
        name: b.name,
        shortLink: b.shortLink,
        closed: b.closed,
        members: b.memberships.map((m) => m.idMember),
        lists: [...s.lists.values()].filter((l) => l.idBoard === b.id).length,
        cards: [...s.cards.values()].filter((c) => c.idBoard === b.id).length,
      })),
      actions: s.actions.length,
      notifications: s.notifications.length,
      webhooks: [...s.webhooks.values()].map((w) => ({ ...webhookView(w), token: w.token })),
      rateLimits: limits.toJSON(),
      webhookTimeoutMs: hub.timeoutMs,
    }
  })
}
