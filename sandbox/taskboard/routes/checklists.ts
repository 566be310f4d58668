// /1/checklists and /1/labels.
import type { FastifyInstance } from 'fastify'
import { checklistFor, labelFor } from '../access.ts'
import { invalidValue } from '../errors.ts'
import {
  addCheckItem,
  createChecklist,
  createLabel,
  deleteLabel,
  updateChecklist,
  updateLabel,
} from '../ops/checklists.ts'
import { pickFields } from '../params.ts'
import { checkItemView, checklistView, labelView } from '../views.ts'
import { ctxOf, type Deps, idParam, params } from './helpers.ts'

export function registerChecklistRoutes(api: FastifyInstance, { store: s }: Deps): void {
  api.post('/1/checklists', async (req) => checklistView(createChecklist(s, ctxOf(req), params(req))))

  api.get('/1/checklists/:id', async (req) => {
    const { checklist } = checklistFor(s, ctxOf(req), idParam(req), 'read')
    return pickFields(checklistView(checklist), params(req).fields)
  })

  api.put('/1/checklists/:id', async (req) =>
    checklistView(updateChecklist(s, ctxOf(req), idParam(req), params(req))),
  )

  api.get('/1/checklists/:id/checkItems', async (req) => {
    const { checklist } = checklistFor(s, ctxOf(req), idParam(req), 'read')
    const filter = params(req).filter ?? 'all'
    if (filter !== 'all' && filter !== 'none') throw invalidValue('filter')
    return filter === 'none' ? [] : checklistView(checklist).checkItems
  })

  api.post('/1/checklists/:id/checkItems', async (req) =>
    checkItemView(addCheckItem(s, ctxOf(req), idParam(req), params(req))),
  )

  api.post('/1/labels', async (req) => labelView(s, createLabel(s, ctxOf(req), params(req))))

  api.get('/1/labels/:id', async (req) => {
    const { label } = labelFor(s, ctxOf(req), idParam(req), 'read')
    return pickFields(labelView(s, label), params(req).fields)
  })

  api.put('/1/labels/:id', async (req) => labelView(s, updateLabel(s, ctxOf(req), idParam(req), params(req))))

  api.delete('/1/labels/:id', async (req) => {
    deleteLabel(s, ctxOf(req), idParam(req))
    return {}
  })
}
