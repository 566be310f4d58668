// How an agent's board scope applies to task-board resources: which upstream read tells the board
// of a card, list, checklist or label, and which resources a Task-Board API Call names through
// its path, query and body. The engine's scope guard does the rest (caching, deciding, refusing).
import type { ScopedKind, ScopeSupport } from '../../kit/define.ts'
import { parseEndpointPath } from '../../kit/endpoint-path.ts'
import { PatchbayError } from '../../kit/errors.ts'
import { BOARD_ID } from './places.ts'

/** The read that names the board of each kind (every one of these objects carries idBoard). */
const BOARD_OF: Partial<Record<ScopedKind, string>> = {
  card: '/1/cards',
  list: '/1/lists',
  checklist: '/1/checklists',
  label: '/1/labels',
}

/** Path resources whose id (the next segment) names a scoped resource. */
const PATH_KINDS: Record<string, ScopedKind> = {
  boards: 'board',
  cards: 'card',
  lists: 'list',
  checklists: 'checklist',
  labels: 'label',
}

/**
 * Parameters (query or body) that name a scoped resource wherever they appear: a card moved to
 * another list or board, a list moved to another board, a card copied from another card.
 */
const PARAM_KINDS: Record<string, ScopedKind> = {
  idBoard: 'board',
  idList: 'list',
  idCard: 'card',
  idCardSource: 'card',
  idChecklist: 'checklist',
  idChecklistSource: 'checklist',
  idLabels: 'label',
  idLabel: 'label',
}

/** Creating one of these without the parameter that places it cannot be attributed. */
const CREATE_PLACED_BY: Record<string, string> = {
  cards: 'idList',
  lists: 'idBoard',
  checklists: 'idCard',
  labels: 'idBoard',
}

type Ref = { kind: ScopedKind; value: string }

/**
 * Actions that move no card or list: a card or list made (on the board it names), comments,
 * members, labels, checklists and attachments. Every other action — a card or list updated (it may
 * have moved), moved to another board, deleted — is announced to the instances' caches of places.
 */
const PLACES_UNCHANGED = new Set([
  'createCard',
  'copyCard',
  'convertToCardFromCheckItem',
  'createList',
  'commentCard',
  'updateComment',
  'deleteComment',
  'addMemberToCard',
  'removeMemberFromCard',
  'addLabelToCard',
  'removeLabelFromCard',
  'createLabel',
  'updateLabel',
  'addChecklistToCard',
  'removeChecklistFromCard',
  'updateCheckItemStateOnCard',
  'addAttachmentToCard',
  'deleteAttachmentFromCard',
])

export const taskboardScope: ScopeSupport = {
  placesUnchanged: (e) => PLACES_UNCHANGED.has(e.type),
  // A card or list an event names may have moved to another board: it is placed again.
  movable: ['card', 'list'],
  apiCallHint:
    "An agent's API Calls must address a resource in its scope, such as /1/boards/{id}/… or /1/cards/{id}.",

  resolve: async (http, kind, value) => {
    const id = encodeURIComponent(value)
    if (kind === 'board') {
      // A board id is its own answer; a shortLink is read once to learn the id.
      if (BOARD_ID.test(value)) return { kind: 'board', id: value }
      const board = await http.get<{ id: string }>(`/1/boards/${id}`, { fields: 'id' })
      return { kind: 'board', id: board.id }
    }
    const base = BOARD_OF[kind]
    if (!base)
      throw new PatchbayError('SCOPE_KIND_UNSUPPORTED', `A task-board ${kind} cannot be placed on a board.`, {
        hint: 'Task-board scope is expressed in boards, lists, cards, checklists and labels.',
      })
    const found = await http.get<{ idBoard: string }>(`${base}/${id}`, { fields: 'idBoard' })
    return { kind: 'board', id: found.idBoard }
  },

  attributeApiCall: (input: {
    method: string
    endpoint: string
    body?: Record<string, unknown>
    query?: Record<string, unknown>
  }) => {
    // An endpoint the step would refuse is refused here with the step's own error.
    const parsed = parseEndpointPath(input.endpoint)
    const segments = [...parsed.segments]
    if (segments[0] === '1') segments.shift()
    const resource = segments[0]?.toLowerCase()
    const kind = resource ? PATH_KINDS[resource] : undefined
    if (!kind) return null // members, webhooks, tokens, notifications, search …: no board

    const refs: Ref[] = []
    const sources = [parsed.query, input.query ?? {}, input.body ?? {}]
    const id = segments[1]
    if (id) {
      refs.push({ kind, value: id })
      // DELETE /1/cards/{id}/idLabels/{idLabel} and POST /1/cards/{id}/idLabels {value}.
      if (resource === 'cards' && segments[2]?.toLowerCase() === 'idlabels') {
        if (segments[3]) refs.push({ kind: 'label', value: segments[3] })
        for (const s of sources) for (const v of strings(s.value)) refs.push({ kind: 'label', value: v })
      }
    } else {
      // POST /1/boards makes a board no scope names; POST /1/cards etc. are placed by a parameter.
      const placedBy = CREATE_PLACED_BY[resource]
      if (input.method.toUpperCase() !== 'POST' || !placedBy) return null
      if (!sources.some((s) => strings(s[placedBy]).length > 0)) return null
    }
    for (const s of sources)
      for (const [param, k] of Object.entries(PARAM_KINDS))
        for (const v of strings(s[param])) refs.push({ kind: k, value: v })
    return refs
  },
}

/** The string values of a parameter: one, several in an array, or comma-separated (idLabels). */
function strings(v: unknown): string[] {
  const out: string[] = []
  const add = (x: unknown) => {
    if (typeof x === 'string')
      for (const part of x.split(',')) {
        const t = part.trim()
        if (t) out.push(t)
      }
  }
  if (Array.isArray(v)) v.forEach(add)
  else add(v)
  return out
}
