// Checks a step makes before it changes anything: that a list lies on the board the input names,
// and that labels belong to the board the card will be on. Refusing here means nothing is left
// half-done upstream (a card created on the wrong board, a move that drops the card's labels).
import type { StepContext } from '../../../kit/define.ts'
import { PatchbayError } from '../../../kit/errors.ts'

/** Names the input field when the upstream does not know the resource. */
async function read<T>(ctx: StepContext, path: string, field: string, what: string, id: string): Promise<T> {
  try {
    return await ctx.http.get<T>(path, { fields: 'idBoard' })
  } catch (err) {
    if (err instanceof PatchbayError && err.code === 'UPSTREAM_NOT_FOUND')
      throw new PatchbayError(
        'UPSTREAM_NOT_FOUND',
        `input.${field}: there is no ${what} ${id}, or the account cannot see it.`,
        {
          hint: `Check the ${what} identifier (${what === 'list' ? 'from Get List Cards, Create List or an event' : 'from Get Boards or an event'}).`,
          upstream: err.upstream,
        },
      )
    throw err
  }
}

/** The board a list is on. */
export async function boardOfList(ctx: StepContext, idList: string, field = 'idList'): Promise<string> {
  return (await read<{ idBoard: string }>(ctx, `/1/lists/${idList}`, field, 'list', idList)).idBoard
}

/** The board a card is on. */
export async function boardOfCard(ctx: StepContext, idCard: string, field = 'idCard'): Promise<string> {
  return (await read<{ idBoard: string }>(ctx, `/1/cards/${idCard}`, field, 'card', idCard)).idBoard
}

export function listNotOnBoard(idList: string, listBoard: string, idBoard: string, why: string) {
  return new PatchbayError(
    'LIST_NOT_ON_BOARD',
    `input.idList: the list ${idList} is on board ${listBoard}, not on board ${idBoard} (${why}). Nothing was changed.`,
    {
      hint: `Give a list on board ${idBoard} (its lists: API Call GET /1/boards/${idBoard}/lists), or give idBoard ${listBoard} if that board is meant.`,
      details: { idList, listBoard, idBoard },
    },
  )
}

/** Refuses labels that are not on the board (labels are made per board). */
export async function requireLabelsOnBoard(ctx: StepContext, idLabels: string[], idBoard: string) {
  if (idLabels.length === 0) return
  const labels = await ctx.http.get<Array<{ id: string }>>(`/1/boards/${idBoard}/labels`, {
    fields: 'id',
    limit: 1000,
  })
  const known = new Set(labels.map((l) => l.id))
  const foreign = idLabels.filter((id) => !known.has(id))
  if (foreign.length > 0)
    throw new PatchbayError(
      'LABEL_NOT_ON_BOARD',
      `input.idLabels: ${foreign.join(', ')} ${foreign.length === 1 ? 'is not a label' : 'are not labels'} of board ${idBoard}, where the card is. Nothing was changed.`,
      {
        hint: `Use labels of board ${idBoard} (API Call GET /1/boards/${idBoard}/labels), or create one there.`,
        details: { idBoard, labels: foreign },
      },
    )
}
