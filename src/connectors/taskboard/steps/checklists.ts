// Checklists: Add Checklist and Create a Checklist Item.
import { z } from 'zod'
import { defineStep } from '../../../kit/define.ts'
import {
  checkItem,
  checklist,
  dueDate,
  position,
  slimCheckItem,
  slimChecklist,
  taskboardId,
  taskboardRef,
} from '../schemas.ts'
import type { TbCheckItem, TbChecklist } from '../upstream.ts'

export const addChecklist = defineStep({
  key: 'add_checklist',
  name: 'Add Checklist',
  description:
    'Adds an empty checklist to a card. Its id is what Create a Checklist Item takes as idChecklist.',
  input: z.object({
    idCard: taskboardRef(
      'card',
      'From Get List Cards, Create Card, a card trigger event (data.card.id), or a card page address.',
    ),
    name: z.string().min(1).max(16384).describe('Name of the checklist, e.g. "Release steps".'),
    pos: position
      .optional()
      .describe('Placement among the card\'s checklists: "top", "bottom" or a positive number.'),
  }),
  output: checklist,
  hints: { readOnly: false, destructive: false, idempotent: false },
  scoped: [{ field: 'idCard', kind: 'card' }],
  run: async (ctx, input) =>
    slimChecklist(
      await ctx.http.post<TbChecklist>('/1/checklists', {
        idCard: input.idCard,
        name: input.name,
        pos: input.pos,
      }),
    ),
})

export const createChecklistItem = defineStep({
  key: 'create_checklist_item',
  name: 'Create a Checklist Item',
  description:
    'Adds an item to a checklist (at the bottom by default), optionally already checked or with a due date.',
  input: z.object({
    idChecklist: taskboardId(
      'checklist',
      'From Add Checklist, or a New Checklist trigger event (data.checklist.id).',
    ),
    name: z.string().min(1).max(16384).describe('Text of the item.'),
    pos: position.optional(),
    checked: z.boolean().optional().describe('true adds the item already complete.'),
    due: dueDate.optional(),
  }),
  output: checkItem,
  hints: { readOnly: false, destructive: false, idempotent: false },
  scoped: [{ field: 'idChecklist', kind: 'checklist' }],
  run: async (ctx, input) => {
    const { idChecklist, ...item } = input
    return slimCheckItem(await ctx.http.post<TbCheckItem>(`/1/checklists/${idChecklist}/checkItems`, item))
  },
})
