// Board and list changes.
import { boardFor, type Ctx, checkBoard, listFor, requireMember } from '../access.ts'
import { notify, record, ref } from '../activity.ts'
import { invalidId, invalidValue, notFound } from '../errors.ts'
import { bool, HEX24, oneOf, type Params, pos, resolvePos, str } from '../params.ts'
import type { Board, List, Store } from '../store.ts'

export const POS_STEP = 16384
const DEFAULT_LABEL_COLORS = ['green', 'yellow', 'orange', 'red', 'purple', 'blue']
const DEFAULT_LISTS = ['To Do', 'Doing', 'Done']

export function createBoard(s: Store, ctx: Ctx, p: Params): Board {
  const actor = requireMember(ctx, 'write')
  const name = str(p, 'name', { nonEmpty: true })
  if (name === undefined) throw invalidValue('name')
  const desc = str(p, 'desc') ?? ''
  const defaultLabels = bool(p, 'defaultLabels') ?? true
  const defaultLists = bool(p, 'defaultLists') ?? true
  const permissionLevel =
    oneOf(p, 'prefs_permissionLevel', ['private', 'org', 'public'] as const) ?? 'private'
  // Every board is in a workspace: the one named (the member's own is the only one emulated) or theirs.
  const idOrganization = str(p, 'idOrganization') ?? actor.idOrganization
  if (idOrganization !== actor.idOrganization) throw invalidValue('idOrganization')
  const now = s.now()
  const board: Board = {
    id: s.newId(),
    name,
    desc,
    closed: false,
    idOrganization,
    shortLink: s.newShortLink(),
    permissionLevel,
    memberships: [{ id: s.newId(), idMember: actor.id, memberType: 'admin' }],
    dateLastActivity: now,
    nextIdShort: 1,
  }
  s.boards.set(board.id, board)
  if (defaultLabels) {
    for (const color of DEFAULT_LABEL_COLORS) {
      const id = s.newId()
      s.labels.set(id, { id, idBoard: board.id, name: '', color })
    }
  }
  if (defaultLists) {
    DEFAULT_LISTS.forEach((listName, i) => {
      const id = s.newId()
      s.lists.set(id, {
        id,
        name: listName,
        closed: false,
        pos: POS_STEP * (i + 1),
        idBoard: board.id,
        subscribers: new Set(),
      })
    })
  }
  record(s, actor, 'createBoard', { board: ref.board(board) }, 'action_create_board', { board })
  return board
}

export function updateBoard(s: Store, ctx: Ctx, rawId: string, p: Params): Board {
  const board = boardFor(s, ctx, rawId, 'write')
  const actor = ctx.member!
  const name = str(p, 'name', { nonEmpty: true })
  const desc = str(p, 'desc')
  const closed = bool(p, 'closed')
  const permissionLevel =
    oneOf(p, 'prefs/permissionLevel', ['private', 'org', 'public'] as const) ??
    oneOf(p, 'prefs_permissionLevel', ['private', 'org', 'public'] as const)
  const change = (field: string, old: unknown, value: unknown, key: string) =>
    record(
      s,
      actor,
      'updateBoard',
      { board: { ...ref.board(board), [field]: value }, old: { [field]: old } },
      key,
      { board },
    )
  if (name !== undefined && name !== board.name) {
    const old = board.name
    board.name = name
    change('name', old, name, 'action_update_board_name')
  }
  if (desc !== undefined && desc !== board.desc) {
    const old = board.desc
    board.desc = desc
    change('desc', old, desc, 'action_update_board_desc')
  }
  if (closed !== undefined && closed !== board.closed) {
    board.closed = closed
    change('closed', !closed, closed, closed ? 'action_closed_board' : 'action_reopened_board')
  }
  if (permissionLevel !== undefined && permissionLevel !== board.permissionLevel) {
    board.permissionLevel = permissionLevel
  }
  return board
}

export function addMemberToBoard(s: Store, ctx: Ctx, rawId: string, rawMember: string, p: Params): Board {
  const board = boardFor(s, ctx, rawId, 'write')
  const actor = ctx.member!
  if (!HEX24.test(rawMember)) throw invalidId()
  const member = s.members.get(rawMember)
  if (!member) throw notFound()
  const memberType = oneOf(p, 'type', ['admin', 'normal', 'observer'] as const) ?? 'normal'
  const existing = board.memberships.find((m) => m.idMember === member.id)
  if (existing) {
    existing.memberType = memberType
    return board
  }
  board.memberships.push({ id: s.newId(), idMember: member.id, memberType })
  const action = record(
    s,
    actor,
    'addMemberToBoard',
    { idMemberAdded: member.id, memberType, board: ref.board(board) },
    'action_added_member_to_board',
    { board },
  )
  notify(s, [member.id], actor, 'addedToBoard', action, { board: ref.board(board) })
  return board
}

function boardForBody(s: Store, ctx: Ctx, p: Params, field = 'idBoard'): Board {
  const raw = p[field]
  if (typeof raw !== 'string' || !HEX24.test(raw)) throw invalidValue(field)
  const board = s.boards.get(raw)
  if (!board) throw invalidValue(field)
  return checkBoard(s, ctx, board, 'write')
}

function listPositions(s: Store, idBoard: string, except?: string): number[] {
  return [...s.lists.values()].filter((l) => l.idBoard === idBoard && l.id !== except).map((l) => l.pos)
}

export function createList(s: Store, ctx: Ctx, p: Params): List {
  requireMember(ctx, 'write')
  const name = str(p, 'name', { nonEmpty: true })
  if (name === undefined) throw invalidValue('name')
  const board = boardForBody(s, ctx, p)
  const actor = ctx.member!
  const list: List = {
    id: s.newId(),
    name,
    closed: bool(p, 'closed') ?? false,
    pos: resolvePos(pos(p) ?? 'bottom', listPositions(s, board.id), POS_STEP),
    idBoard: board.id,
    subscribers: new Set(),
  }
  s.lists.set(list.id, list)
  record(
    s,
    actor,
    'createList',
    { list: ref.list(list), board: ref.board(board) },
    'action_added_list_to_board',
    {
      board,
      lists: [list],
    },
  )
  return list
}

export function updateList(s: Store, ctx: Ctx, rawId: string, p: Params): List {
  const { list, board } = listFor(s, ctx, rawId, 'write')
  const actor = ctx.member!
  const name = str(p, 'name', { nonEmpty: true })
  const closed = bool(p, 'closed')
  const position = pos(p)
  const subscribed = bool(p, 'subscribed')
  const target = p.idBoard !== undefined ? boardForBody(s, ctx, p) : undefined
  const change = (field: string, old: unknown, key: string, onBoard = board) =>
    record(
      s,
      actor,
      'updateList',
      {
        list: { ...ref.list(list), [field]: (list as unknown as Record<string, unknown>)[field] },
        old: { [field]: old },
        board: ref.board(onBoard),
      },
      key,
      { board: onBoard, lists: [list] },
    )
  if (name !== undefined && name !== list.name) {
    const old = list.name
    list.name = name
    change('name', old, 'action_renamed_list')
  }
  if (closed !== undefined && closed !== list.closed) {
    list.closed = closed
    change('closed', !closed, closed ? 'action_archived_list' : 'action_sent_list_to_board')
  }
  if (position !== undefined) {
    const old = list.pos
    list.pos = resolvePos(position, listPositions(s, list.idBoard, list.id), POS_STEP)
    if (list.pos !== old)
      change('pos', old, list.pos < old ? 'action_moved_list_left' : 'action_moved_list_right')
  }
  if (target && target.id !== list.idBoard) {
    const old = list.idBoard
    list.idBoard = target.id
    for (const c of s.cards.values()) {
      if (c.idList !== list.id) continue
      c.idBoard = target.id
      c.idLabels = []
      c.idMembers = c.idMembers.filter((m) => s.isOnBoard(target, m))
      for (const id of c.idChecklists) s.checklists.get(id)!.idBoard = target.id
    }
    change('idBoard', old, 'action_moved_list_to_board', target)
  }
  if (subscribed !== undefined) {
    if (subscribed) list.subscribers.add(actor.id)
    else list.subscribers.delete(actor.id)
  }
  return list
}
