// Shelf: a connector that exists only in the tests (never shipped), to show that a connector is
// its folder. It declares one place kind (a shelf, listed in an agent's scope as `shelves`), one
// ready-made step on a shelf and one polled trigger, and Patchbay derives everything else — the
// agents' schema, the scope checks of its step and trigger, which events reach which agent.
// Registered by one line of the tests' connectors list (../index.ts).
import { z } from 'zod'
import {
  defineConnector,
  defineStep,
  defineTrigger,
  type NormalizedEvent,
} from '../../../../src/kit/define.ts'

const SHELF_ID = /^shelf-[a-z0-9]{1,20}$/

const shelfId = z
  .string()
  .regex(SHELF_ID, 'must be a shelf id: shelf- and up to 20 lowercase letters or digits')

const item = z.object({ id: z.string(), name: z.string(), shelf: z.string() })

const getItem = defineStep({
  key: 'get_item',
  name: 'Get Item',
  description: 'Reads an item of a shelf.',
  input: z
    .object({ shelf: shelfId.describe('The shelf.'), item: z.string().min(1).describe('The item id.') })
    .strict(),
  output: item,
  hints: { readOnly: true },
  scoped: [{ kind: 'shelf', field: 'shelf' }],
  run: (ctx, input) =>
    ctx.http.get(`/shelves/${encodeURIComponent(input.shelf)}/items/${encodeURIComponent(input.item)}`),
})

const putItem = defineStep({
  key: 'put_item',
  name: 'Put Item',
  description: 'Puts a new item on a shelf.',
  input: z.object({ shelf: shelfId.describe('The shelf.'), name: z.string().min(1).max(200) }).strict(),
  output: item,
  hints: { readOnly: false, destructive: false, idempotent: false },
  scoped: [{ kind: 'shelf', field: 'shelf' }],
  run: (ctx, input) =>
    ctx.http.post(`/shelves/${encodeURIComponent(input.shelf)}/items`, { name: input.name }),
})

const newItem = defineTrigger({
  key: 'new_item',
  name: 'New Item',
  description: 'Fires when an item is put on the shelf.',
  instant: false,
  config: z.object({ shelf: shelfId.describe('The shelf to watch.') }).strict(),
  scoped: [{ kind: 'shelf', field: 'shelf' }],
  cursor: z.object({ seen: z.array(z.string()) }),
  poll: async (ctx, config) => {
    const items = await ctx.http.get<Array<z.output<typeof item>>>(
      `/shelves/${encodeURIComponent(config.shelf)}/items`,
    )
    const seen = new Set(ctx.cursor?.seen ?? [])
    // The first poll notes what is there; later ones fire for what is new.
    const events: NormalizedEvent[] = ctx.cursor
      ? items
          .filter((i) => !seen.has(i.id))
          .map((i) => ({
            id: `item:${i.id}`,
            type: 'item.created',
            occurredAt: ctx.now.toISOString(),
            refs: { shelf: i.shelf, item: i.id },
            data: { item: i },
          }))
      : []
    return { events, cursor: { seen: items.map((i) => i.id) } }
  },
  pollIntervalMs: 60_000,
})

export const shelf = defineConnector({
  id: 'shelf',
  name: 'Shelf',
  aliases: [],
  description: 'Items on shelves (a connector of the tests only).',
  beta: true,
  auth: [
    {
      id: 'api_key',
      name: 'API key',
      description: 'The shelf API key.',
      credentials: z.object({ apiKey: z.string().min(1).max(200) }),
    },
  ],
  authorize: (req, credentials) => {
    req.headers['x-shelf-key'] = credentials.apiKey
  },
  identify: async (http) => {
    const me = await http.get<{ id: string; name: string }>('/me')
    return { accountName: me.name, accountId: me.id }
  },
  places: [
    {
      kind: 'shelf',
      scopeKey: 'shelves',
      id: shelfId.describe('A shelf id.'),
      description: 'Shelves the agent may touch (shelf-…). Empty: none.',
      summary: 'Shelves the agent may touch.',
    },
  ],
  // An event names its item too: the item a step's output names by its id (the loop guard).
  eventRefs: [{ name: 'item', description: 'The item the event is about.', resource: true }],
  // The title forms give a field of its own (a name the engine has no words for).
  fieldTitles: { shelf: 'Shelf id' },
  steps: [getItem, putItem],
  triggers: [newItem],
})
