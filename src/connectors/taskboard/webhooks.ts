// The task-board's webhooks: made per token on a model (a board, or the member), verified with
// the app secret over the body and the callback address, each delivery one action.
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { NormalizedEvent, WebhookSupport } from '../../kit/define.ts'
import { PatchbayError } from '../../kit/errors.ts'
import type { TbAction } from './upstream.ts'

/** An action as the task-board sends it, read into the shape every trigger matches on. */
export function normalizeAction(action: TbAction): NormalizedEvent {
  const d = action.data ?? {}
  return {
    id: action.id,
    type: action.type,
    occurredAt: action.date,
    refs: {
      board: d.board?.id,
      list: d.listAfter?.id ?? d.list?.id ?? d.card?.idList,
      card: d.card?.id,
    },
    data: {
      type: action.type,
      date: action.date,
      memberCreator: action.memberCreator
        ? {
            id: action.memberCreator.id,
            username: action.memberCreator.username,
            fullName: action.memberCreator.fullName,
          }
        : undefined,
      ...d,
    },
  }
}

export const taskboardWebhooks: WebhookSupport = {
  // A failed delivery is sent again 3 times (after 30 s, 60 s, 120 s).
  redelivers: true,
  // "A revoked or expired token deletes its webhooks" (the task-board's API).
  provesCredentials: true,
  register: async (http, hook) => {
    const created = await http.post<{ id: string }>('/1/webhooks', {
      callbackURL: hook.callbackUrl,
      idModel: hook.model,
      description: hook.description,
      active: true,
    })
    return { id: created.id }
  },
  unregister: async (http, id) => {
    try {
      await http.delete(`/1/webhooks/${id}`)
    } catch (err) {
      // Already gone upstream (removed by hand, or with its token): nothing left to clean.
      if (!(err instanceof PatchbayError && err.code === 'UPSTREAM_NOT_FOUND')) throw err
    }
  },
  list: async (http) => {
    const hooks = await http.get<Array<{ id: string; callbackURL: string; idModel: string }>>(
      '/1/tokens/{token}/webhooks',
    )
    return hooks.map((h) => ({ id: h.id, callbackUrl: h.callbackURL, model: h.idModel }))
  },
  cannotVerify: (credentials) =>
    credentials.secret
      ? undefined
      : 'Instant task-board triggers need the API key\'s secret to verify deliveries: reconnect with "secret" (shown beside the API key on the extension admin page).',
  verify: (delivery, { credentials }) => {
    const given = delivery.headers['x-taskboard-webhook']
    if (!given || !credentials.secret) return false
    const expected = createHmac('sha1', credentials.secret)
      .update(delivery.rawBody + delivery.callbackUrl)
      .digest()
    const got = Buffer.from(given, 'base64')
    return got.length === expected.length && timingSafeEqual(got, expected)
  },
  parse: (delivery) => {
    const body = JSON.parse(delivery.rawBody)
    const action = body?.action
    if (!action?.id || !action?.type) return { ignore: 'no action in the delivery' }
    return { deliveryId: action.id, events: [normalizeAction(action)] }
  },
}
