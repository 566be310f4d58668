// The task-board's place: its boards, the unit an agent's scope is written in (`scope.boards`).
// A card, list, checklist or label is placed on its board by the lookups in scope.ts.
import { z } from 'zod'
import type { EventRef, PlaceKind } from '../../kit/define.ts'

export const BOARD_ID = /^[0-9a-f]{24}$/

export const taskboardPlaces: PlaceKind[] = [
  {
    kind: 'board',
    scopeKey: 'boards',
    id: z
      .string()
      .regex(BOARD_ID, 'must be a task-board board identifier: 24 lowercase hexadecimal characters')
      .describe('A task-board board id.'),
    description: 'Task-board boards the agent may touch (24-hex ids). Empty: none.',
    summary: 'Task-board boards the agent may touch.',
    // A board given by its short link is read into its id (scope.ts resolve).
    resolve: true,
    nameIn: (data, id) => {
      const board = (data as { board?: { id?: unknown; name?: unknown } } | null)?.board
      return board?.id === id && typeof board.name === 'string' ? board.name : undefined
    },
  },
]

// What its events name besides their board: the list and the card (the card is what a step's
// output names as made or changed: its `id`).
export const taskboardEventRefs: EventRef[] = [{ name: 'list' }, { name: 'card', resource: true }]
