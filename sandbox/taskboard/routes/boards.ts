// /1/boards and /1/lists.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { boardFor, listFor } from '../access.ts'
import { actionFilter } from '../activity.ts'
import { invalidValue, notFound } from '../errors.ts'
import { addMemberToBoard, createBoard, createList, updateBoard, updateList } from '../ops/boards.ts'
import { createLabel } from '../ops/checklists.ts'
import { HEX24, type Params, pickFields } from '../params.ts'
import type { Board, Card, List, Store } from '../store.ts'
import { actionView, boardView, cardView, checklistView, labelView, listView, memberView } from '../views.ts'
import { cardWithNested } from './cards.ts'
import { ctxOf, type Deps, idParam, params, viewerOf, window } from './helpers.ts'

function filterLists(s: Store, board: Board, filter: unknown): List[] {
  const f = filter ?? 'open'
  if (!['open', 'closed', 'all', 'none'].includes(String(f))) throw invalidValue('filter')
  return [...s.lists.values()]
    .filter((l) => l.idBoard === board.id)
    .filter((l) => (f === 'all' ? true : f === 'none' ? false : f === 'open' ? !l.closed : l.closed))
    .sort((a, b) => a.pos - b.pos)
}

/** The cards a `filter` of a card listing keeps (`visible`, the default: open, on an open list). */
export function cardFilter(s: Store, filter: unknown): (c: Card) => boolean {
  const f = String(filter ?? 'visible')
  if (!['visible', 'open', 'closed', 'all', 'none'].includes(f)) throw invalidValue('filter')
  return (c) => {
    if (f === 'all') return true
    if (f === 'none') return false
    if (f === 'closed') return c.closed
    if (f === 'open') return !c.closed
    return !c.closed && !s.lists.get(c.idList)?.closed
  }
}

export function filterBoardCards(s: Store, board: Board, filter: unknown): Card[] {
  const keep = cardFilter(s, filter)
  return [...s.cards.values()]
    .filter((c) => c.idBoard === board.id)
    .filter(keep)
    .sort((a, b) =>
      a.idList === b.idList ? a.pos - b.pos : s.lists.get(a.idList)!.pos - s.lists.get(b.idList)!.pos,
    )
}

export function boardActions(s: Store, board: Board, p: Params) {
  const matches = actionFilter(p.filter, 'all')
  const onBoard = s.actions.filter((a) => (a.data.board as { id?: string } | undefined)?.id === board.id)
  return window(onBoard.filter(matches), p, s.actions).map((a) => actionView(s, a))
}

/** A board with the nested resources asked for (`lists=open`, `cards=all`, `labels=all`, ...). */
export function boardWithNested(s: Store, board: Board, p: Params, viewer: string | null) {
  const out: Record<string, unknown> = pickFields(boardView(s, board), p.fields)
  if (p.lists !== undefined && p.lists !== 'none')
    out.lists = filterLists(s, board, p.lists).map((l) => listView(l, viewer))
  if (p.cards !== undefined && p.cards !== 'none')
    out.cards = filterBoardCards(s, board, p.cards).map((c) => cardView(s, c, viewer))
  if (p.labels !== undefined && p.labels !== 'none')
    out.labels = boardLabels(s, board).map((l) => labelView(s, l))
  if (p.members !== undefined && p.members !== 'none') out.members = boardMembers(s, board)
  if (p.checklists !== undefined && p.checklists !== 'none') {
    out.checklists = [...s.checklists.values()].filter((c) => c.idBoard === board.id).map(checklistView)
  }
  if (p.actions !== undefined && p.actions !== 'none') {
    out.actions = boardActions(s, board, { filter: p.actions, limit: p.actions_limit })
  }
  return out
}

function boardLabels(s: Store, board: Board) {
  return [...s.labels.values()].filter((l) => l.idBoard === board.id)
}

function boardMembers(s: Store, board: Board) {
  return board.memberships.map((m) => memberView(s, s.members.get(m.idMember)!))
}

export function registerBoardRoutes(api: FastifyInstance, { store: s }: Deps): void {
  api.post('/1/boards', async (req) => boardView(s, createBoard(s, ctxOf(req), params(req))))

  api.get('/1/boards/:id', async (req) => {
    const ctx = ctxOf(req)
    return boardWithNested(s, boardFor(s, ctx, idParam(req), 'read'), params(req), viewerOf(ctx))
  })

  api.put('/1/boards/:id', async (req) => boardView(s, updateBoard(s, ctxOf(req), idParam(req), params(req))))

  api.get('/1/boards/:id/lists', async (req) => {
    const ctx = ctxOf(req)
    const p = params(req)
    const board = boardFor(s, ctx, idParam(req), 'read')
    return filterLists(s, board, p.filter).map((l) => {
      const view: Record<string, unknown> = pickFields(listView(l, viewerOf(ctx)), p.fields)
      if (p.cards !== undefined && p.cards !== 'none') {
        view.cards = listCards(s, l, p.cards).map((c) => cardView(s, c, viewerOf(ctx)))
      }
      return view
    })
  })

  api.post('/1/boards/:id/lists', async (req) => {
    const ctx = ctxOf(req)
    const board = boardFor(s, ctx, idParam(req), 'write')
    return listView(createList(s, ctx, { ...params(req), idBoard: board.id }), viewerOf(ctx))
  })

  // The filter as a query parameter, or as the last path segment (`/1/boards/{id}/cards/open`);
  // a card id there reads that card of the board (`/1/boards/{id}/cards/{idCard}`).
  const boardCards = async (req: FastifyRequest) => {
    const ctx = ctxOf(req)
    const p = params(req)
    const board = boardFor(s, ctx, idParam(req), 'read')
    const filter = (req.params as { filter?: string }).filter ?? p.filter
    if (typeof filter === 'string' && HEX24.test(filter)) {
      const card = s.cards.get(filter)
      if (!card || card.idBoard !== board.id) throw notFound()
      return cardWithNested(s, card, p, viewerOf(ctx))
    }
    return filterBoardCards(s, board, filter).map((c) => pickFields(cardView(s, c, viewerOf(ctx)), p.fields))
  }
  api.get('/1/boards/:id/cards', boardCards)
  api.get('/1/boards/:id/cards/:filter', boardCards)

  api.get('/1/boards/:id/labels', async (req) => {
    const p = params(req)
    const board = boardFor(s, ctxOf(req), idParam(req), 'read')
    const limit = p.limit === undefined ? 50 : Number(p.limit)
    if (!Number.isInteger(limit) || limit < 0 || limit > 1000) throw invalidValue('limit')
    return boardLabels(s, board)
      .slice(0, limit)
      .map((l) => pickFields(labelView(s, l), p.fields))
  })

  api.post('/1/boards/:id/labels', async (req) =>
    labelView(s, createLabel(s, ctxOf(req), params(req), idParam(req))),
  )

  api.get('/1/boards/:id/actions', async (req) => {
    const board = boardFor(s, ctxOf(req), idParam(req), 'read')
    return boardActions(s, board, params(req))
  })

  api.get('/1/boards/:id/members', async (req) =>
    boardMembers(s, boardFor(s, ctxOf(req), idParam(req), 'read')),
  )

  api.put('/1/boards/:id/members/:idMember', async (req) => {
    const board = addMemberToBoard(s, ctxOf(req), idParam(req), idParam(req, 'idMember'), params(req))
    return {
      id: board.id,
      members: boardMembers(s, board),
      memberships: board.memberships.map((m) => ({ ...m, unconfirmed: false, deactivated: false })),
    }
  })

  api.get('/1/boards/:id/checklists', async (req) => {
    const board = boardFor(s, ctxOf(req), idParam(req), 'read')
    return [...s.checklists.values()].filter((c) => c.idBoard === board.id).map(checklistView)
  })

  // Lists.
  api.post('/1/lists', async (req) => {
    const ctx = ctxOf(req)
    return listView(createList(s, ctx, params(req)), viewerOf(ctx))
  })

  api.get('/1/lists/:id', async (req) => {
    const ctx = ctxOf(req)
    const p = params(req)
    const { list } = listFor(s, ctx, idParam(req), 'read')
    const view: Record<string, unknown> = pickFields(listView(list, viewerOf(ctx)), p.fields)
    if (p.cards !== undefined && p.cards !== 'none')
      view.cards = listCards(s, list, p.cards).map((c) => cardView(s, c, viewerOf(ctx)))
    return view
  })

  api.put('/1/lists/:id', async (req) => {
    const ctx = ctxOf(req)
    return listView(updateList(s, ctx, idParam(req), params(req)), viewerOf(ctx))
  })

  api.get('/1/lists/:id/cards', async (req) => {
    const ctx = ctxOf(req)
    const p = params(req)
    const { list } = listFor(s, ctx, idParam(req), 'read')
    return listCards(s, list, p.filter).map((c) => pickFields(cardView(s, c, viewerOf(ctx)), p.fields))
  })

  api.get('/1/lists/:id/board', async (req) => {
    const { board } = listFor(s, ctxOf(req), idParam(req), 'read')
    return pickFields(boardView(s, board), params(req).fields)
  })
}

function listCards(s: Store, list: List, filter: unknown): Card[] {
  const f = String(filter ?? 'open')
  if (!['open', 'closed', 'all', 'none'].includes(f)) throw invalidValue('filter')
  return [...s.cards.values()]
    .filter((c) => c.idList === list.id)
    .filter((c) => (f === 'all' ? true : f === 'none' ? false : f === 'open' ? !c.closed : c.closed))
    .sort((a, b) => a.pos - b.pos)
}
