// What the task-board answers and sends, as far as Patchbay reads it: the fields the slim outputs,
// the triggers and the polls take. Everything else the upstream sends passes through unread.
// (The sandbox's answers are checked against the published description in test/helpers.)

/** A reference to a board, list or card inside an action's data. */
export interface WireRef {
  id?: string
  name?: string
  idList?: string
  closed?: boolean
}

export interface WireCard {
  id: string
  name: string
  desc?: string
  idList: string
  idBoard: string
  pos: number
  due?: string | null
  dueComplete?: boolean
  closed?: boolean
  idLabels?: string[]
  idMembers?: string[]
  url?: string
  shortUrl?: string
}

export interface WireBoard {
  id: string
  name: string
  desc?: string
  closed?: boolean
  url?: string
  shortUrl?: string
}

export interface WireList {
  id: string
  name: string
  idBoard: string
  pos: number
  closed?: boolean
}

export interface WireCheckItem {
  id: string
  idChecklist: string
  name: string
  state?: string
  pos: number
  due?: string | null
}

export interface WireChecklist {
  id: string
  name: string
  idCard: string
  idBoard: string
  pos: number
  checkItems?: WireCheckItem[]
}

/** What an action or notification is about; the task-board adds more per type. */
export interface WireActionData {
  board?: WireRef
  list?: WireRef
  listBefore?: WireRef
  listAfter?: WireRef
  card?: WireRef
  old?: Record<string, unknown>
  text?: string
  [field: string]: unknown
}

/** An action: a webhook delivery's body, a comment. */
export interface WireAction {
  id: string
  type: string
  date: string
  data?: WireActionData
  memberCreator?: { id: string; username: string; fullName?: string }
}

/** A member's notification (the notifications poll). */
export interface WireNotification {
  id: string
  type: string
  date: string
  unread?: boolean
  idMemberCreator?: string
  idAction?: string
  data?: WireActionData
}
