// Page addresses: `{web}/b/{shortLink}/{slug}` for a board, `{web}/c/{shortLink}/{idShort}-{slug}`
// for a card. The API takes a short link wherever it takes an id, so the identifier is read with
// `GET /1/boards/{shortLink}?fields=id` or `GET /1/cards/{shortLink}?fields=id,idBoard`: only the
// fields needed, with the same credentials, pacing and errors as every other API call.
import type { PageAddressSupport } from '../../kit/define.ts'

const PAGE = /^\/([bc])\/([A-Za-z0-9]{8}|[0-9a-f]{24})(?:\.json)?(?:\/[^/]*)?\/?$/

export const taskboardPageAddresses: PageAddressSupport = {
  forms: '…/b/{shortLink}/… for a board, …/c/{shortLink}/… for a card',
  request: (kind, url) => {
    const m = PAGE.exec(url.pathname)
    if (!m) return undefined
    if (kind === 'board' && m[1] === 'b') return { path: `/1/boards/${m[2]}`, query: { fields: 'id' } }
    if (kind === 'card' && m[1] === 'c') return { path: `/1/cards/${m[2]}`, query: { fields: 'id,idBoard' } }
    return undefined
  },
  idOf: (_kind, data) => {
    const id = (data as { id?: unknown } | null)?.id
    return typeof id === 'string' ? id : undefined
  },
}
