// /1/members and /1/notifications.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { type Ctx, canRead, requireMember, requireScope } from '../access.ts'
import { invalidId, invalidValue, notFound, unauthorized } from '../errors.ts'
import { bool, HEX24, pickFields } from '../params.ts'
import type { Member, Notification, Store } from '../store.ts'
import { boardView, cardView, memberView, notificationView } from '../views.ts'
import { cardFilter } from './boards.ts'
import { ctxOf, type Deps, idParam, params, window } from './helpers.ts'

function memberFor(s: Store, ctx: Ctx, raw: string): Member {
  if (raw === 'me') return requireMember(ctx, 'read')
  const m = s.findMember(raw)
  if (!m) throw notFound()
  return m
}

function ownNotification(s: Store, ctx: Ctx, raw: string): Notification {
  const member = requireMember(ctx, 'read')
  if (!HEX24.test(raw)) throw invalidId()
  const n = s.notifications.find((x) => x.id === raw)
  if (!n) throw notFound()
  if (n.idMember !== member.id) throw unauthorized()
  return n
}

export function registerMemberRoutes(api: FastifyInstance, { store: s }: Deps): void {
  api.get('/1/members/:id', async (req) => {
    const member = memberFor(s, ctxOf(req), idParam(req))
    return pickFields(memberView(s, member), params(req).fields)
  })

  api.get('/1/members/:id/boards', async (req) => {
    const ctx = ctxOf(req)
    const viewer = requireMember(ctx, 'read')
    const member = memberFor(s, ctx, idParam(req))
    const p = params(req)
    const filter = String(p.filter ?? 'all')
    const filters = filter.split(',')
    for (const f of filters) {
      if (!['all', 'open', 'closed', 'members', 'organization', 'public', 'starred'].includes(f))
        throw invalidValue('filter')
    }
    return [...s.boards.values()]
      .filter((b) => s.isOnBoard(b, member.id) && (viewer.id === member.id || canRead(s, viewer.id, b)))
      .filter((b) =>
        filters.some((f) =>
          f === 'open'
            ? !b.closed
            : f === 'closed'
              ? b.closed
              : f === 'public'
                ? b.permissionLevel === 'public'
                : f === 'organization'
                  ? true
                  : f !== 'starred',
        ),
      )
      .map((b) => pickFields(boardView(s, b), p.fields))
  })

  // The cards a member is on, on the boards the caller can read.
  api.get('/1/members/:id/cards', async (req) => {
    const ctx = ctxOf(req)
    const viewer = requireMember(ctx, 'read')
    const member = memberFor(s, ctx, idParam(req))
    const p = params(req)
    const keep = cardFilter(s, p.filter)
    return [...s.cards.values()]
      .filter((c) => c.idMembers.includes(member.id))
      .filter((c) => canRead(s, viewer.id, s.boards.get(c.idBoard)!))
      .filter(keep)
      .map((c) => pickFields(cardView(s, c, viewer.id), p.fields))
  })

  const listNotifications = async (req: FastifyRequest) => {
    const ctx = ctxOf(req)
    const me = requireMember(ctx, 'read')
    const member = memberFor(s, ctx, idParam(req))
    if (member.id !== me.id) throw unauthorized()
    const p = params(req)
    const readFilter = String(p.read_filter ?? 'all')
    if (!['all', 'read', 'unread'].includes(readFilter)) throw invalidValue('read_filter')
    const types =
      typeof p.filter === 'string' && p.filter !== 'all' && p.filter !== '' ? p.filter.split(',') : null
    const mine = s.notifications.filter((n) => n.idMember === me.id)
    const matching = mine.filter(
      (n) =>
        (readFilter === 'all' || (readFilter === 'unread') === n.unread) &&
        (types === null || types.includes(n.type)),
    )
    return window(matching, p, mine).map(notificationView)
  }
  api.get('/1/members/:id/notifications', listNotifications)

  api.get('/1/notifications/:id', async (req) =>
    notificationView(ownNotification(s, ctxOf(req), idParam(req))),
  )

  // Marking notifications read needs the `account` scope, as on the real service.
  api.put('/1/notifications/:id', async (req) => {
    const ctx = ctxOf(req)
    const n = ownNotification(s, ctx, idParam(req))
    requireScope(ctx, 'account')
    const unread = bool(params(req), 'unread')
    if (unread !== undefined) n.unread = unread
    return notificationView(n)
  })

  api.put('/1/notifications/:id/unread', async (req) => {
    const ctx = ctxOf(req)
    const n = ownNotification(s, ctx, idParam(req))
    requireScope(ctx, 'account')
    const unread = bool(params(req), 'value')
    if (unread === undefined) throw invalidValue('value')
    n.unread = unread
    return notificationView(n)
  })

  api.post('/1/notifications/all/read', async (req) => {
    const ctx = ctxOf(req)
    const me = requireMember(ctx, 'account')
    for (const n of s.notifications) if (n.idMember === me.id) n.unread = false
    return []
  })
}
