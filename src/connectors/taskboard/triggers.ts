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
const isMove = (e: NormalizedEvent) => e.type === 'updateCard' && Boolean(data(e).listAfter && data(e).listBefore)
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

const sampleCard = { id: '65a4f41011aa22bb33cc44dd', name: 'Write the README', idShort: 4, shortLink: 'Ab12Cd34' }
const sampleBoard = { id: '65a4f4102efd631cc239e762', name: 'Demo Board', shortLink: 'Xy98Zw76' }
const sampleCreator = { id: '65a4f410bdbfeae5bba40b84', username: 'demo', fullName: 'Demo User' }
const sample = (type: string, extra: Record<string, unknown>) => ({
  id: 'evt_…',
  type,
  occurredAt: '2026-11-21T09:30:00.000Z',
  refs: { board: sampleBoard.id, card: sampleCard.id },
  data: { type, date: '2026-11-21T09:30:00.000Z', memberCreator: sampleCreator, board: sampleBoard, card: sampleCard, ...extra },
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
  sample: sample('updateCard', { card: { ...sampleCard, name: 'Write the README (draft)' }, old: { name: 'Write the README' } }),
})

export const cardMoved = defineTrigger({
  key: 'card_moved',
  name: 'Card Moved',
  description: 'Fires only when a card on the board moves to a different list (other changes do not fire it).',
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
