import { z } from 'zod'
import { defineStep } from '../../../kit/define.ts'
import { card, dueDate, position, slimCard, taskboardId } from '../schemas.ts'

const cardIdSource = 'From a New Card trigger event, Get List Cards, or a card page address.'

export const getCard = defineStep({
  key: 'get_card',
  name: 'Get Card',
  description:
    'Reads one card: its name, description, list, board, position, due date, labels, members and whether it is archived.',
  input: z.object({ idCard: taskboardId('card', cardIdSource) }),
  output: card,
  hints: { readOnly: true, idempotent: true },
  scoped: [{ field: 'idCard', kind: 'card' }],
  run: async (ctx, input) => slimCard(await ctx.http.get(`/1/cards/${input.idCard}`)),
})

export const createCard = defineStep({
  key: 'create_card',
  name: 'Create Card',
  description:
    'Creates a card on a list. The list identifier comes from Get Board Lists (API Call GET /1/boards/{id}/lists), Create List, or an event.',
  input: z.object({
    idList: taskboardId('list', 'The list the card is created on.'),
    name: z.string().min(1).max(16384).describe('Title of the card.'),
    desc: z.string().max(16384).optional().describe('Description (Markdown).'),
    pos: position.optional(),
    due: dueDate.optional(),
    idLabels: z
      .array(taskboardId('label', 'Labels are created per board.'))
      .optional()
      .describe('Labels to apply.'),
  }),
  output: card,
  hints: { readOnly: false, idempotent: false },
  scoped: [{ field: 'idList', kind: 'list' }],
  run: async (ctx, input) =>
    slimCard(
      await ctx.http.post('/1/cards', {
        idList: input.idList,
        name: input.name,
        desc: input.desc,
        pos: input.pos,
        due: input.due,
        idLabels: input.idLabels,
      }),
    ),
})
