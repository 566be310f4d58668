// How the task-board fields that name a resource list their choices: boards the account sees,
// the lists and labels of a board, the cards of a list and the checklists of a card.
import { definePicker, type Picker } from '../../kit/pickers.ts'

type Named = { id: string; name?: string; color?: string | null; closed?: boolean }
const choice = (x: Named, label = x.name || x.id) => ({ value: x.id, label })

export const boards: Picker = definePicker({
  noun: 'board',
  parents: [],
  list: async (ctx) => {
    const all = await ctx.http.get<Named[]>('/1/members/me/boards', { filter: 'open', fields: 'id,name' })
    // An agent is offered only the boards of its scope.
    const scope = ctx.scope
    return all.filter((b) => !scope || scope.boards.includes(b.id)).map((b) => choice(b))
  },
})

const onBoard = {
  parents: [{ field: 'idBoard', picker: boards }],
  scoped: [{ kind: 'board' as const, field: 'idBoard' }],
}

export const lists: Picker = definePicker({
  noun: 'list',
  ...onBoard,
  list: async (ctx, { idBoard }) =>
    (await ctx.http.get<Named[]>(`/1/boards/${idBoard}/lists`, { filter: 'open', fields: 'id,name' })).map(
      (l) => choice(l),
    ),
})

export const labels: Picker = definePicker({
  noun: 'label',
  ...onBoard,
  list: async (ctx, { idBoard }) =>
    (await ctx.http.get<Named[]>(`/1/boards/${idBoard}/labels`, { fields: 'id,name,color' })).map((l) =>
      choice(l, l.name || `(${l.color ?? 'no'} label)`),
    ),
})

export const cards: Picker = definePicker({
  noun: 'card',
  parents: [{ field: 'idList', picker: lists }],
  scoped: [{ kind: 'list', field: 'idList' }],
  list: async (ctx, { idList }) =>
    (await ctx.http.get<Named[]>(`/1/lists/${idList}/cards`, { filter: 'open', fields: 'id,name' })).map(
      (c) => choice(c),
    ),
})

export const checklists: Picker = definePicker({
  noun: 'checklist',
  parents: [{ field: 'idCard', picker: cards }],
  scoped: [{ kind: 'card', field: 'idCard' }],
  list: async (ctx, { idCard }) =>
    (await ctx.http.get<Named[]>(`/1/cards/${idCard}/checklists`, { fields: 'id,name' })).map((c) =>
      choice(c),
    ),
})
