// Field schemas shared by the task-board steps and triggers, described for an LLM reading the
// catalog, and the slim shapes the steps return.
import { z } from 'zod'
import { type Picker, picked } from '../../kit/pickers.ts'
import { boards, cards, checklists, labels, lists } from './pickers.ts'
import type { TbAction, TbBoard, TbCard, TbCheckItem, TbChecklist, TbList } from './upstream.ts'

const ID = /^[0-9a-f]{24}$/
/** An identifier, or (for boards and cards) a page address the engine reads into one. */
const ID_OR_PAGE = /^(?:[0-9a-f]{24}|https?:\/\/\S+)$/

/** Where the choices of each kind of identifier come from (dropdowns in forms, GET …/options/:field). */
const PICKERS: Record<string, Picker> = {
  board: boards,
  list: lists,
  card: cards,
  label: labels,
  checklist: checklists,
}

const withPicker = <T extends z.ZodType>(what: string, schema: T): T =>
  PICKERS[what] ? picked(schema, PICKERS[what]) : schema

export const taskboardId = (what: string, source: string) =>
  withPicker(
    what,
    z
      .string()
      .regex(ID, `must be a ${what} identifier: 24 lowercase hexadecimal characters`)
      .describe(`Identifier of the ${what} (24 hex characters). ${source}`),
  )

/**
 * A board or card: its identifier or its page address (https://…/b/{shortLink}/… or
 * https://…/c/{shortLink}/…). The engine reads a page address into the identifier before the
 * input is validated (connector `pageAddresses`), so a step's `run` only ever sees identifiers.
 */
export const taskboardRef = (what: 'board' | 'card', source: string) =>
  withPicker(what, taskboardRefSchema(what, source))

const taskboardRefSchema = (what: 'board' | 'card', source: string) =>
  z
    .string()
    .regex(ID_OR_PAGE, {
      error: `must be a ${what} identifier (24 lowercase hexadecimal characters) or the ${what}'s page address`,
      abort: true,
    })
    .refine((s) => ID.test(s), `the ${what}'s page address could not be read into its identifier`)
    .describe(
      `Identifier of the ${what} (24 hex characters), or the ${what}'s page address (https://…/${what === 'board' ? 'b' : 'c'}/{shortLink}/…). ${source}`,
    )

export const position = z
  .union([z.enum(['top', 'bottom']), z.number().positive()])
  .describe('Placement in the list: "top", "bottom" or a positive number (smaller is higher).')

export const dueDate = z
  .string()
  .refine((s) => !Number.isNaN(Date.parse(s)), 'must be a date, such as 2026-12-31 or 2026-12-31T17:00:00Z')
  .describe('Due date as an ISO-8601 date or date-time, e.g. 2026-12-31T17:00:00Z.')

/** Paging over a listing the upstream returns whole: `limit` items after the `after` cursor. */
export const paging = {
  limit: z.number().int().min(1).max(1000).default(100).describe('How many to return (1–1000, default 100).'),
  after: z
    .string()
    .regex(ID, 'must be the "next" value of the previous page')
    .optional()
    .describe('For the next page: the "next" value of the previous answer. Leave out for the first page.'),
}

/** One page of `items` after the cursor; `next` is the cursor of the following page, null at the end. */
export function page<T extends { id: string }>(
  items: T[],
  opts: { limit: number; after?: string },
): { items: T[]; next: string | null } {
  let start = 0
  if (opts.after) {
    const i = items.findIndex((x) => x.id === opts.after)
    // A cursor that left the listing (its item was moved or archived) restarts after nothing.
    start = i === -1 ? items.length : i + 1
  }
  const slice = items.slice(start, start + opts.limit)
  const more = start + opts.limit < items.length
  return { items: slice, next: more && slice.length ? slice[slice.length - 1].id : null }
}

/** The slim card every card step returns: enough to act on, small enough for an LLM's context. */
export const card = z.object({
  id: z.string().describe('Card identifier.'),
  name: z.string(),
  desc: z.string(),
  idList: z.string().describe('List the card is on.'),
  idBoard: z.string().describe('Board the card is on.'),
  pos: z.number(),
  due: z.string().nullable(),
  closed: z.boolean().describe('True when the card is archived.'),
  idLabels: z.array(z.string()),
  idMembers: z.array(z.string()),
  url: z.string().describe('Web address of the card.'),
})

export function slimCard(c: TbCard): z.input<typeof card> {
  return {
    id: c.id,
    name: c.name,
    desc: c.desc ?? '',
    idList: c.idList,
    idBoard: c.idBoard,
    pos: c.pos,
    due: c.due ?? null,
    closed: Boolean(c.closed),
    idLabels: c.idLabels ?? [],
    idMembers: c.idMembers ?? [],
    url: c.url ?? c.shortUrl ?? '',
  }
}

export const board = z.object({
  id: z.string().describe('Board identifier: what idBoard inputs and board triggers take.'),
  name: z.string(),
  desc: z.string(),
  closed: z.boolean().describe('True when the board is closed.'),
  url: z.string().describe('Web address of the board.'),
})

export const slimBoard = (b: TbBoard): z.input<typeof board> => ({
  id: b.id,
  name: b.name,
  desc: b.desc ?? '',
  closed: Boolean(b.closed),
  url: b.url ?? b.shortUrl ?? '',
})

export const list = z.object({
  id: z.string().describe('List identifier: what idList inputs take.'),
  name: z.string(),
  idBoard: z.string().describe('Board the list is on.'),
  pos: z.number(),
  closed: z.boolean().describe('True when the list is archived.'),
})

export const slimList = (l: TbList): z.input<typeof list> => ({
  id: l.id,
  name: l.name,
  idBoard: l.idBoard,
  pos: l.pos,
  closed: Boolean(l.closed),
})

export const checkItem = z.object({
  id: z.string().describe('Checklist item identifier (idCheckItem).'),
  idChecklist: z.string(),
  name: z.string(),
  state: z.enum(['complete', 'incomplete']),
  pos: z.number(),
  due: z.string().nullable(),
})

export const slimCheckItem = (i: TbCheckItem): z.input<typeof checkItem> => ({
  id: i.id,
  idChecklist: i.idChecklist,
  name: i.name,
  state: i.state === 'complete' ? 'complete' : 'incomplete',
  pos: i.pos,
  due: i.due ?? null,
})

export const checklist = z.object({
  id: z.string().describe('Checklist identifier: what Create a Checklist Item takes as idChecklist.'),
  name: z.string(),
  idCard: z.string(),
  idBoard: z.string(),
  pos: z.number(),
  checkItems: z.array(checkItem),
})

export const slimChecklist = (c: TbChecklist): z.input<typeof checklist> => ({
  id: c.id,
  name: c.name,
  idCard: c.idCard,
  idBoard: c.idBoard,
  pos: c.pos,
  checkItems: (c.checkItems ?? []).map(slimCheckItem),
})

export const comment = z.object({
  id: z.string().describe('Identifier of the comment (its action).'),
  idCard: z.string(),
  text: z.string(),
  date: z.string(),
  author: z.string().describe('Username of the account that wrote it.'),
})

export const slimComment = (a: TbAction, idCard: string): z.input<typeof comment> => ({
  id: a.id,
  idCard: a.data?.card?.id ?? idCard,
  text: a.data?.text ?? '',
  date: a.date,
  author: a.memberCreator?.username ?? '',
})
