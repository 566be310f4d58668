// The task-board's data: members, apps (API keys), tokens, boards and everything on them, the
// action log, notifications and webhooks. Everything lives in memory and is rebuilt by reset().
import { createHash } from 'node:crypto'
import type { Clock } from '../common/clock.ts'
import { Rng } from '../common/rng.ts'

export type Scope = 'read' | 'write' | 'account'
export const SCOPES: readonly Scope[] = ['read', 'write', 'account']
export type Expiration = '1hour' | '1day' | '30days' | 'never'
export const EXPIRATIONS: readonly Expiration[] = ['1hour', '1day', '30days', 'never']
export const EXPIRATION_MS: Record<Expiration, number | null> = {
  '1hour': 3600_000,
  '1day': 86_400_000,
  '30days': 30 * 86_400_000,
  never: null,
}
export const LABEL_COLORS = [
  'green',
  'yellow',
  'orange',
  'red',
  'purple',
  'blue',
  'sky',
  'lime',
  'pink',
  'black',
] as const

export interface Member {
  id: string
  username: string
  fullName: string
  initials: string
  password: string
  /** Every member has an avatar here (the real service's is null until one is uploaded). */
  avatarHash: string
  /** The member's own workspace, where their boards go unless another is named. */
  idOrganization: string
}

export interface App {
  key: string
  secret: string
  idMember: string
  name: string
  /** Origins a token page may send its token back to; empty allows any (the demo app). */
  allowedOrigins: string[]
}

export interface Token {
  value: string
  id: string
  key: string
  idMember: string
  scopes: Scope[]
  identifier: string
  dateCreated: number
  dateExpires: number | null
  /** OAuth 1.0a access tokens carry a secret; signed API calls are checked against it. */
  secret: string | null
}

export interface Membership {
  id: string
  idMember: string
  memberType: 'admin' | 'normal' | 'observer'
}

export interface Board {
  id: string
  name: string
  desc: string
  closed: boolean
  idOrganization: string
  shortLink: string
  permissionLevel: 'private' | 'org' | 'public'
  memberships: Membership[]
  dateLastActivity: number
  nextIdShort: number
}

export interface List {
  id: string
  name: string
  closed: boolean
  pos: number
  idBoard: string
  subscribers: Set<string>
}

export interface Attachment {
  id: string
  name: string
  url: string
  bytes: number | null
  date: number
  idMember: string
  isUpload: boolean
  /** A link's is empty unless given. */
  mimeType: string
  fileName: string | null
}

export interface Card {
  id: string
  name: string
  desc: string
  closed: boolean
  idList: string
  idBoard: string
  idMembers: string[]
  idLabels: string[]
  idChecklists: string[]
  pos: number
  due: string | null
  start: string | null
  dueComplete: boolean
  dateLastActivity: number
  idShort: number
  shortLink: string
  attachments: Attachment[]
  commentCount: number
  subscribers: Set<string>
}

export interface Label {
  id: string
  idBoard: string
  name: string
  color: string | null
}

export interface CheckItem {
  id: string
  idChecklist: string
  name: string
  state: 'complete' | 'incomplete'
  pos: number
  due: string | null
  idMember: string | null
}

export interface Checklist {
  id: string
  name: string
  idBoard: string
  idCard: string
  pos: number
  checkItems: CheckItem[]
}

export interface Action {
  id: string
  seq: number
  idMemberCreator: string
  type: string
  date: number
  data: Record<string, unknown>
  translationKey: string
  /** Ids of the models whose webhooks receive this action (board, lists, card, members). */
  models: string[]
}

export interface Notification {
  id: string
  seq: number
  idMember: string
  unread: boolean
  type: string
  date: number
  data: Record<string, unknown>
  idMemberCreator: string
  idAction: string
}

export interface Webhook {
  id: string
  description: string
  idModel: string
  callbackURL: string
  active: boolean
  consecutiveFailures: number
  firstConsecutiveFailDate: number | null
  token: string
  /** Deliveries for one webhook go out one after another, in action order. */
  queue: Promise<void>
}

export interface RequestToken {
  token: string
  secret: string
  key: string
  callback: string
  verifier: string | null
  idMember: string | null
  scopes: Scope[]
  expiration: Expiration
  name: string
  created: number
}

/** Seeded data is dated here so that its ids are the same on every start. */
export const SEED_TIME = Date.parse('2024-01-15T09:00:00.000Z')
const ID_SEED = 0x7a5b0a2d

export class Store {
  clock: Clock
  /** Base of page addresses (board and card `url`), known once the server listens. */
  webUrl = 'http://127.0.0.1'
  rng = new Rng(ID_SEED)
  #seq = 0
  /** Seeding stamps ids with SEED_TIME instead of the clock. */
  fixedTime: number | null = null

  members = new Map<string, Member>()
  apps = new Map<string, App>()
  tokens = new Map<string, Token>()
  boards = new Map<string, Board>()
  lists = new Map<string, List>()
  cards = new Map<string, Card>()
  labels = new Map<string, Label>()
  checklists = new Map<string, Checklist>()
  actions: Action[] = []
  notifications: Notification[] = []
  webhooks = new Map<string, Webhook>()
  requestTokens = new Map<string, RequestToken>()
  usedNonces = new Set<string>()

  /** Called for every recorded action (webhook dispatch hooks in here). */
  onAction: (action: Action) => void = () => {}
  /** Called when tokens disappear (revoked or expired) so their webhooks go too. */
  onTokensGone: (tokens: string[]) => void = () => {}

  #seed: (s: Store) => void

  /** `seed` fills a fresh store with its starting data, on construction and on every reset. */
  constructor(clock: Clock, seed: (s: Store) => void) {
    this.clock = clock
    this.#seed = seed
    this.reset()
  }

  reset(): void {
    this.rng = new Rng(ID_SEED)
    this.#seq = 0
    for (const m of [
      this.members,
      this.apps,
      this.tokens,
      this.boards,
      this.lists,
      this.cards,
      this.labels,
      this.checklists,
      this.webhooks,
      this.requestTokens,
    ])
      m.clear()
    this.usedNonces.clear()
    this.actions = []
    this.notifications = []
    this.fixedTime = SEED_TIME
    try {
      this.#seed(this)
    } finally {
      this.fixedTime = null
    }
  }

  /** The data, for a state file (sandbox/common/persistence.ts): everything but the wiring. */
  snapshot() {
    const { clock, webUrl, fixedTime, rng, onAction, onTokensGone, webhooks, ...data } = this
    return {
      ...data,
      seq: this.#seq,
      rng: rng.state,
      // A webhook's delivery queue is a promise of this process; it starts empty after a restart.
      webhooks: new Map([...webhooks].map(([id, { queue, ...hook }]) => [id, hook])),
    }
  }

  restore(state: ReturnType<Store['snapshot']>): void {
    const { seq, rng, webhooks, ...data } = state
    Object.assign(this, data)
    this.#seq = seq
    this.rng = new Rng(rng)
    this.webhooks = new Map([...webhooks].map(([id, hook]) => [id, { ...hook, queue: Promise.resolve() }]))
  }

  now(): number {
    return this.fixedTime ?? this.clock.now()
  }

  nextSeq(): number {
    return ++this.#seq
  }

  /** An ObjectId-shaped id: creation second in the first 8 hex digits, like the real service. */
  newId(): string {
    const secs = Math.floor(this.now() / 1000)
      .toString(16)
      .padStart(8, '0')
    return secs + this.rng.hex(16)
  }

  newShortLink(): string {
    for (;;) {
      const s = this.rng.alnum(8)
      if (!this.findBoard(s) && !this.findCard(s)) return s
    }
  }

  findBoard(idOrShortLink: string): Board | undefined {
    const b = this.boards.get(idOrShortLink)
    if (b) return b
    for (const x of this.boards.values()) if (x.shortLink === idOrShortLink) return x
    return undefined
  }

  findCard(idOrShortLink: string): Card | undefined {
    const c = this.cards.get(idOrShortLink)
    if (c) return c
    for (const x of this.cards.values()) if (x.shortLink === idOrShortLink) return x
    return undefined
  }

  findMember(idOrUsername: string): Member | undefined {
    const m = this.members.get(idOrUsername)
    if (m) return m
    for (const x of this.members.values()) if (x.username === idOrUsername.toLowerCase()) return x
    return undefined
  }

  isOnBoard(board: Board, idMember: string): boolean {
    return board.memberships.some((m) => m.idMember === idMember)
  }

  boardMemberIds(board: Board): string[] {
    return board.memberships.map((m) => m.idMember)
  }

  /** Removes expired tokens; their webhooks are deleted with them. */
  sweepExpiredTokens(): void {
    const now = this.clock.now()
    const gone: string[] = []
    for (const t of this.tokens.values()) {
      if (t.dateExpires !== null && t.dateExpires <= now) gone.push(t.value)
    }
    if (gone.length === 0) return
    for (const v of gone) this.tokens.delete(v)
    this.onTokensGone(gone)
  }

  revokeToken(value: string): void {
    if (!this.tokens.delete(value)) return
    this.onTokensGone([value])
  }

  // Creation helpers shared by the seed, the API and the control API.

  addMember(username: string, fullName: string, password: string): Member {
    const initials =
      fullName
        .split(/\s+/)
        .filter(Boolean)
        .map((w) => w[0]!.toUpperCase())
        .join('')
        .slice(0, 4) || username.slice(0, 2).toUpperCase()
    const id = this.newId()
    // Derived from the id rather than drawn, so seeded ids stay what they were.
    const digest = createHash('md5').update(id).digest('hex')
    const m: Member = {
      id,
      username: username.toLowerCase(),
      fullName,
      initials,
      password,
      avatarHash: digest,
      idOrganization: id.slice(0, 8) + digest.slice(0, 16),
    }
    this.members.set(m.id, m)
    return m
  }

  addApp(idMember: string, name: string, key?: string, secret?: string, allowedOrigins: string[] = []): App {
    const app: App = {
      key: key ?? this.rng.hex(32),
      secret: secret ?? this.rng.hex(64),
      idMember,
      name,
      allowedOrigins,
    }
    this.apps.set(app.key, app)
    return app
  }

  addToken(
    key: string,
    idMember: string,
    scopes: Scope[],
    expiration: Expiration,
    identifier: string,
    opts: { value?: string; secret?: string | null } = {},
  ): Token {
    const now = this.clock.now()
    const ttl = EXPIRATION_MS[expiration]
    const token: Token = {
      value: opts.value ?? this.rng.hex(64),
      id: this.newId(),
      key,
      idMember,
      scopes: SCOPES.filter((s) => scopes.includes(s)),
      identifier,
      dateCreated: now,
      dateExpires: ttl === null ? null : now + ttl,
      secret: opts.secret ?? null,
    }
    this.tokens.set(token.value, token)
    return token
  }
}
