// Who is asking (the caller's context) and what they may reach. A token reaches the boards its
// member belongs to; public boards are readable by anyone with a key. Anything else answers
// 401 `unauthorized permission requested`, as the real service does for private boards.
import { invalidId, notFound, unauthorized } from './errors.ts'
import { HEX24, SHORT_LINK } from './params.ts'
import type { App, Board, Card, Checklist, Label, List, Member, Scope, Store, Token } from './store.ts'
import { SCOPES } from './store.ts'

export interface Ctx {
  app: App | null
  token: Token | null
  member: Member | null
  scopes: Set<Scope>
  /** A change made through the control API (`/_sandbox/act`, `/_sandbox/seed`). */
  internal: boolean
}

export type Need = 'read' | 'write'

export function memberCtx(member: Member): Ctx {
  return { app: null, token: null, member, scopes: new Set(SCOPES), internal: true }
}

export function requireScope(ctx: Ctx, scope: Scope): void {
  if (!ctx.scopes.has(scope)) throw unauthorized()
}

export function requireMember(ctx: Ctx, scope: Scope = 'read'): Member {
  if (!ctx.member) throw unauthorized()
  requireScope(ctx, scope)
  return ctx.member
}

export function checkBoard(_s: Store, ctx: Ctx, board: Board, need: Need): Board {
  if (need === 'read' && board.permissionLevel === 'public') return board
  const member = requireMember(ctx, need)
  const membership = board.memberships.find((m) => m.idMember === member.id)
  if (!membership) throw unauthorized()
  if (need === 'write' && membership.memberType === 'observer') throw unauthorized()
  return board
}

function parseId(raw: string, allowShortLink: boolean): string {
  if (HEX24.test(raw) || (allowShortLink && SHORT_LINK.test(raw))) return raw
  throw invalidId()
}

export function boardFor(s: Store, ctx: Ctx, raw: string, need: Need): Board {
  const board = s.findBoard(parseId(raw, true))
  if (!board) throw notFound()
  return checkBoard(s, ctx, board, need)
}

export function cardFor(s: Store, ctx: Ctx, raw: string, need: Need): { card: Card; board: Board } {
  const card = s.findCard(parseId(raw, true))
  if (!card) throw notFound()
  const board = s.boards.get(card.idBoard)!
  checkBoard(s, ctx, board, need)
  return { card, board }
}

export function listFor(s: Store, ctx: Ctx, raw: string, need: Need): { list: List; board: Board } {
  const list = s.lists.get(parseId(raw, false))
  if (!list) throw notFound()
  const board = s.boards.get(list.idBoard)!
  checkBoard(s, ctx, board, need)
  return { list, board }
}

export function labelFor(s: Store, ctx: Ctx, raw: string, need: Need): { label: Label; board: Board } {
  const label = s.labels.get(parseId(raw, false))
  if (!label) throw notFound()
  const board = s.boards.get(label.idBoard)!
  checkBoard(s, ctx, board, need)
  return { label, board }
}

export function checklistFor(
  s: Store,
  ctx: Ctx,
  raw: string,
  need: Need,
): { checklist: Checklist; card: Card; board: Board } {
  const checklist = s.checklists.get(parseId(raw, false))
  if (!checklist) throw notFound()
  const card = s.cards.get(checklist.idCard)!
  const board = s.boards.get(checklist.idBoard)!
  checkBoard(s, ctx, board, need)
  return { checklist, card, board }
}

export function canRead(s: Store, idMember: string, board: Board): boolean {
  return board.permissionLevel === 'public' || s.isOnBoard(board, idMember)
}
