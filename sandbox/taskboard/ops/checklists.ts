// Checklists, check items and labels.
import { boardFor, type Ctx, checkBoard, checklistFor, labelFor, requireMember } from '../access.ts'
import { record, ref } from '../activity.ts'
import { invalidValue } from '../errors.ts'
import { bool, date, HEX24, type Params, pos, resolvePos, str } from '../params.ts'
import type { Board, CheckItem, Checklist, Label, Store } from '../store.ts'
import { LABEL_COLORS } from '../store.ts'
import { POS_STEP } from './boards.ts'

export function createChecklist(s: Store, ctx: Ctx, p: Params, rawCard?: string): Checklist {
  requireMember(ctx, 'write')
  const idCard = rawCard ?? p.idCard
  if (typeof idCard !== 'string' || !HEX24.test(idCard)) throw invalidValue('idCard')
  const card = s.cards.get(idCard)
  if (!card) throw invalidValue('idCard')
  const board = checkBoard(s, ctx, s.boards.get(card.idBoard)!, 'write')
  const name = str(p, 'name') || 'Checklist'
  const siblings = card.idChecklists.map((id) => s.checklists.get(id)!.pos)
  const checklist: Checklist = {
    id: s.newId(),
    name,
    idBoard: board.id,
    idCard: card.id,
    pos: resolvePos(pos(p) ?? 'bottom', siblings, POS_STEP),
    checkItems: [],
  }
  s.checklists.set(checklist.id, checklist)
  card.idChecklists.push(checklist.id)
  const list = s.lists.get(card.idList)!
  record(
    s,
    ctx.member!,
    'addChecklistToCard',
    {
      checklist: { id: checklist.id, name: checklist.name },
      card: ref.card(card),
      board: ref.board(board),
      list: ref.list(list),
    },
    'action_add_checklist_to_card',
    { board, lists: [list], card },
  )
  return checklist
}

export function addCheckItem(s: Store, ctx: Ctx, rawId: string, p: Params): CheckItem {
  const { checklist, card, board } = checklistFor(s, ctx, rawId, 'write')
  const name = str(p, 'name', { nonEmpty: true })
  if (name === undefined) throw invalidValue('name')
  const checked = bool(p, 'checked') ?? false
  const due = date(p, 'due') ?? null
  let idMember: string | null = null
  if (p.idMember !== undefined && p.idMember !== null && p.idMember !== '') {
    if (typeof p.idMember !== 'string' || !s.isOnBoard(board, p.idMember)) throw invalidValue('idMember')
    idMember = p.idMember
  }
  const item: CheckItem = {
    id: s.newId(),
    idChecklist: checklist.id,
    name,
    state: checked ? 'complete' : 'incomplete',
    pos: resolvePos(
      pos(p) ?? 'bottom',
      checklist.checkItems.map((i) => i.pos),
      POS_STEP,
    ),
    due,
    idMember,
  }
  checklist.checkItems.push(item)
  const list = s.lists.get(card.idList)!
  record(
    s,
    ctx.member!,
    'createCheckItem',
    {
      checkItem: { id: item.id, name: item.name, state: item.state },
      checklist: { id: checklist.id, name: checklist.name },
      card: ref.card(card),
      board: ref.board(board),
      list: ref.list(list),
    },
    'action_add_checkitem_to_checklist',
    { board, lists: [list], card },
  )
  return item
}

/** Renames or moves a checklist (`PUT /1/checklists/{id}` and its per-field routes). */
export function updateChecklist(s: Store, ctx: Ctx, rawId: string, p: Params): Checklist {
  const { checklist, card, board } = checklistFor(s, ctx, rawId, 'write')
  const name = str(p, 'name', { nonEmpty: true })
  const position = pos(p)
  const old: Record<string, unknown> = {}
  if (name !== undefined && name !== checklist.name) {
    old.name = checklist.name
    checklist.name = name
  }
  if (position !== undefined) {
    const siblings = card.idChecklists
      .filter((id) => id !== checklist.id)
      .map((id) => s.checklists.get(id)!.pos)
    const next = resolvePos(position, siblings, POS_STEP)
    if (next !== checklist.pos) {
      old.pos = checklist.pos
      checklist.pos = next
    }
  }
  if (Object.keys(old).length > 0) {
    const list = s.lists.get(card.idList)!
    record(
      s,
      ctx.member!,
      'updateChecklist',
      {
        checklist: { id: checklist.id, name: checklist.name, pos: checklist.pos },
        old,
        card: ref.card(card),
        board: ref.board(board),
      },
      'action_update_checklist',
      { board, lists: [list], card },
    )
  }
  return checklist
}

function labelColor(p: Params, required: boolean): string | null | undefined {
  const v = p.color
  if (v === undefined) {
    if (required) throw invalidValue('color')
    return undefined
  }
  if (v === null || v === 'null' || v === '') return null
  if (typeof v !== 'string' || !(LABEL_COLORS as readonly string[]).includes(v)) throw invalidValue('color')
  return v
}

export function createLabel(s: Store, ctx: Ctx, p: Params, rawBoard?: string): Label {
  requireMember(ctx, 'write')
  let board: Board
  if (rawBoard !== undefined) board = boardFor(s, ctx, rawBoard, 'write')
  else {
    const idBoard = p.idBoard
    if (typeof idBoard !== 'string' || !HEX24.test(idBoard)) throw invalidValue('idBoard')
    const found = s.boards.get(idBoard)
    if (!found) throw invalidValue('idBoard')
    board = checkBoard(s, ctx, found, 'write')
  }
  const name = str(p, 'name', { max: 16384 })
  if (name === undefined) throw invalidValue('name')
  const color = labelColor(p, true)!
  const label: Label = { id: s.newId(), idBoard: board.id, name, color }
  s.labels.set(label.id, label)
  record(
    s,
    ctx.member!,
    'createLabel',
    { label: { id: label.id, name: label.name, color: label.color }, board: ref.board(board) },
    'action_create_label',
    { board },
  )
  return label
}

export function updateLabel(s: Store, ctx: Ctx, rawId: string, p: Params): Label {
  const { label, board } = labelFor(s, ctx, rawId, 'write')
  const name = str(p, 'name')
  const color = labelColor(p, false)
  const old: Record<string, unknown> = {}
  if (name !== undefined && name !== label.name) {
    old.name = label.name
    label.name = name
  }
  if (color !== undefined && color !== label.color) {
    old.color = label.color
    label.color = color
  }
  if (Object.keys(old).length > 0) {
    record(
      s,
      ctx.member!,
      'updateLabel',
      { label: { id: label.id, name: label.name, color: label.color }, old, board: ref.board(board) },
      'action_update_label',
      { board },
    )
  }
  return label
}

export function deleteLabel(s: Store, ctx: Ctx, rawId: string): void {
  const { label, board } = labelFor(s, ctx, rawId, 'write')
  for (const c of s.cards.values()) c.idLabels = c.idLabels.filter((id) => id !== label.id)
  s.labels.delete(label.id)
  record(
    s,
    ctx.member!,
    'deleteLabel',
    { label: { id: label.id, name: label.name, color: label.color }, board: ref.board(board) },
    'action_delete_label',
    { board },
  )
}
