// The task-board triggers. Instant ones watch a board through the board's webhook and fire on
// the actions listed; see upstreams.md for each action's data.
import { z } from 'zod'
import { defineTrigger, type NormalizedEvent } from '../../kit/define.ts'
import { taskboardId } from './schemas.ts'

const boardConfig = z.object({
  idBoard: taskboardId('board', 'From Get Boards, or a board page address.').describe('The board to watch.'),
})
type BoardConfig = z.output<typeof boardConfig>

const onBoard = {
  config: boardConfig,
  scoped: [{ kind: 'board' as const, field: 'idBoard' }],
  watch: (c: BoardConfig) => ({ model: c.idBoard }),
}

const data = (e: NormalizedEvent) => e.data as Record<string, any>
const isMove = (e: NormalizedEvent) =>
  e.type === 'updateCard' && Boolean(data(e).listAfter && data(e).listBefore)
const isArchive = (e: NormalizedEvent) =>
  e.type === 'updateCard' && data(e).card?.closed === true && data(e).old?.closed === false

/** Every action that changes a property of a card (its fields, labels, members, checklists, attachments). */
export const CARD_CHANGE_TYPES = new Set([
  'updateCard',
  'addAttachmentToCard',
  'deleteAttachmentFromCard',
  'addLabelToCard',
  'removeLabelFromCard',
  'addMemberToCard',
  'removeMemberFromCard',
  'addChecklistToCard',
  'removeChecklistFromCard',
  'updateCheckItemStateOnCard',
])

const sampleCard = {
  id: '65a4f41011aa22bb33cc44dd',
  name: 'Write the README',
  idShort: 4,
  shortLink: 'Ab12Cd34',
}
const sampleBoard = { id: '65a4f4102efd631cc239e762', name: 'Demo Board', shortLink: 'Xy98Zw76' }
const sampleCreator = { id: '65a4f410bdbfeae5bba40b84', username: 'demo', fullName: 'Demo User' }
const sample = (type: string, extra: Record<string, unknown>) => ({
  id: 'evt_…',
  type,
  occurredAt: '2026-11-21T09:30:00.000Z',
  refs: { board: sampleBoard.id, card: sampleCard.id },
  data: {
    type,
    date: '2026-11-21T09:30:00.000Z',
    memberCreator: sampleCreator,
    board: sampleBoard,
    card: sampleCard,
    ...extra,
  },
})

export const newCard = defineTrigger({
  key: 'new_card',
  name: 'New Card',
  description: 'Fires when a card is created on the board.',
  instant: true,
  ...onBoard,
  match: (e) => e.type === 'createCard' || e.type === 'copyCard',
  sample: sample('createCard', { list: { id: '65a4f410d9c7f2f83624bd62', name: 'To Do' } }),
})

export const cardUpdated = defineTrigger({
  key: 'card_updated',
  name: 'Card Updated',
  description:
    'Fires when any property of a card on the board changes — title, description, due date, labels, members, checklists, attachments — including a move to another list and archiving.',
  instant: true,
  ...onBoard,
  match: (e) => CARD_CHANGE_TYPES.has(e.type),
  sample: sample('updateCard', {
    card: { ...sampleCard, name: 'Write the README (draft)' },
    old: { name: 'Write the README' },
  }),
})

export const cardMoved = defineTrigger({
  key: 'card_moved',
  name: 'Card Moved',
  description:
    'Fires only when a card on the board moves to a different list (other changes do not fire it).',
  instant: true,
  ...onBoard,
  match: isMove,
  sample: sample('updateCard', {
    listBefore: { id: '65a4f410d9c7f2f83624bd62', name: 'To Do' },
    listAfter: { id: '65a4f410f922cb87d8d912b7', name: 'Doing' },
    old: { idList: '65a4f410d9c7f2f83624bd62' },
  }),
})

export const cardArchived = defineTrigger({
  key: 'card_archived',
  name: 'Card Archived',
  description: 'Fires when a card on the board is archived.',
  instant: true,
  ...onBoard,
  match: isArchive,
  sample: sample('updateCard', { card: { ...sampleCard, closed: true }, old: { closed: false } }),
})

export const cardDueDateReminder = defineTrigger({
  key: 'card_due_date_reminder',
  name: 'Card Due Date Reminder',
  description:
    "Fires a configurable time before a card's due date (polled, not instant). Fires once per card and due date, and again when the due date changes; completed and archived cards are skipped.",
  instant: false,
  config: boardConfig.extend({
    minutesBefore: z
      .number()
      .int()
      .min(0)
      .max(60 * 24 * 60)
      .default(1440)
      .describe('How long before the due date to fire, in minutes (default one day).'),
  }),
  scoped: [{ kind: 'board', field: 'idBoard' }],
  pollIntervalMs: 60_000,
  poll: async ({ http, cursor, now }, config) => {
    const previous = (cursor as { lastPollAt?: string } | null)?.lastPollAt
    const since = previous ? Date.parse(previous) : now.getTime()
    const cards = await http.get<any[]>(`/1/boards/${config.idBoard}/cards`, { filter: 'open' })
    const events: NormalizedEvent[] = []
    for (const card of cards) {
      if (!card.due || card.dueComplete || card.closed) continue
      const due = Date.parse(card.due)
      // Due within the reminder window, and not already past when the previous poll ran.
      if (due - config.minutesBefore * 60_000 > now.getTime() || due < since) continue
      events.push({
        id: `${card.id}@${card.due}`,
        type: 'cardDueSoon',
        occurredAt: now.toISOString(),
        refs: { board: card.idBoard, list: card.idList, card: card.id },
        data: {
          card: { id: card.id, name: card.name, due: card.due, idList: card.idList, url: card.url },
          board: { id: card.idBoard },
          minutesBefore: config.minutesBefore,
        },
      })
    }
    return { events, cursor: { lastPollAt: now.toISOString() } }
  },
  sample: {
    id: '65a4f41011aa22bb33cc44dd@2026-11-22T09:00:00.000Z',
    type: 'cardDueSoon',
    refs: { board: sampleBoard.id, card: sampleCard.id },
    data: {
      card: { ...sampleCard, due: '2026-11-22T09:00:00.000Z' },
      board: { id: sampleBoard.id },
      minutesBefore: 1440,
    },
  },
})
