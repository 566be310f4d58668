// Comments: Add Comment to Card, and Add Comment (legacy) with the older input shape.
import { z } from 'zod'
import { defineStep } from '../../../kit/define.ts'
import { comment, slimComment, taskboardRef } from '../schemas.ts'
import type { TbAction } from '../upstream.ts'

const cardSource =
  'From Get List Cards, Create Card, a card trigger event (data.card.id), or a card page address.'
const text = z.string().min(1).max(16384)

export const addCommentToCard = defineStep({
  key: 'add_comment_to_card',
  name: 'Add Comment to Card',
  description:
    "Posts a comment on a card as the connected account. @username mentions notify the board's members. Each run posts a new comment.",
  input: z.object({
    idCard: taskboardRef('card', cardSource),
    text: text.describe('The comment (Markdown, up to 16384 characters).'),
  }),
  output: comment,
  hints: { readOnly: false, destructive: false, idempotent: false },
  scoped: [{ field: 'idCard', kind: 'card' }],
  run: async (ctx, input) =>
    slimComment(
      await ctx.http.post<TbAction>(`/1/cards/${input.idCard}/actions/comments`, { text: input.text }),
      input.idCard,
    ),
})

export const addCommentLegacy = defineStep({
  key: 'add_comment',
  name: 'Add Comment (legacy)',
  description:
    'Kept for existing tools built on its older input shape (card_id, comment); it posts a comment on a card exactly like Add Comment to Card (taskboard.add_comment_to_card), which new tools should use.',
  input: z.object({
    card_id: taskboardRef('card', cardSource),
    comment: text.describe('The comment text.'),
  }),
  output: comment,
  hints: { readOnly: false, destructive: false, idempotent: false },
  scoped: [{ field: 'card_id', kind: 'card' }],
  run: async (ctx, input) =>
    slimComment(
      await ctx.http.post<TbAction>(`/1/cards/${input.card_id}/actions/comments`, { text: input.comment }),
      input.card_id,
    ),
})
