// Projects (v2: fields, items, single-select values) and classic project boards (columns, cards).
// (choice) `projects_v2_item` events go to the project owner's account hooks and to the hooks of
// the repository holding the item's issue or pull request; `project_card` events go to the hooks
// of the project's repository (or the owner's account hooks for account projects).
import { ApiError, type Ctx, notFound, validationFailed } from './context.ts'
import { emit, envelope } from './events.ts'
import { nodeId } from './ids.ts'
import type {
  ClassicProject,
  ProjectCard,
  ProjectField,
  ProjectItem,
  ProjectItemValue,
  ProjectV2,
  User,
} from './store.ts'
import { orgView, userView } from './views.ts'
import { cardView } from './views-misc.ts'

export function findProjectV2(ctx: Ctx, node: string): ProjectV2 | undefined {
  return ctx.store.projectsV2.find((p) => p.nodeId === node)
}

export function findItem(ctx: Ctx, node: string): { project: ProjectV2; item: ProjectItem } | undefined {
  for (const project of ctx.store.projectsV2) {
    const item = project.items.find((i) => i.nodeId === node)
    if (item) return { project, item }
  }
  return undefined
}

export function contentNodeId(ctx: Ctx, item: ProjectItem): string {
  if (item.contentType === 'DraftIssue') return nodeId('DI', item.id)
  const issue = ctx.store.repos.get(item.repoId!)?.issues.get(item.number!)
  // The content's repository may have been deleted since; the item keeps a dangling id then.
  if (!issue) return nodeId(item.contentType === 'PullRequest' ? 'PR' : 'I', 0)
  return issue.pull ? nodeId('PR', issue.pull.id) : nodeId('I', issue.id)
}

export function itemView(ctx: Ctx, project: ProjectV2, item: ProjectItem) {
  return {
    id: item.id,
    node_id: item.nodeId,
    project_node_id: project.nodeId,
    content_node_id: contentNodeId(ctx, item),
    content_type: item.contentType,
    creator: userView(ctx, ctx.store.user(item.creatorId)),
    created_at: item.createdAt,
    updated_at: item.updatedAt,
    archived_at: item.archived ? item.updatedAt : null,
  }
}

function optionView(field: ProjectField, value: ProjectItemValue | undefined) {
  if (!value) return null
  if (field.dataType === 'SINGLE_SELECT') {
    const o = field.options.find((x) => x.id === value.optionId)
    return o ? { id: o.id, name: o.name, color: o.color, description: o.description } : null
  }
  return value.text ?? value.number ?? value.date ?? null
}

export interface FieldValueInput {
  singleSelectOptionId?: string
  text?: string
  number?: number
  date?: string
  iterationId?: string
}

/** Sets one field of one item; `null` clears it. Throws a message for the GraphQL error list. */
export function setItemField(
  ctx: Ctx,
  actor: User,
  project: ProjectV2,
  item: ProjectItem,
  field: ProjectField,
  input: FieldValueInput | null,
): void {
  let next: ProjectItemValue | undefined
  if (input !== null) {
    switch (field.dataType) {
      case 'SINGLE_SELECT':
        if (!input.singleSelectOptionId || !field.options.some((o) => o.id === input.singleSelectOptionId))
          throw new ApiError(422, 'The single select option Id does not belong to the field')
        next = { optionId: input.singleSelectOptionId }
        break
      case 'TEXT':
        if (typeof input.text !== 'string')
          throw new ApiError(422, 'A text value is required for a text field')
        next = { text: input.text }
        break
      case 'NUMBER':
        if (typeof input.number !== 'number')
          throw new ApiError(422, 'A number value is required for a number field')
        next = { number: input.number }
        break
      case 'DATE':
        if (typeof input.date !== 'string' || Number.isNaN(Date.parse(input.date)))
          throw new ApiError(422, 'A date value is required for a date field')
        next = { date: input.date.slice(0, 10) }
        break
      default:
        throw new ApiError(
          422,
          `The field of type ${field.dataType.toLowerCase()} is currently not supported`,
        )
    }
  }
  const before = item.values.get(field.id)
  if (next) item.values.set(field.id, next)
  else item.values.delete(field.id)
  const now = ctx.emulator.clock.iso()
  item.updatedAt = now
  project.updatedAt = now
  emitItemEdited(ctx, actor, project, item, field, before, next)
}

/**
 * `projects_v2_item` is an organization event: the code host sends it to the hooks of the
 * organization that owns the project (with `organization`), and never for a personal account's
 * projects, nor to repository hooks.
 */
function projectEnvelope(ctx: Ctx, owner: User, actor: User) {
  return { organization: orgView(ctx, owner), sender: userView(ctx, actor) }
}

function emitItemEdited(
  ctx: Ctx,
  actor: User,
  project: ProjectV2,
  item: ProjectItem,
  field: ProjectField,
  before: ProjectItemValue | undefined,
  after: ProjectItemValue | undefined,
): void {
  const owner = ctx.store.user(project.ownerId)
  emit(
    ctx,
    'projects_v2_item',
    {
      action: 'edited',
      projects_v2_item: itemView(ctx, project, item),
      changes: {
        field_value: {
          field_node_id: field.nodeId,
          field_type: field.dataType.toLowerCase(),
          field_name: field.name,
          project_number: project.number,
          from: optionView(field, before),
          to: optionView(field, after),
        },
      },
      ...projectEnvelope(ctx, owner, actor),
    },
    { org: owner },
  )
}

export function addItem(
  ctx: Ctx,
  actor: User,
  project: ProjectV2,
  content: { repoId: number; number: number; type: 'Issue' | 'PullRequest' },
): ProjectItem {
  const existing = project.items.find((i) => i.repoId === content.repoId && i.number === content.number)
  if (existing) return existing
  const now = ctx.emulator.clock.iso()
  const id = ctx.store.nextId('project_item', 80_000_001)
  const item: ProjectItem = {
    id,
    nodeId: nodeId('PVTI', id),
    contentType: content.type,
    repoId: content.repoId,
    number: content.number,
    draftTitle: null,
    draftBody: null,
    values: new Map(),
    creatorId: actor.id,
    createdAt: now,
    updatedAt: now,
    archived: false,
  }
  project.items.push(item)
  emit(
    ctx,
    'projects_v2_item',
    {
      action: 'created',
      projects_v2_item: itemView(ctx, project, item),
      ...projectEnvelope(ctx, ctx.store.user(project.ownerId), actor),
    },
    { org: ctx.store.user(project.ownerId) },
  )
  return item
}

// Classic projects.

export function findColumn(ctx: Ctx, columnId: number) {
  for (const project of ctx.store.classicProjects) {
    const column = project.columns.find((c) => c.id === columnId)
    if (column) return { project, column }
  }
  return undefined
}

export function findCard(ctx: Ctx, cardId: number) {
  for (const project of ctx.store.classicProjects)
    for (const column of project.columns) {
      const card = column.cards.find((c) => c.id === cardId)
      if (card) return { project, column, card }
    }
  return undefined
}

function cardEvent(
  ctx: Ctx,
  actor: User,
  project: ClassicProject,
  column: ClassicProject['columns'][number],
  card: ProjectCard,
  action: string,
  extra: Record<string, unknown> = {},
) {
  const repo = project.repoId !== null ? (ctx.store.repos.get(project.repoId) ?? null) : null
  const idx = column.cards.indexOf(card)
  emit(
    ctx,
    'project_card',
    {
      action,
      ...extra,
      project_card: {
        ...cardView(ctx, project, column, card),
        after_id: idx > 0 ? column.cards[idx - 1].id : null,
      },
      ...envelope(ctx, repo, actor),
    },
    { repo },
  )
}

export function createCard(
  ctx: Ctx,
  actor: User,
  columnId: number,
  input: { note?: string | null; contentId?: number; contentType?: string },
): { project: ClassicProject; column: ClassicProject['columns'][number]; card: ProjectCard } {
  const found = findColumn(ctx, columnId)
  if (!found) throw notFound()
  const { project, column } = found
  let repoId: number | null = null
  let number: number | null = null
  if (input.contentId !== undefined) {
    if (input.note)
      throw validationFailed([
        {
          resource: 'Project Card',
          code: 'unprocessable',
          field: 'data',
          message: 'Note and content cannot both be set',
        },
      ])
    const hit =
      input.contentType === 'PullRequest'
        ? ctx.store.findPullById(input.contentId)
        : ctx.store.findIssueById(input.contentId)
    if (!hit)
      throw validationFailed([
        {
          resource: 'Project Card',
          code: 'unprocessable',
          field: 'data',
          message: 'Could not resolve to a node',
        },
      ])
    if (
      project.columns.some((c) =>
        c.cards.some((k) => k.repoId === hit.repo.id && k.number === hit.issue.number),
      )
    )
      throw validationFailed([
        {
          resource: 'Project Card',
          code: 'unprocessable',
          field: 'data',
          message: 'Project already has the associated issue',
        },
      ])
    repoId = hit.repo.id
    number = hit.issue.number
  } else if (!input.note)
    throw validationFailed([{ resource: 'Project Card', code: 'missing_field', field: 'note' }])
  const now = ctx.emulator.clock.iso()
  const card: ProjectCard = {
    id: ctx.store.nextId('card', 90_000_001),
    note: input.note ?? null,
    repoId,
    number,
    creatorId: actor.id,
    createdAt: now,
    updatedAt: now,
    archived: false,
  }
  column.cards.unshift(card)
  cardEvent(ctx, actor, project, column, card, 'created')
  return { project, column, card }
}

export function moveCard(
  ctx: Ctx,
  actor: User,
  cardId: number,
  position: string | undefined,
  columnId: number | undefined,
): void {
  const found = findCard(ctx, cardId)
  if (!found) throw notFound()
  const { project, column: from, card } = found
  const target = columnId !== undefined ? project.columns.find((c) => c.id === columnId) : from
  if (!target) throw validationFailed([{ resource: 'Project Card', code: 'invalid', field: 'column_id' }])
  const m = /^(top|bottom|after:(\d+))$/.exec(position ?? '')
  if (!m) throw validationFailed([{ resource: 'Project Card', code: 'invalid', field: 'position' }])
  from.cards.splice(from.cards.indexOf(card), 1)
  if (m[1] === 'top') target.cards.unshift(card)
  else if (m[1] === 'bottom') target.cards.push(card)
  else {
    const after = target.cards.findIndex((c) => c.id === Number(m[2]))
    if (after < 0) {
      from.cards.push(card)
      throw validationFailed([{ resource: 'Project Card', code: 'invalid', field: 'position' }])
    }
    target.cards.splice(after + 1, 0, card)
  }
  card.updatedAt = ctx.emulator.clock.iso()
  cardEvent(
    ctx,
    actor,
    project,
    target,
    card,
    'moved',
    target.id !== from.id ? { changes: { column_id: { from: from.id } } } : {},
  )
}
