// Classic project boards: projects, columns and cards (card creation and moves emit
// `project_card` events).
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { principalOf, repoFor, repoParam, requireAccountAccess, requireUser } from '../auth.ts'
import { ApiError, type Ctx, notFound } from '../context.ts'
import { body, expectBool, expectString, intParam, paginate, params, query } from '../http.ts'
import { createCard, findCard, findColumn, moveCard } from '../projects.ts'
import type { ClassicProject } from '../store.ts'
import { cardView, columnView, projectView } from '../views-misc.ts'

const SCOPES = ['repo', 'public_repo', 'project', 'read:project']

export function registerProjectRoutes(api: FastifyInstance, ctx: Ctx): void {
  /** Access to a project follows its repository (or its owner for account projects). */
  const check = (req: FastifyRequest, project: ClassicProject, write: boolean) => {
    if (project.repoId !== null) {
      const repo = ctx.store.repos.get(project.repoId)
      if (!repo) throw notFound()
      repoFor(
        ctx,
        req,
        ctx.store.user(repo.ownerId).login,
        repo.name,
        write
          ? { role: 'write', fg: ['repository_projects', 'write'], scopes: SCOPES }
          : { fg: ['repository_projects', 'read'] },
      )
      return
    }
    if (write) {
      const user = requireAccountAccess(req, { scopes: ['project'], fg: ['projects', 'write'] })
      if (user.id !== project.ownerId) throw notFound()
    }
  }
  const projectOf = (req: FastifyRequest, write = false) => {
    const p = ctx.store.classicProjects.find((x) => x.id === intParam(params(req).project_id))
    if (!p) throw notFound()
    check(req, p, write)
    return p
  }

  api.get('/repos/:owner/:repo/projects', async (req, reply) => {
    const repo = repoParam(ctx, req, { fg: ['repository_projects', 'read'] })
    const state = query(req).state ?? 'open'
    const list = ctx.store.classicProjects.filter(
      (p) => p.repoId === repo.id && (state === 'all' || p.state === state),
    )
    return paginate(ctx, req, reply, list).map((p) => projectView(ctx, p))
  })
  api.get('/users/:username/projects', async (req, reply) => {
    const u = ctx.store.userByLogin(params(req).username)
    if (!u) throw notFound()
    const list = ctx.store.classicProjects.filter((p) => p.repoId === null && p.ownerId === u.id)
    return paginate(ctx, req, reply, list).map((p) => projectView(ctx, p))
  })
  api.get('/projects/:project_id', async (req) => projectView(ctx, projectOf(req)))
  api.get('/projects/:project_id/columns', async (req, reply) => {
    const p = projectOf(req)
    return paginate(ctx, req, reply, p.columns).map((c) => columnView(ctx, p, c))
  })
  api.post('/projects/:project_id/columns', async (req, reply) => {
    const p = projectOf(req, true)
    const name = expectString(body(req), 'name', true)!
    const now = ctx.emulator.clock.iso()
    const col = {
      id: ctx.store.nextId('column', 30_000_001),
      name,
      createdAt: now,
      updatedAt: now,
      cards: [],
    }
    p.columns.push(col)
    return reply.code(201).send(columnView(ctx, p, col))
  })

  const columnOf = (req: FastifyRequest, write = false) => {
    const hit = findColumn(ctx, intParam(params(req).column_id))
    if (!hit) throw notFound()
    check(req, hit.project, write)
    return hit
  }
  api.get('/projects/columns/:column_id', async (req) => {
    const { project, column } = columnOf(req)
    return columnView(ctx, project, column)
  })
  api.get('/projects/columns/:column_id/cards', async (req, reply) => {
    const { project, column } = columnOf(req)
    const state = query(req).archived_state ?? 'not_archived'
    const list = column.cards.filter((c) => state === 'all' || c.archived === (state === 'archived'))
    return paginate(ctx, req, reply, list).map((c) => cardView(ctx, project, column, c))
  })
  api.post('/projects/columns/:column_id/cards', async (req, reply) => {
    columnOf(req, true)
    const b = body(req)
    const contentId = b.content_id
    if (contentId !== undefined && typeof contentId !== 'number')
      throw new ApiError(422, "Invalid request.\n\nFor 'properties/content_id', must be an integer.")
    const { project, column, card } = createCard(ctx, requireUser(req), intParam(params(req).column_id), {
      note: expectString(b, 'note') ?? null,
      contentId,
      contentType: expectString(b, 'content_type'),
    })
    return reply.code(201).send(cardView(ctx, project, column, card))
  })

  const cardOf = (req: FastifyRequest, write = false) => {
    const hit = findCard(ctx, intParam(params(req).card_id))
    if (!hit) throw notFound()
    check(req, hit.project, write)
    return hit
  }
  api.get('/projects/columns/cards/:card_id', async (req) => {
    const { project, column, card } = cardOf(req)
    return cardView(ctx, project, column, card)
  })
  api.patch('/projects/columns/cards/:card_id', async (req) => {
    const { project, column, card } = cardOf(req, true)
    const b = body(req)
    const note = expectString(b, 'note')
    if (note !== undefined) card.note = note
    const archived = expectBool(b, 'archived')
    if (archived !== undefined) card.archived = archived
    card.updatedAt = ctx.emulator.clock.iso()
    return cardView(ctx, project, column, card)
  })
  api.delete('/projects/columns/cards/:card_id', async (req, reply) => {
    const { column, card } = cardOf(req, true)
    column.cards.splice(column.cards.indexOf(card), 1)
    return reply.code(204).send()
  })
  api.post('/projects/columns/cards/:card_id/moves', async (req, reply) => {
    cardOf(req, true)
    const b = body(req)
    const columnId = b.column_id
    moveCard(
      ctx,
      principalOf(req).user!,
      intParam(params(req).card_id),
      expectString(b, 'position', true),
      typeof columnId === 'number' ? columnId : undefined,
    )
    return reply.code(201).send({})
  })
}
