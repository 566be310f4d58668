// The action log and notifications. Every change made through the API or the control API goes
// through record(), so both produce the same actions and the same webhook deliveries.
import type { Action, Board, Card, List, Member, Store } from './store.ts'

export const ref = {
  board: (b: Board) => ({ id: b.id, name: b.name, shortLink: b.shortLink }),
  list: (l: List) => ({ id: l.id, name: l.name }),
  card: (c: Card) => ({ id: c.id, name: c.name, idShort: c.idShort, shortLink: c.shortLink }),
}

export interface ActionScope {
  board?: Board
  lists?: List[]
  card?: Card
  /** Further models that receive the action (an added member, for example). */
  models?: string[]
}

export function record(
  s: Store,
  actor: Member,
  type: string,
  data: Record<string, unknown>,
  translationKey: string,
  scope: ActionScope,
): Action {
  const now = s.now()
  const models = new Set<string>([actor.id, ...(scope.models ?? [])])
  if (scope.board) {
    models.add(scope.board.id)
    for (const id of s.boardMemberIds(scope.board)) models.add(id)
    scope.board.dateLastActivity = now
  }
  for (const l of scope.lists ?? []) models.add(l.id)
  if (scope.card) {
    models.add(scope.card.id)
    scope.card.dateLastActivity = now
  }
  const action: Action = {
    id: s.newId(),
    seq: s.nextSeq(),
    idMemberCreator: actor.id,
    type,
    date: now,
    data,
    translationKey,
    models: [...models],
  }
  s.actions.push(action)
  s.onAction(action)
  return action
}

/** Tells each of `to` (except the actor) about an action. */
export function notify(
  s: Store,
  to: Iterable<string>,
  actor: Member,
  type: string,
  action: Action,
  data: Record<string, unknown>,
): void {
  for (const idMember of new Set(to)) {
    if (idMember === actor.id || !s.members.has(idMember)) continue
    s.notifications.push({
      id: s.newId(),
      seq: s.nextSeq(),
      idMember,
      unread: true,
      type,
      date: action.date,
      data,
      idMemberCreator: actor.id,
      idAction: action.id,
    })
  }
}

/** The `filter` parameter of action listings: `all`, or types, optionally `type:field`. */
export function actionFilter(filter: unknown, fallback: string): (a: Action) => boolean {
  const spec = typeof filter === 'string' && filter !== '' ? filter : fallback
  if (spec === 'all') return () => true
  const parts = spec.split(',').map((p) => p.trim())
  return (a) =>
    parts.some((p) => {
      const [type, field] = p.split(':')
      if (type !== a.type) return false
      if (!field) return true
      const old = a.data.old as Record<string, unknown> | undefined
      return !!old && field in old
    })
}
