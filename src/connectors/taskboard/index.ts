import { defineConnector } from '../../kit/define.ts'
import { apiKeyToken, authorizeTaskboard } from './auth.ts'
import { taskboardScope } from './scope.ts'
import { taskboardApiCall } from './steps/api-call.ts'
import { createCard, getCard } from './steps/cards.ts'
import { cardArchived, cardDueDateReminder, cardMoved, cardUpdated, newCard } from './triggers.ts'
import { taskboardWebhooks } from './webhooks.ts'

export const taskboard = defineConnector({
  id: 'taskboard',
  name: 'Task-Board',
  aliases: ['task-board'],
  description: 'Boards, lists, cards, checklists, labels, comments and attachments.',
  beta: false,
  auth: [apiKeyToken],
  pacing: { points: 100, durationMs: 10_000 },
  authorize: authorizeTaskboard,
  identify: async (http) => {
    const me = await http.get<{ id: string; username: string; fullName?: string }>('/1/members/me')
    return { accountName: me.username, accountId: me.id }
  },
  // "unauthorized permission requested" is a board or scope the token may not touch, not a dead token.
  credentialsRefused: (text) => !/unauthorized permission requested/i.test(text),
  errorMessage: (_status, text) => text.trim().slice(0, 200) || undefined,
  steps: [getCard, createCard, taskboardApiCall],
  triggers: [newCard, cardUpdated, cardMoved, cardArchived, cardDueDateReminder],
  webhooks: taskboardWebhooks,
  scope: taskboardScope,
})
