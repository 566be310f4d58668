// The per-field routes the classic API still serves beside the whole-object PUTs:
// `PUT /1/cards/{id}/name?value=…` changes one field, exactly as `PUT /1/cards/{id}?name=…` does
// (other parameters, like `idList` with `idBoard`, ride along). Clients written against the older
// documentation (the `trello` package on npm, for one) use nothing else to change things.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { invalidValue, notFound } from '../errors.ts'
import { updateBoard, updateList } from '../ops/boards.ts'
import { updateCard } from '../ops/cards.ts'
import { updateChecklist, updateLabel } from '../ops/checklists.ts'
import type { Params } from '../params.ts'
import { boardView, cardView, checklistView, labelView, listView } from '../views.ts'
import { ctxOf, type Deps, idParam, params, viewerOf } from './helpers.ts'

/** The fields each model takes on its own route, as the service spells them (paths match in any case). */
const FIELDS = {
  cards: [
    'closed',
    'desc',
    'due',
    'dueComplete',
    'idBoard',
    'idLabels',
    'idList',
    'idMembers',
    'name',
    'pos',
    'start',
    'subscribed',
  ],
  lists: ['closed', 'idBoard', 'name', 'pos', 'subscribed'],
  labels: ['color', 'name'],
  checklists: ['name', 'pos'],
  boards: ['closed', 'desc', 'name'],
} as const

/** The route's parameters with `value` standing for the field the path names. */
function fieldParams(req: FastifyRequest, model: keyof typeof FIELDS): Params {
  const raw = (req.params as { field: string }).field.toLowerCase()
  const field = FIELDS[model].find((f) => f.toLowerCase() === raw)
  if (!field) throw notFound()
  const { value, ...rest } = params(req)
  if (value === undefined) throw invalidValue('value')
  return { ...rest, [field]: value }
}

export function registerFieldRoutes(api: FastifyInstance, { store: s }: Deps): void {
  api.put('/1/cards/:id/:field', async (req) => {
    const ctx = ctxOf(req)
    return cardView(s, updateCard(s, ctx, idParam(req), fieldParams(req, 'cards')), viewerOf(ctx))
  })
  api.put('/1/lists/:id/:field', async (req) => {
    const ctx = ctxOf(req)
    return listView(updateList(s, ctx, idParam(req), fieldParams(req, 'lists')), viewerOf(ctx))
  })
  api.put('/1/labels/:id/:field', async (req) =>
    labelView(s, updateLabel(s, ctxOf(req), idParam(req), fieldParams(req, 'labels'))),
  )
  api.put('/1/checklists/:id/:field', async (req) =>
    checklistView(updateChecklist(s, ctxOf(req), idParam(req), fieldParams(req, 'checklists'))),
  )
  api.put('/1/boards/:id/:field', async (req) =>
    boardView(s, updateBoard(s, ctxOf(req), idParam(req), fieldParams(req, 'boards'))),
  )
  // A board preference on its own route: `PUT /1/boards/{id}/prefs/permissionLevel?value=public`.
  api.put('/1/boards/:id/prefs/:pref', async (req) => {
    const { pref } = req.params as { pref: string }
    if (pref.toLowerCase() !== 'permissionlevel') throw notFound()
    const { value, ...rest } = params(req)
    if (value === undefined) throw invalidValue('value')
    return boardView(s, updateBoard(s, ctxOf(req), idParam(req), { ...rest, 'prefs/permissionLevel': value }))
  })
}
