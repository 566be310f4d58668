// The task-board triggers. Instant ones watch a board (New Board: the account's member) through a
// webhook and fire on the actions listed; polled ones read a listing on a schedule. See
// upstreams.md for each action's data; each trigger's `sample` is the payload agents receive.
import { z } from 'zod'
import { defineTrigger, type NormalizedEvent } from '../../kit/define.ts'
import { taskboardId, taskboardRef } from './schemas.ts'
import type { TbActionData, TbCard, TbNotification } from './upstream.ts'

const boardConfig = z.object({
  idBoard: taskboardRef('board', 'From Get Boards, or a board page address.').describe(
    'The board to watch: its identifier (from Get Boards) or its page address.',
  ),
})
type BoardConfig = z.output<typeof boardConfig>

const onBoard = {
  config: boardConfig,
  scoped: [{ kind: 'board' as const, field: 'idBoard' }],
  watch: (c: BoardConfig) => ({ model: c.idBoard }),
}

/** A task-board event's data: its action's (webhooks.ts normalizeAction) or notification's. */
const data = (e: NormalizedEvent) => e.data as TbActionData
/**
 * A move to another board is two actions upstream: `moveCardFromBoard` reaches the board the card
 * left, `moveCardToBoard` the board it reached (each board's webhook hears its own one).
 */
const BOARD_MOVES = new Set(['moveCardFromBoard', 'moveCardToBoard'])
const isMove = (e: NormalizedEvent) =>
  BOARD_MOVES.has(e.type) || (e.type === 'updateCard' && Boolean(data(e).listAfter && data(e).listBefore))
const isArchive = (e: NormalizedEvent) =>
  e.type === 'updateCard' && data(e).card?.closed === true && data(e).old?.closed === false

/** Every action that changes a property of a card (its fields, labels, members, checklists, attachments). */
export const CARD_CHANGE_TYPES = new Set([
  'updateCard',
  ...BOARD_MOVES,
  'addAttachmentToCard',
  'deleteAttachmentFromCard',
  'addLabelToCard',
  'removeLabelFromCard',
  'addMemberToCard',
  'removeMemberFromCard',
  'addChecklistToCard',
  'removeChecklistFromCard',
  'createCheckItem',
  'updateCheckItemStateOnCard',
])

/** The action types a board's webhook carries. */
export const ACTION_TYPES = [
  'createCard',
  'copyCard',
  'updateCard',
  'moveCardFromBoard',
  'moveCardToBoard',
  'deleteCard',
  'commentCard',
  'addMemberToCard',
  'removeMemberFromCard',
  'createLabel',
  'updateLabel',
  'deleteLabel',
  'addLabelToCard',
  'removeLabelFromCard',
  'addChecklistToCard',
  'removeChecklistFromCard',
  'createCheckItem',
  'updateCheckItemStateOnCard',
  'updateCheckItem',
  'addAttachmentToCard',
  'deleteAttachmentFromCard',
  'createList',
  'updateList',
  'createBoard',
  'updateBoard',
  'addMemberToBoard',
] as const

/**
 * Friendly names for kinds of activity, each standing for several action types (or, for moves
 * and archiving, for some updates). Verbs (create, update, delete) cut across resources: create
 * is something made (a card, a label, a list, a board, a check item, a copy), delete something
 * deleted; adding a member, label, checklist or attachment to a card, or removing one, changes
 * the card, and so is an update.
 */
const ACTIVITY_GROUPS = {
  create: (e) => /^(create|copy)/.test(e.type),
  update: (e) => /^(update|add|remove)/.test(e.type) || BOARD_MOVES.has(e.type),
  delete: (e) => e.type.startsWith('delete'),
  cards: (e) => ['createCard', 'copyCard', 'updateCard', 'deleteCard', ...BOARD_MOVES].includes(e.type),
  card_moves: isMove,
  card_archives: isArchive,
  comments: (e) => e.type === 'commentCard',
  members: (e) => ['addMemberToCard', 'removeMemberFromCard', 'addMemberToBoard'].includes(e.type),
  labels: (e) => /Label/.test(e.type),
  checklists: (e) => /Checklist|CheckItem/.test(e.type),
  attachments: (e) => /Attachment/.test(e.type),
  lists: (e) => e.type === 'createList' || e.type === 'updateList',
  board: (e) => e.type === 'createBoard' || e.type === 'updateBoard' || e.type === 'addMemberToBoard',
} satisfies Record<string, (e: NormalizedEvent) => boolean>
type ActivityGroup = keyof typeof ACTIVITY_GROUPS
const isGroup = (t: string): t is ActivityGroup => Object.hasOwn(ACTIVITY_GROUPS, t)

export const activityTypes = z
  .enum([...(Object.keys(ACTIVITY_GROUPS) as ActivityGroup[]), ...ACTION_TYPES])
  .describe(
    'An activity group — create (something made: a card, label, list, board, check item, copy), update (a change, also adding or removing a member, label, checklist or attachment), delete (any resource), cards, card_moves, card_archives, comments, members, labels, checklists, attachments, lists, board — or an exact action type such as commentCard or addLabelToCard.',
  )

/** The lists an event is on: a move counts for the list it left and the one it reached. */
function listsOf(e: NormalizedEvent): string[] {
  const d = data(e)
  return [e.refs.list, d.list?.id, d.listBefore?.id, d.listAfter?.id].filter((l): l is string => Boolean(l))
}

/** Whether an event is one of the activity types or groups named (none named: every one). */
function ofTypes(e: NormalizedEvent, types: string[] | undefined): boolean {
  if (!types || types.length === 0) return true
  return types.some((t) => (isGroup(t) ? ACTIVITY_GROUPS[t](e) : t === e.type))
}

const sampleCard = {
  id: '65a4f41011aa22bb33cc44dd',
  name: 'Write the README',
  idShort: 4,
  shortLink: 'Ab12Cd34',
}
const sampleBoard = { id: '65a4f4102efd631cc239e762', name: 'Demo Board', shortLink: 'Xy98Zw76' }
const sampleList = { id: '65a4f410d9c7f2f83624bd62', name: 'To Do' }
const sampleCreator = { id: '65a4f410bdbfeae5bba40b84', username: 'demo', fullName: 'Demo User' }
const sample = (type: string, extra: Record<string, unknown>, refs: Record<string, string> = {}) => ({
  id: '65a4f4a0c1d2e3f405162738',
  type,
  occurredAt: '2026-11-21T09:30:00.000Z',
  refs: { board: sampleBoard.id, list: sampleList.id, card: sampleCard.id, ...refs },
  data: {
    type,
    date: '2026-11-21T09:30:00.000Z',
    memberCreator: sampleCreator,
    board: sampleBoard,
    list: sampleList,
    card: sampleCard,
    ...extra,
  },
})

export const newCard = defineTrigger({
  key: 'new_card',
  name: 'New Card',
  description: 'Fires when a card is created on the board (data.card, data.list).',
  instant: true,
  ...onBoard,
  match: (e) => e.type === 'createCard' || e.type === 'copyCard',
  sample: sample('createCard', {}),
})

export const cardUpdated = defineTrigger({
  key: 'card_updated',
  name: 'Card Updated',
  description:
    'Fires when any property of a card on the board changes — title, description, due date, labels, members, checklists, attachments — including a move to another list or board and archiving. data.old holds the previous values of what changed; a move to another board fires once on each board (moveCardFromBoard, moveCardToBoard).',
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
    'Fires only when a card on the board moves to a different list (data.listBefore, data.listAfter); other changes do not fire it. A move to another board fires once on each board: moveCardFromBoard on the board it left (data.list, data.boardTarget), moveCardToBoard on the board it reached (data.list, data.boardSource).',
  instant: true,
  ...onBoard,
  match: isMove,
  sample: sample('updateCard', {
    listBefore: sampleList,
    listAfter: { id: '65a4f410f922cb87d8d912b7', name: 'Doing' },
    old: { idList: sampleList.id },
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

export const newComment = defineTrigger({
  key: 'new_comment',
  name: 'New Comment Added to Card',
  description:
    'Fires when a comment is added to any card on the board. data.text is the comment; data.card the card; data.memberCreator who wrote it.',
  instant: true,
  ...onBoard,
  match: (e) => e.type === 'commentCard',
  sample: sample('commentCard', { text: 'Looks good to me, @teammate.' }),
})

export const newMemberOnCard = defineTrigger({
  key: 'new_member_on_card',
  name: 'New Member on Card',
  description:
    'Fires when a member is added to a card on the board (also for members given when the card is created). data.member is who was added.',
  instant: true,
  ...onBoard,
  match: (e) => e.type === 'addMemberToCard',
  sample: sample('addMemberToCard', {
    idMember: '65a4f410aa11bb22cc33dd44',
    member: { id: '65a4f410aa11bb22cc33dd44', name: 'Team Mate' },
  }),
})

export const newLabelCreated = defineTrigger({
  key: 'new_label_created',
  name: 'New Label Created',
  description:
    'Fires when a label is created on the board (data.label: id, name, color). Applying a label to a card is New Label Added To Card.',
  instant: true,
  ...onBoard,
  match: (e) => e.type === 'createLabel',
  sample: {
    ...sample('createLabel', { label: { id: '65a4f410c0ffee0000000001', name: 'Blocked', color: 'red' } }),
    refs: { board: sampleBoard.id },
  },
})

export const newLabelAddedToCard = defineTrigger({
  key: 'new_label_added_to_card',
  name: 'New Label Added To Card',
  description:
    'Fires when a label is applied to a card on the board (data.label, data.card). Creating a label on the board is New Label Created.',
  instant: true,
  ...onBoard,
  match: (e) => e.type === 'addLabelToCard',
  sample: sample('addLabelToCard', {
    label: { id: '65a4f410c0ffee0000000001', name: 'Blocked', color: 'red' },
  }),
})

export const newChecklist = defineTrigger({
  key: 'new_checklist',
  name: 'New Checklist',
  description:
    'Fires when a checklist is added to any card on the board. data.checklist.id is what Create a Checklist Item takes.',
  instant: true,
  ...onBoard,
  match: (e) => e.type === 'addChecklistToCard',
  sample: sample('addChecklistToCard', {
    checklist: { id: '65a4f410c0ffee0000000002', name: 'Release steps' },
  }),
})

export const newAttachment = defineTrigger({
  key: 'new_attachment',
  name: 'New Attachment',
  description:
    'Fires when a file or link is attached to any card on the board (data.attachment: id, name, url).',
  instant: true,
  ...onBoard,
  match: (e) => e.type === 'addAttachmentToCard',
  sample: sample('addAttachmentToCard', {
    attachment: {
      id: '65a4f410c0ffee0000000003',
      name: 'Design notes',
      url: 'https://example.com/design-notes.pdf',
    },
  }),
})

export const newBoardActivity = defineTrigger({
  key: 'new_board_activity',
  name: 'New Board Activity',
  description:
    'Fires for activity on the board: every kind by default, or only the types listed — several at once, as groups (cards, comments, members, labels, checklists, attachments, lists, card_moves, create, update …) or exact action types (commentCard …). The event type is the action type.',
  instant: true,
  config: boardConfig.extend({
    types: z
      .array(activityTypes)
      .min(1)
      .max(50)
      .optional()
      .describe('The kinds of activity that fire it; leave out for every activity on the board.'),
  }),
  scoped: onBoard.scoped,
  watch: onBoard.watch,
  match: (e, c) => ofTypes(e, c.types),
  sample: sample('commentCard', { text: 'Drafting this now.' }),
})

export const newBoard = defineTrigger({
  key: 'new_board',
  name: 'New Board',
  description:
    "Fires when the connected account creates a board in its workspace (data.board: id, name). It watches the account, not a board, so it takes no board; the new board's id is what idBoard inputs and board triggers take.",
  instant: true,
  config: z.object({}),
  watch: (_c, account) => ({ model: account.id }),
  // About the account: a board just made cannot be in any scope yet.
  eventScope: 'account',
  match: (e) => e.type === 'createBoard',
  sample: {
    id: '65a4f4a0c1d2e3f405162739',
    type: 'createBoard',
    occurredAt: '2026-11-21T09:30:00.000Z',
    refs: { board: '65a4f4a0c1d2e3f40516273a' },
    data: {
      type: 'createBoard',
      date: '2026-11-21T09:30:00.000Z',
      memberCreator: sampleCreator,
      board: { id: '65a4f4a0c1d2e3f40516273a', name: 'Q3 Launch', shortLink: 'Qw12Er34' },
    },
  },
})

export const customWebhookEvents = defineTrigger({
  key: 'custom_webhook_events',
  name: 'Custom Webhook Events',
  description:
    'Fires for events that match every filter given: on these boards, of these event types (create, update, delete, groups such as comments or card_moves, or exact action types), on these lists, about these cards. Filters left out match everything.',
  instant: true,
  config: z.object({
    boards: z
      .array(taskboardRef('board', 'From Get Boards, or a board page address.'))
      .min(1)
      .max(20)
      .describe('The boards to watch (at least one).'),
    types: z.array(activityTypes).min(1).max(50).optional().describe('Event types; leave out for all.'),
    lists: z
      .array(taskboardId('list', 'A list on one of the boards.'))
      .min(1)
      .max(100)
      .optional()
      .describe('Only events on these lists (a move counts for the list it left and the one it reached).'),
    cards: z
      .array(taskboardRef('card', 'A card on one of the boards, or its page address.'))
      .min(1)
      .max(100)
      .optional()
      .describe('Only events about these cards.'),
  }),
  scoped: [
    { kind: 'board', field: 'boards' },
    { kind: 'list', field: 'lists' },
    { kind: 'card', field: 'cards' },
  ],
  // One board: that board's webhook. Several: the account's, which hears every board it is on.
  watch: (c, account) => ({ model: c.boards.length === 1 ? c.boards[0] : account.id }),
  match: (e, c) => {
    if (!e.refs.board || !c.boards.includes(e.refs.board)) return false
    if (!ofTypes(e, c.types)) return false
    if (c.lists && !listsOf(e).some((l) => c.lists!.includes(l))) return false
    if (c.cards && !(e.refs.card && c.cards.includes(e.refs.card))) return false
    return true
  },
  // A board's webhook heard by a trigger per list (or per card) asks only the ones an event is on.
  matchKeys: {
    config: (c) => c.lists ?? c.cards,
    event: (e) => {
      const keys = listsOf(e)
      if (e.refs.card) keys.push(e.refs.card)
      return keys
    },
  },
  sample: sample('updateCard', {
    card: { ...sampleCard, due: '2026-12-01T17:00:00.000Z' },
    old: { due: null },
  }),
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
  // The time of the last poll: due dates passed since fire now.
  cursor: z.object({ lastPollAt: z.string() }),
  poll: async ({ http, cursor, now }, config) => {
    const previous = cursor?.lastPollAt
    const since = previous ? Date.parse(previous) : now.getTime()
    const cards = await http.get<TbCard[]>(`/1/boards/${config.idBoard}/cards/open`)
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

/** The notification types the task-board sends (to the other members involved, never the actor). */
const NOTIFICATION_TYPES = [
  'commentCard',
  'mentionedOnCard',
  'addedToCard',
  'removedFromCard',
  'changeCard',
  'addAttachmentToCard',
  'addedToBoard',
] as const

const NOTIFICATION_PAGE = 100
/** At most this many pages per poll; the rest come with the next poll. */
const NOTIFICATION_PAGES = 10

export const newNotification = defineTrigger({
  key: 'new_notification',
  name: 'New Notification',
  description:
    "Fires when the connected account receives a notification (polled, not instant): a comment or change on a card it is on, a mention, being added to a card or board. It reads the account's notifications, not a board, so it takes no board; notifications about boards outside the agent's scope are left out. Notifications that arrived before the trigger was made do not fire it.",
  instant: false,
  config: z.object({
    types: z
      .array(z.enum(NOTIFICATION_TYPES))
      .min(1)
      .optional()
      .describe('Only these notification types; leave out for all.'),
    unreadOnly: z
      .boolean()
      .default(false)
      .describe('true: only notifications still unread when the poll sees them.'),
  }),
  pollIntervalMs: 60_000,
  // The newest notification seen (null: there was none).
  cursor: z.object({ since: z.string().nullable() }),
  poll: async ({ http, cursor, scope }, config) => {
    const since = cursor?.since
    if (cursor === null) {
      // The first poll marks where the trigger starts; older notifications are not news.
      const latest = await http.get<TbNotification[]>('/1/members/me/notifications', { limit: 1 })
      return { events: [], cursor: { since: latest[0]?.id ?? null } }
    }
    // Newest first; older pages are fetched until one comes back short.
    const fresh: TbNotification[] = []
    let before: string | undefined
    for (let i = 0; i < NOTIFICATION_PAGES; i++) {
      const batch = await http.get<TbNotification[]>('/1/members/me/notifications', {
        limit: NOTIFICATION_PAGE,
        since: since ?? undefined,
        before,
      })
      fresh.push(...batch)
      if (batch.length < NOTIFICATION_PAGE) break
      before = batch[batch.length - 1].id
    }
    const events: NormalizedEvent[] = fresh
      .filter(
        (n) => (!config.types || config.types.some((t) => t === n.type)) && (!config.unreadOnly || n.unread),
      )
      // The account hears about every board it is on; the agent only about the boards in its scope.
      .filter((n) => !scope || !n.data?.board?.id || scope.boards.includes(n.data.board.id))
      .reverse()
      .map((n) => ({
        id: n.id,
        type: n.type,
        occurredAt: n.date,
        refs: { board: n.data?.board?.id, list: n.data?.list?.id, card: n.data?.card?.id },
        data: {
          type: n.type,
          date: n.date,
          unread: n.unread,
          idMemberCreator: n.idMemberCreator,
          idAction: n.idAction,
          ...n.data,
        },
      }))
    return { events, cursor: { since: fresh[0]?.id ?? since ?? null } }
  },
  sample: {
    id: '65a4f4a0c1d2e3f40516273b',
    type: 'commentCard',
    occurredAt: '2026-11-21T09:30:00.000Z',
    refs: { board: sampleBoard.id, card: sampleCard.id },
    data: {
      type: 'commentCard',
      date: '2026-11-21T09:30:00.000Z',
      unread: true,
      idMemberCreator: '65a4f410aa11bb22cc33dd44',
      idAction: '65a4f4a0c1d2e3f40516273c',
      board: sampleBoard,
      card: sampleCard,
      text: 'Can you review this, @demo?',
    },
  },
})
