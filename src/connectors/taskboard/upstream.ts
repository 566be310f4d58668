// The task-board's JSON as the steps and triggers read it (upstreams.md, "Objects"): only the
// fields read here, each as the upstream may send it. A listing asked for with `fields=` carries
// only those, so what a slim shape fills in with a default is optional.

export interface TbCard {
  id: string
  name: string
  desc?: string
  closed?: boolean
  idList: string
  idBoard: string
  idMembers?: string[]
  idLabels?: string[]
  pos: number
  due?: string | null
  dueComplete?: boolean
  url?: string
  shortUrl?: string
}

export interface TbBoard {
  id: string
  name: string
  desc?: string
  closed?: boolean
  url?: string
  shortUrl?: string
}

export interface TbList {
  id: string
  name: string
  idBoard: string
  pos: number
  closed?: boolean
}

export interface TbCheckItem {
  id: string
  idChecklist: string
  name: string
  state: string
  pos: number
  due?: string | null
}

export interface TbChecklist {
  id: string
  name: string
  idCard: string
  idBoard: string
  pos: number
  checkItems?: TbCheckItem[]
}

export interface TbMemberCreator {
  id: string
  username: string
  fullName?: string
}

/** An id-and-name reference inside an action's or notification's `data` (board, list, card …). */
interface TbRef {
  id: string
  name?: string
  idList?: string
  closed?: boolean
  [field: string]: unknown
}

/** An action's `data`: what it is about, varying by action type (upstreams.md, "Action types"). */
export interface TbActionData {
  board?: TbRef
  list?: TbRef
  listBefore?: TbRef
  listAfter?: TbRef
  card?: TbRef
  old?: Record<string, unknown>
  text?: string
  [field: string]: unknown
}

export interface TbAction {
  id: string
  type: string
  date: string
  data?: TbActionData
  memberCreator?: TbMemberCreator
}

export interface TbNotification {
  id: string
  type: string
  date: string
  unread?: boolean
  idMemberCreator?: string
  idAction?: string
  data?: TbActionData
}
