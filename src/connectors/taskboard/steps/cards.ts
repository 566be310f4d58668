// Cards: Get Card, Create Card, Update Card, Archive Card and Get List Cards.
import { z } from 'zod'
import { defineStep } from '../../../kit/define.ts'
import { card, dueDate, page, paging, position, slimCard, taskboardId, taskboardRef } from '../schemas.ts'
import type { TbCard } from '../upstream.ts'
import { boardOfCard, boardOfList, listNotOnBoard, requireLabelsOnBoard } from './placement.ts'

const cardSource =
  'From Get List Cards, Create Card, a card trigger event (data.card.id), or a card page address.'
const listSource =
  'From Create List, a card (its idList), a card trigger event (data.list.id), or the API Call GET /1/boards/{id}/lists.'
const labelSource =
  "Labels are made per board: the card's board (API Call GET /1/boards/{id}/labels, or a New Label Created event)."
const CARD_FIELDS = 'id,name,desc,idList,idBoard,pos,due,closed,idLabels,idMembers,url'

export const getCard = defineStep({
  key: 'get_card',
  name: 'Get Card',
  description:
    'Reads one card: its name, description, list, board, position, due date, labels, members and whether it is archived.',
  input: z.object({ idCard: taskboardRef('card', cardSource) }),
  output: card,
  hints: { readOnly: true, idempotent: true },
  scoped: [{ field: 'idCard', kind: 'card' }],
  // Only the fields the output keeps are asked for: a smaller answer to read.
  run: async (ctx, input) =>
    slimCard(await ctx.http.get<TbCard>(`/1/cards/${input.idCard}`, { fields: CARD_FIELDS })),
})

export const createCard = defineStep({
  key: 'create_card',
  name: 'Create Card',
  description:
    'Creates a card on a list. The list identifier comes from Create List, a card (its idList), an event, or the API Call GET /1/boards/{id}/lists. Give idBoard too and Patchbay checks, before creating anything, that the list is on that board.',
  input: z.object({
    idList: taskboardId('list', `The list the card is created on. ${listSource}`),
    name: z.string().min(1).max(16384).describe('Title of the card.'),
    desc: z.string().max(16384).optional().describe('Description (Markdown).'),
    pos: position.optional(),
    due: dueDate.optional(),
    idLabels: z
      .array(taskboardId('label', labelSource))
      .max(50)
      .optional()
      .describe("Labels to apply; they must be labels of the list's board."),
    idBoard: taskboardRef(
      'board',
      'Optional: the board the list is on (from Get Boards). When given, a list on another board is refused before anything is created.',
    ).optional(),
  }),
  output: card,
  hints: { readOnly: false, destructive: false, idempotent: false },
  scoped: [
    { field: 'idList', kind: 'list' },
    { field: 'idBoard', kind: 'board' },
    { field: 'idLabels', kind: 'label' },
  ],
  run: async (ctx, input) => {
    if (input.idBoard || input.idLabels?.length) {
      const listBoard = await boardOfList(ctx, input.idList)
      if (input.idBoard && listBoard !== input.idBoard)
        throw listNotOnBoard(input.idList, listBoard, input.idBoard, 'the board given in idBoard')
      await requireLabelsOnBoard(ctx, input.idLabels ?? [], listBoard)
    }
    return slimCard(
      await ctx.http.post<TbCard>('/1/cards', {
        idList: input.idList,
        name: input.name,
        desc: input.desc,
        pos: input.pos,
        due: input.due,
        idLabels: input.idLabels,
      }),
    )
  },
})

export const updateCard = defineStep({
  key: 'update_card',
  name: 'Update Card',
  description:
    'Changes a card: its name, description, position, due date, labels or members, or moves it to another list. Only the fields given change. A move to a list on another board is refused unless idBoard names that board too (labels and members not on the new board are dropped upstream).',
  input: z
    .object({
      idCard: taskboardRef('card', cardSource),
      name: z.string().min(1).max(16384).optional().describe('New title.'),
      desc: z.string().max(16384).optional().describe('New description (Markdown); "" clears it.'),
      idList: taskboardId('list', `Moves the card to this list. ${listSource}`).optional(),
      idBoard: taskboardRef(
        'board',
        'Only to move the card to another board: that board, together with idList, a list on it (from Get Boards).',
      ).optional(),
      pos: position.optional(),
      due: dueDate.nullable().optional().describe('New due date (ISO-8601), or null to remove it.'),
      dueComplete: z.boolean().optional().describe('Marks the due date complete (true) or not (false).'),
      idLabels: z
        .array(taskboardId('label', labelSource))
        .max(50)
        .optional()
        .describe("Replaces the card's labels with these ([] removes all)."),
      idMembers: z
        .array(taskboardId('member', 'Members of the board (API Call GET /1/boards/{id}/members).'))
        .max(50)
        .optional()
        .describe("Replaces the card's members with these ([] removes all)."),
      closed: z
        .boolean()
        .optional()
        .describe('false brings an archived card back; to archive, use Archive Card.'),
    })
    .refine((i) => Object.keys(i).some((k) => k !== 'idCard'), {
      message: 'give at least one field to change besides idCard',
      path: [],
    })
    .refine((i) => i.idBoard === undefined || i.idList !== undefined, {
      message: 'a move to another board needs idList too: the list on that board to put the card on',
      path: ['idList'],
    }),
  output: card,
  hints: { readOnly: false, destructive: true, idempotent: true },
  scoped: [
    { field: 'idCard', kind: 'card' },
    { field: 'idList', kind: 'list' },
    { field: 'idBoard', kind: 'board' },
    { field: 'idLabels', kind: 'label' },
  ],
  run: async (ctx, input) => {
    if (input.idList || input.idLabels?.length) {
      const cardBoard = await boardOfCard(ctx, input.idCard)
      let target = cardBoard
      if (input.idList) {
        const listBoard = await boardOfList(ctx, input.idList)
        const wanted = input.idBoard ?? cardBoard
        if (listBoard !== wanted)
          throw listNotOnBoard(
            input.idList,
            listBoard,
            wanted,
            input.idBoard
              ? 'the board given in idBoard'
              : "the card's board; give idBoard as well to move it to another board",
          )
        target = listBoard
      }
      await requireLabelsOnBoard(ctx, input.idLabels ?? [], target)
    }
    const { idCard, ...changes } = input
    return slimCard(await ctx.http.put<TbCard>(`/1/cards/${idCard}`, changes))
  },
})

export const archiveCard = defineStep({
  key: 'archive_card',
  name: 'Archive Card',
  description:
    'Archives a card: it leaves its list but is kept, and Update Card with closed=false brings it back. Archiving an archived card changes nothing.',
  input: z.object({ idCard: taskboardRef('card', cardSource) }),
  output: card,
  hints: { readOnly: false, destructive: false, idempotent: true },
  scoped: [{ field: 'idCard', kind: 'card' }],
  run: async (ctx, input) =>
    slimCard(await ctx.http.put<TbCard>(`/1/cards/${input.idCard}`, { closed: true })),
})

export const getListCards = defineStep({
  key: 'get_list_cards',
  name: 'Get List Cards',
  description:
    'Lists the cards on one list, top first, a page at a time (limit; pass "next" back as "after" for the following page). Open cards by default; filter "closed" lists the archived ones, "all" both.',
  input: z.object({
    idList: taskboardId('list', listSource),
    filter: z
      .enum(['open', 'closed', 'all'])
      .default('open')
      .describe('open (default): cards on the list; closed: archived ones; all: both.'),
    ...paging,
  }),
  output: z.object({
    cards: z.array(card),
    next: z
      .string()
      .nullable()
      .describe('Give this as "after" for the next page; null when this is the last.'),
  }),
  hints: { readOnly: true, idempotent: true },
  scoped: [{ field: 'idList', kind: 'list' }],
  run: async (ctx, input) => {
    const cards = await ctx.http.get<TbCard[]>(`/1/lists/${input.idList}/cards`, {
      filter: input.filter,
      fields: CARD_FIELDS,
    })
    const { items, next } = page(
      [...cards].sort((a, b) => a.pos - b.pos),
      input,
    )
    return { cards: items.map(slimCard), next }
  },
})
