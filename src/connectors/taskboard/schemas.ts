// Field schemas shared by the task-board steps, described for an LLM reading the catalog.
import { z } from 'zod'

const ID = /^[0-9a-f]{24}$/

export const taskboardId = (what: string, source: string) =>
  z
    .string()
    .regex(ID, `must be a ${what} identifier: 24 lowercase hexadecimal characters`)
    .describe(`Identifier of the ${what} (24 hex characters). ${source}`)

export const position = z
  .union([z.enum(['top', 'bottom']), z.number().positive()])
  .describe('Placement in the list: "top", "bottom" or a positive number (smaller is higher).')

export const dueDate = z
  .string()
  .refine((s) => !Number.isNaN(Date.parse(s)), 'must be a date, such as 2026-12-31 or 2026-12-31T17:00:00Z')
  .describe('Due date as an ISO-8601 date or date-time, e.g. 2026-12-31T17:00:00Z.')

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

export function slimCard(c: any): z.input<typeof card> {
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
