// Boards and lists: Get Boards and Create List.
import { z } from 'zod'
import { defineStep } from '../../../kit/define.ts'
import { board, list, page, paging, position, slimBoard, slimList, taskboardRef } from '../schemas.ts'
import type { TbBoard, TbList } from '../upstream.ts'

export const getBoards = defineStep({
  key: 'get_boards',
  name: 'Get Boards',
  description:
    'Lists every board the connected account can reach (open ones by default), a page at a time (limit; pass "next" back as "after"). A board\'s id is what idBoard inputs and board triggers take. An agent sees only the boards in its scope.',
  input: z.object({
    filter: z
      .enum(['open', 'closed', 'all'])
      .default('open')
      .describe('open (default): boards in use; closed: closed boards; all: both.'),
    ...paging,
  }),
  output: z.object({
    boards: z.array(board),
    next: z
      .string()
      .nullable()
      .describe('Give this as "after" for the next page; null when this is the last.'),
  }),
  hints: { readOnly: true, idempotent: true },
  run: async (ctx, input) => {
    const all = await ctx.http.get<TbBoard[]>('/1/members/me/boards', {
      filter: input.filter,
      fields: 'id,name,desc,closed,url',
    })
    // The account reaches more boards than a scoped agent may touch: the agent sees only its own,
    // and pages (and their cursors) are cut from those alone.
    const scope = ctx.scope
    const visible = scope ? all.filter((b) => scope.boards.includes(b.id)) : all
    const { items, next } = page(visible, input)
    return { boards: items.map(slimBoard), next }
  },
})

export const createList = defineStep({
  key: 'create_list',
  name: 'Create List',
  description:
    'Creates a list on a board (at the right end by default). The board comes from Get Boards, a board page address, or an event (data.board.id). The new list id is what Create Card takes as idList.',
  input: z.object({
    idBoard: taskboardRef('board', 'From Get Boards or an event (data.board.id).'),
    name: z.string().min(1).max(16384).describe('Name of the list.'),
    pos: position
      .optional()
      .describe('Placement among the lists: "top" (left), "bottom" (right) or a positive number.'),
  }),
  output: list,
  hints: { readOnly: false, destructive: false, idempotent: false },
  scoped: [{ field: 'idBoard', kind: 'board' }],
  run: async (ctx, input) =>
    slimList(
      await ctx.http.post<TbList>('/1/lists', { name: input.name, idBoard: input.idBoard, pos: input.pos }),
    ),
})
