import { defineConnector } from '../../kit/define.ts'
import { apiKeyToken, authorizeTaskboard, oauth1 } from './auth.ts'
import { taskboardPageAddresses } from './page-addresses.ts'
import { taskboardEventRefs, taskboardPlaces } from './places.ts'
import { taskboardScope } from './scope.ts'
import { taskboardApiCall } from './steps/api-call.ts'
import { createList, getBoards } from './steps/boards.ts'
import { archiveCard, createCard, getCard, getListCards, updateCard } from './steps/cards.ts'
import { addChecklist, createChecklistItem } from './steps/checklists.ts'
import { addCommentLegacy, addCommentToCard } from './steps/comments.ts'
import {
  cardArchived,
  cardDueDateReminder,
  cardMoved,
  cardUpdated,
  customWebhookEvents,
  newAttachment,
  newBoard,
  newBoardActivity,
  newCard,
  newChecklist,
  newComment,
  newLabelAddedToCard,
  newLabelCreated,
  newMemberOnCard,
  newNotification,
} from './triggers.ts'
import { taskboardWebhooks } from './webhooks.ts'

export const taskboard = defineConnector({
  id: 'taskboard',
  name: 'Task-Board',
  aliases: ['task-board'],
  description: 'Boards, lists, cards, checklists, labels, comments and attachments.',
  beta: false,
  auth: [oauth1, apiKeyToken],
  // 100 requests per 10 s per token, shared by every ready-made step and trigger poll on the token.
  pacing: { points: 100, durationMs: 10_000 },
  // Every answer says what is left of the token's window (x-rate-limit-api-token-*): shown on the
  // Usage page and by rate-limit-status; the pacing above keeps ready-made steps within it.
  rateBudget: {
    shownOnly: true,
    read: (headers) => {
      const limit = Number(headers['x-rate-limit-api-token-max'])
      const remaining = Number(headers['x-rate-limit-api-token-remaining'])
      const windowMs = Number(headers['x-rate-limit-api-token-interval-ms'])
      if (!Number.isFinite(limit) || !Number.isFinite(remaining) || !Number.isFinite(windowMs))
        return undefined
      return { resource: 'token', limit, remaining, used: limit - remaining, resetAt: Date.now() + windowMs }
    },
    resourceOf: () => 'token',
  },
  authorize: authorizeTaskboard,
  identify: async (http) => {
    const me = await http.get<{ id: string; username: string; fullName?: string }>('/1/members/me')
    return { accountName: me.username, accountId: me.id }
  },
  // "unauthorized permission requested" is a board or scope the token may not touch, not a dead token.
  credentialsRefused: (text) => !/unauthorized permission requested/i.test(text),
  errorMessage: (_status, text) => text.trim().slice(0, 200) || undefined,
  // The spec's list, in its order.
  // Its fields' abbreviated names, said in full in forms' labels.
  fieldTitles: { desc: 'Description', pos: 'Position' },
  steps: [
    createCard,
    updateCard,
    getCard,
    archiveCard,
    getBoards,
    getListCards,
    createList,
    addCommentToCard,
    addCommentLegacy,
    addChecklist,
    createChecklistItem,
    taskboardApiCall,
  ],
  triggers: [
    newCard,
    cardUpdated,
    cardMoved,
    cardArchived,
    cardDueDateReminder,
    newComment,
    newMemberOnCard,
    newLabelCreated,
    newLabelAddedToCard,
    newChecklist,
    newBoard,
    newBoardActivity,
    newNotification,
    newAttachment,
    customWebhookEvents,
  ],
  webhooks: taskboardWebhooks,
  places: taskboardPlaces,
  eventRefs: taskboardEventRefs,
  scope: taskboardScope,
  pageAddresses: taskboardPageAddresses,
  webPages: '`{auth_url}`: token page, OAuth pages, page addresses',
})
