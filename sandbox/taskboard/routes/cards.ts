// /1/cards: the card itself, comments, members, labels, attachments, checklists and check items.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { cardFor } from '../access.ts'
import { actionFilter } from '../activity.ts'
import { invalidId, notFound } from '../errors.ts'
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
} from '../ops/cards.ts'
import { createChecklist } from '../ops/checklists.ts'
import { HEX24, type Params, pickFields } from '../params.ts'
import type { Card, Store } from '../store.ts'
import {
  actionView,
  attachmentView,
  boardView,
  cardView,
  checkItemView,
  checklistView,
  listView,
  memberView,
} from '../views.ts'
import { ctxOf, type Deps, idParam, params, viewerOf, window } from './helpers.ts'

export function cardActions(s: Store, card: Card, p: Params) {
  const matches = actionFilter(p.filter, 'commentCard,updateCard:idList')
  const onCard = s.actions.filter((a) => (a.data.card as { id?: string } | undefined)?.id === card.id)
  return window(onCard.filter(matches), p, s.actions).map((a) => actionView(s, a))
}

export function cardChecklists(s: Store, card: Card) {
  return card.idChecklists
    .map((id) => s.checklists.get(id)!)
    .sort((a, b) => a.pos - b.pos)
    .map(checklistView)
}

/** A card with the nested resources asked for (`attachments=true`, `checklists=all`, ...). */
export function cardWithNested(s: Store, card: Card, p: Params, viewer: string | null) {
  const out: Record<string, unknown> = pickFields(cardView(s, card, viewer), p.fields)
  const yes = (v: unknown) => v !== undefined && v !== 'false' && v !== false && v !== 'none'
  if (yes(p.attachments)) out.attachments = card.attachments.map(attachmentView)
  if (yes(p.checklists)) out.checklists = cardChecklists(s, card)
  if (yes(p.members)) out.members = card.idMembers.map((id) => memberView(s, s.members.get(id)!))
  if (yes(p.list)) out.list = listView(s.lists.get(card.idList)!, viewer)
  if (yes(p.board)) out.board = boardView(s, s.boards.get(card.idBoard)!)
  if (yes(p.actions)) out.actions = cardActions(s, card, { filter: p.actions, limit: p.actions_limit })
  return out
}

export function registerCardRoutes(api: FastifyInstance, { store: s }: Deps): void {
  const view = (card: Card, req: Parameters<typeof ctxOf>[0]) => cardView(s, card, viewerOf(ctxOf(req)))

  api.post('/1/cards', async (req) => view(createCard(s, ctxOf(req), params(req)), req))

  api.get('/1/cards/:id', async (req) => {
    const ctx = ctxOf(req)
    const { card } = cardFor(s, ctx, idParam(req), 'read')
    return cardWithNested(s, card, params(req), viewerOf(ctx))
  })

  api.put('/1/cards/:id', async (req) => view(updateCard(s, ctxOf(req), idParam(req), params(req)), req))

  api.delete('/1/cards/:id', async (req) => {
    deleteCard(s, ctxOf(req), idParam(req))
    return { limits: {} }
  })

  api.post('/1/cards/:id/actions/comments', async (req) =>
    actionView(s, addComment(s, ctxOf(req), idParam(req), params(req))),
  )

  api.get('/1/cards/:id/actions', async (req) => {
    const { card } = cardFor(s, ctxOf(req), idParam(req), 'read')
    return cardActions(s, card, params(req))
  })

  api.post(
    '/1/cards/:id/idLabels',
    async (req) => addLabelToCard(s, ctxOf(req), idParam(req), params(req)).idLabels,
  )

  api.delete('/1/cards/:id/idLabels/:idLabel', async (req) => {
    removeLabelFromCard(s, ctxOf(req), idParam(req), idParam(req, 'idLabel'))
    return { _value: null }
  })

  // A member on a card: `idMembers` (the current documentation) and `members` (the older one).
  const addMember = async (req: FastifyRequest) => {
    const card = addMemberToCard(s, ctxOf(req), idParam(req), params(req))
    return card.idMembers.map((id) => memberView(s, s.members.get(id)!))
  }
  const removeMember = async (req: FastifyRequest) => {
    const card = removeMemberFromCard(s, ctxOf(req), idParam(req), idParam(req, 'idMember'))
    return card.idMembers.map((id) => memberView(s, s.members.get(id)!))
  }
  api.post('/1/cards/:id/idMembers', addMember)
  api.post('/1/cards/:id/members', addMember)
  api.delete('/1/cards/:id/idMembers/:idMember', removeMember)
  api.delete('/1/cards/:id/members/:idMember', removeMember)

  api.get('/1/cards/:id/members', async (req) => {
    const { card } = cardFor(s, ctxOf(req), idParam(req), 'read')
    return card.idMembers.map((id) => memberView(s, s.members.get(id)!))
  })

  api.post('/1/cards/:id/attachments', async (req) =>
    attachmentView(addAttachment(s, ctxOf(req), idParam(req), params(req))),
  )

  api.get('/1/cards/:id/attachments', async (req) => {
    const { card } = cardFor(s, ctxOf(req), idParam(req), 'read')
    return card.attachments.map(attachmentView)
  })

  api.get('/1/cards/:id/attachments/:idAttachment', async (req) => {
    const { card } = cardFor(s, ctxOf(req), idParam(req), 'read')
    const id = idParam(req, 'idAttachment')
    if (!HEX24.test(id)) throw invalidId()
    const a = card.attachments.find((x) => x.id === id)
    if (!a) throw notFound()
    return attachmentView(a)
  })

  api.get('/1/cards/:id/checklists', async (req) => {
    const { card } = cardFor(s, ctxOf(req), idParam(req), 'read')
    return cardChecklists(s, card)
  })

  api.post('/1/cards/:id/checklists', async (req) => {
    const { card } = cardFor(s, ctxOf(req), idParam(req), 'write')
    return checklistView(createChecklist(s, ctxOf(req), params(req), card.id))
  })

  api.put('/1/cards/:id/checkItem/:idCheckItem', async (req) =>
    checkItemView(updateCheckItem(s, ctxOf(req), idParam(req), idParam(req, 'idCheckItem'), params(req))),
  )

  api.get('/1/cards/:id/list', async (req) => {
    const ctx = ctxOf(req)
    const { card } = cardFor(s, ctx, idParam(req), 'read')
    return listView(s.lists.get(card.idList)!, viewerOf(ctx))
  })

  api.get('/1/cards/:id/board', async (req) => {
    const { card } = cardFor(s, ctxOf(req), idParam(req), 'read')
    return boardView(s, s.boards.get(card.idBoard)!)
  })
}
