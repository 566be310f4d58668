// Card changes: create, update (rename, move, archive, dates, members, labels), delete,
// comments, members, labels, attachments and check items. Each change records its action and
// tells the card's other members, the way the real service does.
import { type Ctx, cardFor, checkBoard, requireMember } from '../access.ts'
import { notify, record, ref } from '../activity.ts'
import { ApiError, invalidId, invalidValue, notFound } from '../errors.ts'
import { bool, date, HEX24, idArray, type Params, pos, resolvePos, str } from '../params.ts'
import type { Action, Attachment, Board, Card, CheckItem, Label, List, Member, Store } from '../store.ts'
import { POS_STEP } from './boards.ts'

export const MAX_ATTACHMENTS_PER_CARD = 100

export class LimitError extends ApiError {}

function listForBody(s: Store, ctx: Ctx, p: Params, field = 'idList'): { list: List; board: Board } {
  const raw = p[field]
  if (typeof raw !== 'string' || !HEX24.test(raw)) throw invalidValue(field)
  const list = s.lists.get(raw)
  if (!list) throw invalidValue(field)
  const board = checkBoard(s, ctx, s.boards.get(list.idBoard)!, 'write')
  return { list, board }
}

function cardPositions(s: Store, idList: string, except?: string): number[] {
  return [...s.cards.values()].filter((c) => c.idList === idList && c.id !== except).map((c) => c.pos)
}

function where(s: Store, card: Card) {
  return {
    board: s.boards.get(card.idBoard)!,
    list: s.lists.get(card.idList)!,
  }
}

function cardData(s: Store, card: Card) {
  const { board, list } = where(s, card)
  return { card: ref.card(card), board: ref.board(board), list: ref.list(list) }
}

function validMembers(
  s: Store,
  board: Board,
  ids: string[] | undefined,
  field: string,
): Member[] | undefined {
  return ids?.map((id) => {
    const m = s.members.get(id)
    if (!m || !s.isOnBoard(board, id)) throw invalidValue(field)
    return m
  })
}

function validLabels(s: Store, board: Board, ids: string[] | undefined, field: string): Label[] | undefined {
  return ids?.map((id) => {
    const l = s.labels.get(id)
    if (!l || l.idBoard !== board.id) throw invalidValue(field)
    return l
  })
}

function applyAddMember(s: Store, actor: Member, card: Card, member: Member): Action {
  const { board, list } = where(s, card)
  card.idMembers.push(member.id)
  const action = record(
    s,
    actor,
    'addMemberToCard',
    {
      idMember: member.id,
      member: { id: member.id, name: member.fullName },
      card: ref.card(card),
      board: ref.board(board),
      list: ref.list(list),
    },
    member.id === actor.id ? 'action_member_joined_card' : 'action_added_member_to_card',
    { board, lists: [list], card, models: [member.id] },
  )
  notify(s, [member.id], actor, 'addedToCard', action, cardData(s, card))
  return action
}

function applyRemoveMember(s: Store, actor: Member, card: Card, member: Member): void {
  const { board, list } = where(s, card)
  card.idMembers = card.idMembers.filter((id) => id !== member.id)
  const action = record(
    s,
    actor,
    'removeMemberFromCard',
    {
      idMember: member.id,
      member: { id: member.id, name: member.fullName },
      card: ref.card(card),
      board: ref.board(board),
      list: ref.list(list),
    },
    member.id === actor.id ? 'action_member_left_card' : 'action_removed_member_from_card',
    { board, lists: [list], card, models: [member.id] },
  )
  notify(s, [member.id], actor, 'removedFromCard', action, cardData(s, card))
}

function labelRef(l: Label) {
  return { id: l.id, name: l.name, color: l.color }
}

function applyAddLabel(s: Store, actor: Member, card: Card, label: Label): void {
  const { board, list } = where(s, card)
  card.idLabels.push(label.id)
  record(
    s,
    actor,
    'addLabelToCard',
    {
      label: labelRef(label),
      text: label.name,
      card: ref.card(card),
      board: ref.board(board),
      list: ref.list(list),
    },
    'action_add_label_to_card',
    { board, lists: [list], card },
  )
}

function applyRemoveLabel(s: Store, actor: Member, card: Card, label: Label): void {
  const { board, list } = where(s, card)
  card.idLabels = card.idLabels.filter((id) => id !== label.id)
  record(
    s,
    actor,
    'removeLabelFromCard',
    {
      label: labelRef(label),
      text: label.name,
      card: ref.card(card),
      board: ref.board(board),
      list: ref.list(list),
    },
    'action_remove_label_from_card',
    { board, lists: [list], card },
  )
}

export function createCard(s: Store, ctx: Ctx, p: Params): Card {
  requireMember(ctx, 'write')
  const { list, board } = listForBody(s, ctx, p)
  const actor = ctx.member!
  const name = str(p, 'name') ?? ''
  const desc = str(p, 'desc') ?? ''
  const position = pos(p) ?? 'bottom'
  const due = date(p, 'due') ?? null
  const start = date(p, 'start') ?? null
  const dueComplete = bool(p, 'dueComplete') ?? false
  const members = validMembers(s, board, idArray(p, 'idMembers'), 'idMembers') ?? []
  const labels = validLabels(s, board, idArray(p, 'idLabels'), 'idLabels') ?? []
  const urlSource = p.urlSource !== undefined ? attachmentUrl(p, 'urlSource') : undefined
  const card: Card = {
    id: s.newId(),
    name,
    desc,
    closed: false,
    idList: list.id,
    idBoard: board.id,
    idMembers: [],
    idLabels: [],
    idChecklists: [],
    pos: resolvePos(position, cardPositions(s, list.id), POS_STEP),
    due,
    start,
    dueComplete,
    dateLastActivity: s.now(),
    idShort: board.nextIdShort++,
    shortLink: s.newShortLink(),
    attachments: [],
    commentCount: 0,
    subscribers: new Set(),
  }
  s.cards.set(card.id, card)
  record(s, actor, 'createCard', cardData(s, card), 'action_create_card', { board, lists: [list], card })
  for (const m of members) applyAddMember(s, actor, card, m)
  for (const l of labels) applyAddLabel(s, actor, card, l)
  if (urlSource)
    applyAttachment(s, actor, card, {
      url: urlSource,
      name: urlSource,
      mimeType: str(p, 'mimeType', { max: 256 }) ?? '',
    })
  return card
}

export function updateCard(s: Store, ctx: Ctx, rawId: string, p: Params): Card {
  const { card, board } = cardFor(s, ctx, rawId, 'write')
  const actor = ctx.member!
  // Everything is validated before anything changes, so a bad parameter leaves the card as it was.
  const name = str(p, 'name')
  const desc = str(p, 'desc')
  const closed = bool(p, 'closed')
  const position = pos(p)
  const due = date(p, 'due')
  const start = date(p, 'start')
  const dueComplete = bool(p, 'dueComplete')
  const subscribed = bool(p, 'subscribed')
  const target = p.idList !== undefined ? listForBody(s, ctx, p) : undefined
  // A move to another board names the target list; idBoard, when given, has to agree with it.
  if (p.idBoard !== undefined && p.idBoard !== (target?.board.id ?? card.idBoard))
    throw invalidValue('idBoard')
  const targetBoard = target?.board ?? board
  const members = validMembers(s, targetBoard, idArray(p, 'idMembers'), 'idMembers')
  const labels = validLabels(s, targetBoard, idArray(p, 'idLabels'), 'idLabels')

  const cardMembers = () => card.idMembers.filter((id) => id !== actor.id)
  const change = (
    old: Record<string, unknown>,
    key: string,
    extra: Record<string, unknown> = {},
    notifyMembers = false,
  ) => {
    const { board: b, list } = where(s, card)
    const current = card as unknown as Record<string, unknown>
    const cardRef = { ...ref.card(card), ...Object.fromEntries(Object.keys(old).map((k) => [k, current[k]])) }
    const data = { card: cardRef, old, board: ref.board(b), list: ref.list(list), ...extra }
    const lists = [
      list,
      ...((extra.listBefore ? [s.lists.get((extra.listBefore as { id: string }).id)!] : []) as List[]),
    ]
    const action = record(s, actor, 'updateCard', data, key, { board: b, lists, card })
    if (notifyMembers)
      notify(s, cardMembers(), actor, 'changeCard', action, { ...cardData(s, card), ...extra, old })
  }

  if (target && target.board.id !== card.idBoard) {
    moveToBoard(s, actor, card, target, position)
  } else if (target && target.list.id !== card.idList) {
    const before = s.lists.get(card.idList)!
    const old: Record<string, unknown> = { idList: card.idList }
    card.idList = target.list.id
    if (position !== undefined) {
      old.pos = card.pos
      card.pos = resolvePos(position, cardPositions(s, card.idList, card.id), POS_STEP)
    }
    change(
      old,
      'action_move_card_from_list_to_list',
      { listBefore: ref.list(before), listAfter: ref.list(target.list) },
      true,
    )
  } else if (position !== undefined) {
    const old = card.pos
    card.pos = resolvePos(position, cardPositions(s, card.idList, card.id), POS_STEP)
    if (card.pos !== old)
      change({ pos: old }, card.pos < old ? 'action_moved_card_higher' : 'action_moved_card_lower')
  }
  if (closed !== undefined && closed !== card.closed) {
    card.closed = closed
    change({ closed: !closed }, closed ? 'action_archived_card' : 'action_sent_card_to_board', {}, true)
  }
  if (name !== undefined && name !== card.name) {
    const old = card.name
    card.name = name
    change({ name: old }, 'action_renamed_card')
  }
  if (desc !== undefined && desc !== card.desc) {
    const old = card.desc
    card.desc = desc
    change({ desc: old }, 'action_changed_description_of_card')
  }
  if (due !== undefined && due !== card.due) {
    const old = card.due
    card.due = due
    const key =
      old === null
        ? 'action_added_a_due_date'
        : due === null
          ? 'action_removed_a_due_date'
          : 'action_changed_a_due_date'
    change({ due: old }, key, {}, true)
  }
  if (start !== undefined && start !== card.start) {
    const old = card.start
    card.start = start
    const key =
      old === null
        ? 'action_added_a_start_date'
        : start === null
          ? 'action_removed_a_start_date'
          : 'action_changed_a_start_date'
    change({ start: old }, key)
  }
  if (dueComplete !== undefined && dueComplete !== card.dueComplete) {
    card.dueComplete = dueComplete
    change(
      { dueComplete: !dueComplete },
      dueComplete ? 'action_marked_the_due_date_complete' : 'action_marked_the_due_date_incomplete',
      {},
      true,
    )
  }
  if (members) {
    const wanted = new Set(members.map((m) => m.id))
    for (const id of [...card.idMembers])
      if (!wanted.has(id)) applyRemoveMember(s, actor, card, s.members.get(id)!)
    for (const m of members) if (!card.idMembers.includes(m.id)) applyAddMember(s, actor, card, m)
  }
  if (labels) {
    const wanted = new Set(labels.map((l) => l.id))
    for (const id of [...card.idLabels])
      if (!wanted.has(id)) applyRemoveLabel(s, actor, card, s.labels.get(id)!)
    for (const l of labels) if (!card.idLabels.includes(l.id)) applyAddLabel(s, actor, card, l)
  }
  if (subscribed !== undefined) {
    if (subscribed) card.subscribers.add(actor.id)
    else card.subscribers.delete(actor.id)
  }
  return card
}

/**
 * A move to another board is two actions, as the real service records it: `moveCardFromBoard` on
 * the board the card left (data.board is that board, data.boardTarget where it went, data.list the
 * list it left) and `moveCardToBoard` on the board it reached (data.board, data.boardSource,
 * data.list the list it reached). Each reaches its own board's webhooks and members; no
 * `updateCard` is recorded for the move. Labels stay behind (they belong to the board) and members
 * who are not on the new board come off the card.
 */
function moveToBoard(
  s: Store,
  actor: Member,
  card: Card,
  target: { list: List; board: Board },
  position: ReturnType<typeof pos>,
): void {
  const { board: from, list: before } = where(s, card)
  record(
    s,
    actor,
    'moveCardFromBoard',
    {
      board: ref.board(from),
      boardTarget: { id: target.board.id },
      card: ref.card(card),
      list: ref.list(before),
    },
    'action_move_card_from_board',
    { board: from, lists: [before], card },
  )
  card.idBoard = target.board.id
  card.idList = target.list.id
  card.idShort = target.board.nextIdShort++
  card.idLabels = []
  card.idMembers = card.idMembers.filter((id) => s.isOnBoard(target.board, id))
  for (const id of card.idChecklists) s.checklists.get(id)!.idBoard = target.board.id
  card.pos = resolvePos(position ?? 'bottom', cardPositions(s, card.idList, card.id), POS_STEP)
  const action = record(
    s,
    actor,
    'moveCardToBoard',
    {
      board: ref.board(target.board),
      boardSource: { id: from.id },
      card: ref.card(card),
      list: ref.list(target.list),
    },
    'action_move_card_to_board',
    { board: target.board, lists: [target.list], card },
  )
  notify(s, card.idMembers, actor, 'changeCard', action, cardData(s, card))
}

export function deleteCard(s: Store, ctx: Ctx, rawId: string): void {
  const { card, board } = cardFor(s, ctx, rawId, 'write')
  const list = s.lists.get(card.idList)!
  for (const id of card.idChecklists) s.checklists.delete(id)
  s.cards.delete(card.id)
  record(
    s,
    ctx.member!,
    'deleteCard',
    { card: { id: card.id, idShort: card.idShort }, list: ref.list(list), board: ref.board(board) },
    'action_delete_card',
    { board, lists: [list], models: [card.id] },
  )
}

export function addComment(s: Store, ctx: Ctx, rawId: string, p: Params): Action {
  const { card, board } = cardFor(s, ctx, rawId, 'write')
  const actor = ctx.member!
  const text = str(p, 'text', { nonEmpty: true })
  if (text === undefined) throw invalidValue('text')
  const list = s.lists.get(card.idList)!
  card.commentCount++
  const action = record(
    s,
    actor,
    'commentCard',
    { text, card: ref.card(card), board: ref.board(board), list: ref.list(list) },
    'action_comment_on_card',
    { board, lists: [list], card },
  )
  const data = { text, ...cardData(s, card) }
  // An @mention outranks the plain comment notification for the mentioned member.
  const mentioned = new Set<string>()
  for (const [, username] of text.matchAll(/@([a-z0-9_]+)/gi)) {
    const m = s.findMember(username!)
    if (m && s.isOnBoard(board, m.id)) mentioned.add(m.id)
  }
  notify(s, mentioned, actor, 'mentionedOnCard', action, data)
  notify(
    s,
    card.idMembers.filter((id) => !mentioned.has(id)),
    actor,
    'commentCard',
    action,
    data,
  )
  return action
}

export function addMemberToCard(s: Store, ctx: Ctx, rawId: string, p: Params): Card {
  const { card, board } = cardFor(s, ctx, rawId, 'write')
  const value = p.value
  if (typeof value !== 'string' || !HEX24.test(value)) throw invalidValue('value')
  const member = s.members.get(value)
  if (!member || !s.isOnBoard(board, member.id)) throw invalidValue('value')
  if (card.idMembers.includes(member.id)) throw new ApiError(400, 'member is already on the card')
  applyAddMember(s, ctx.member!, card, member)
  return card
}

export function removeMemberFromCard(s: Store, ctx: Ctx, rawId: string, idMember: string): Card {
  const { card } = cardFor(s, ctx, rawId, 'write')
  if (!HEX24.test(idMember)) throw invalidId()
  if (!card.idMembers.includes(idMember)) throw new ApiError(400, 'member is not on the card')
  applyRemoveMember(s, ctx.member!, card, s.members.get(idMember)!)
  return card
}

export function addLabelToCard(s: Store, ctx: Ctx, rawId: string, p: Params): Card {
  const { card, board } = cardFor(s, ctx, rawId, 'write')
  const value = p.value
  if (typeof value !== 'string' || !HEX24.test(value)) throw invalidValue('value')
  const label = s.labels.get(value)
  if (!label || label.idBoard !== board.id) throw invalidValue('value')
  if (card.idLabels.includes(label.id)) throw new ApiError(400, 'that label is already on the card')
  applyAddLabel(s, ctx.member!, card, label)
  return card
}

export function removeLabelFromCard(s: Store, ctx: Ctx, rawId: string, idLabel: string): Card {
  const { card } = cardFor(s, ctx, rawId, 'write')
  if (!HEX24.test(idLabel)) throw invalidId()
  if (!card.idLabels.includes(idLabel)) throw new ApiError(400, 'that label is not on the card')
  applyRemoveLabel(s, ctx.member!, card, s.labels.get(idLabel)!)
  return card
}

function attachmentUrl(p: Params, field: string): string {
  const url = str(p, field, { max: 2048 })
  if (url === undefined) throw invalidValue(field)
  try {
    const u = new URL(url)
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme')
  } catch {
    throw invalidValue(field)
  }
  return url
}

function applyAttachment(
  s: Store,
  actor: Member,
  card: Card,
  a: { url: string; name: string; mimeType: string },
): Attachment {
  if (card.attachments.length >= MAX_ATTACHMENTS_PER_CARD) {
    throw new LimitError(
      422,
      JSON.stringify({
        error: 'ATTACHMENTS_PER_CARD_LIMIT_EXCEEDED',
        message: 'Attachments per card limit exceeded',
      }),
    )
  }
  const lastSegment = decodeURIComponent(new URL(a.url).pathname.split('/').pop() ?? '')
  const attachment: Attachment = {
    id: s.newId(),
    name: a.name,
    url: a.url,
    bytes: null,
    date: s.now(),
    idMember: actor.id,
    isUpload: false,
    mimeType: a.mimeType,
    fileName: lastSegment || null,
  }
  card.attachments.push(attachment)
  const { board, list } = where(s, card)
  const action = record(
    s,
    actor,
    'addAttachmentToCard',
    {
      attachment: { id: attachment.id, name: attachment.name, url: attachment.url },
      card: ref.card(card),
      board: ref.board(board),
      list: ref.list(list),
    },
    'action_add_attachment_to_card',
    { board, lists: [list], card },
  )
  notify(s, card.idMembers, actor, 'addAttachmentToCard', action, cardData(s, card))
  return attachment
}

export function addAttachment(s: Store, ctx: Ctx, rawId: string, p: Params): Attachment {
  const { card } = cardFor(s, ctx, rawId, 'write')
  const url = attachmentUrl(p, 'url')
  const name = str(p, 'name', { max: 256 }) ?? url
  const mimeType = str(p, 'mimeType', { max: 256 }) ?? ''
  return applyAttachment(s, ctx.member!, card, { url, name, mimeType })
}

export function updateCheckItem(s: Store, ctx: Ctx, rawCard: string, rawItem: string, p: Params): CheckItem {
  const { card, board } = cardFor(s, ctx, rawCard, 'write')
  if (!HEX24.test(rawItem)) throw invalidId()
  let item: CheckItem | undefined
  for (const id of card.idChecklists) {
    item = s.checklists.get(id)?.checkItems.find((i) => i.id === rawItem)
    if (item) break
  }
  if (!item) throw notFound()
  const actor = ctx.member!
  const name = str(p, 'name', { nonEmpty: true })
  const rawState = p.state
  let state: CheckItem['state'] | undefined
  if (rawState !== undefined) {
    if (rawState === 'complete' || rawState === true || rawState === 'true') state = 'complete'
    else if (rawState === 'incomplete' || rawState === false || rawState === 'false') state = 'incomplete'
    else throw invalidValue('state')
  }
  const position = pos(p)
  const due = date(p, 'due')
  let idChecklist: string | undefined
  if (p.idChecklist !== undefined) {
    if (typeof p.idChecklist !== 'string' || !card.idChecklists.includes(p.idChecklist))
      throw invalidValue('idChecklist')
    idChecklist = p.idChecklist
  }
  let idMember: string | null | undefined
  if (p.idMember !== undefined) {
    if (p.idMember === null || p.idMember === '' || p.idMember === 'null') idMember = null
    else if (typeof p.idMember === 'string' && s.isOnBoard(board, p.idMember)) idMember = p.idMember
    else throw invalidValue('idMember')
  }

  const list = s.lists.get(card.idList)!
  const checklistOf = () => s.checklists.get(item.idChecklist)!
  if (idChecklist && idChecklist !== item.idChecklist) {
    const from = checklistOf()
    from.checkItems = from.checkItems.filter((i) => i !== item)
    item.idChecklist = idChecklist
    checklistOf().checkItems.push(item)
  }
  if (position !== undefined) {
    item.pos = resolvePos(
      position,
      checklistOf()
        .checkItems.filter((i) => i !== item)
        .map((i) => i.pos),
      POS_STEP,
    )
  }
  if (due !== undefined) item.due = due
  if (idMember !== undefined) item.idMember = idMember
  const base = () => ({
    checklist: { id: checklistOf().id, name: checklistOf().name },
    card: ref.card(card),
    board: ref.board(board),
    list: ref.list(list),
  })
  if (name !== undefined && name !== item.name) {
    const old = item.name
    item.name = name
    record(
      s,
      actor,
      'updateCheckItem',
      { checkItem: { id: item.id, name: item.name, state: item.state }, old: { name: old }, ...base() },
      'action_renamed_checkitem',
      { board, lists: [list], card },
    )
  }
  if (state !== undefined && state !== item.state) {
    item.state = state
    record(
      s,
      actor,
      'updateCheckItemStateOnCard',
      { checkItem: { id: item.id, name: item.name, state: item.state }, ...base() },
      state === 'complete' ? 'action_completed_checkitem' : 'action_marked_checkitem_incomplete',
      { board, lists: [list], card },
    )
  }
  return item
}
