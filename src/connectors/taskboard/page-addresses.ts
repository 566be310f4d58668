// Page addresses: `{web}/b/{shortLink}/{slug}` for a board, `{web}/c/{shortLink}/{idShort}-{slug}`
// for a card. With `.json` appended the task-board answers the board's or card's data, id included.
import type { PageAddressSupport } from '../../kit/define.ts'

const PAGE = /^\/([bc])\/([A-Za-z0-9]{8}|[0-9a-f]{24})(?:\.json)?(?:\/[^/]*)?\/?$/

export const taskboardPageAddresses: PageAddressSupport = {
  dataPath: (kind, url) => {
    const m = PAGE.exec(url.pathname)
    if (!m || (kind === 'board' ? 'b' : kind === 'card' ? 'c' : null) !== m[1]) return undefined
    return `/${m[1]}/${m[2]}.json`
  },
  idOf: (_kind, data) => (typeof data?.id === 'string' ? data.id : undefined),
}
