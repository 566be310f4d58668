// The JSON shapes the API answers with, field for field as the wire-format page lists them.
import { slugify } from './params.ts'
import type {
  Action,
  Attachment,
  Board,
  Card,
  CheckItem,
  Checklist,
  Label,
  List,
  Member,
  Notification,
  Store,
  Token,
  Webhook,
} from './store.ts'
import { LABEL_COLORS } from './store.ts'

const iso = (ms: number) => new Date(ms).toISOString()

export function memberView(s: Store, m: Member) {
  return {
    id: m.id,
    username: m.username,
    fullName: m.fullName,
    initials: m.initials,
    url: `${s.webUrl}/${m.username}`,
  }
}

export function boardView(s: Store, b: Board) {
  const labelNames: Record<string, string> = {}
  for (const color of LABEL_COLORS) {
    const label = [...s.labels.values()].find((l) => l.idBoard === b.id && l.color === color)
    labelNames[color] = label?.name ?? ''
  }
  return {
    id: b.id,
    name: b.name,
    desc: b.desc,
    closed: b.closed,
    idOrganization: b.idOrganization,
    url: `${s.webUrl}/b/${b.shortLink}/${slugify(b.name)}`,
    shortUrl: `${s.webUrl}/b/${b.shortLink}`,
    shortLink: b.shortLink,
    prefs: {
      permissionLevel: b.permissionLevel,
      voting: 'disabled',
      comments: 'members',
      invitations: 'members',
      selfJoin: true,
      cardCovers: true,
      isTemplate: false,
      cardAging: 'regular',
      calendarFeedEnabled: false,
      hideVotes: false,
      background: 'blue',
      backgroundColor: '#0079BF',
      canBePublic: true,
      canBeOrg: true,
      canBePrivate: true,
      canInvite: true,
    },
    labelNames,
    dateLastActivity: iso(b.dateLastActivity),
  }
}

export function listView(l: List, viewer: string | null) {
  return {
    id: l.id,
    name: l.name,
    closed: l.closed,
    pos: l.pos,
    idBoard: l.idBoard,
    subscribed: viewer !== null && l.subscribers.has(viewer),
  }
}

export function labelView(s: Store, l: Label) {
  let uses = 0
  for (const c of s.cards.values()) if (c.idLabels.includes(l.id)) uses++
  return { id: l.id, idBoard: l.idBoard, name: l.name, color: l.color, uses }
}

export function cardView(s: Store, c: Card, viewer: string | null = null) {
  const slug = `${c.idShort}-${slugify(c.name)}`.replace(/-$/, '')
  let checkItems = 0
  let checkItemsChecked = 0
  for (const id of c.idChecklists) {
    for (const item of s.checklists.get(id)?.checkItems ?? []) {
      checkItems++
      if (item.state === 'complete') checkItemsChecked++
    }
  }
  return {
    id: c.id,
    name: c.name,
    desc: c.desc,
    closed: c.closed,
    idList: c.idList,
    idBoard: c.idBoard,
    idMembers: [...c.idMembers],
    idLabels: [...c.idLabels],
    labels: c.idLabels.flatMap((id) => {
      const l = s.labels.get(id)
      return l ? [labelView(s, l)] : []
    }),
    idChecklists: [...c.idChecklists],
    pos: c.pos,
    due: c.due,
    start: c.start,
    dueComplete: c.dueComplete,
    dateLastActivity: iso(c.dateLastActivity),
    idShort: c.idShort,
    shortLink: c.shortLink,
    shortUrl: `${s.webUrl}/c/${c.shortLink}`,
    url: `${s.webUrl}/c/${c.shortLink}/${slug}`,
    badges: {
      // The real service keys this by its own name; the schema makes the key optional.
      attachmentsByType: {},
      location: false,
      votes: 0,
      viewingMemberVoted: false,
      subscribed: viewer !== null && c.subscribers.has(viewer),
      fogbugz: '',
      checkItems,
      checkItemsChecked,
      checkItemsEarliestDue: null,
      comments: c.commentCount,
      attachments: c.attachments.length,
      description: c.desc !== '',
      due: c.due,
      dueComplete: c.dueComplete,
      start: c.start,
    },
  }
}

export function checkItemView(i: CheckItem) {
  return {
    id: i.id,
    idChecklist: i.idChecklist,
    name: i.name,
    state: i.state,
    pos: i.pos,
    due: i.due,
    idMember: i.idMember,
  }
}

export function checklistView(c: Checklist) {
  return {
    id: c.id,
    name: c.name,
    idBoard: c.idBoard,
    idCard: c.idCard,
    pos: c.pos,
    checkItems: [...c.checkItems].sort((a, b) => a.pos - b.pos).map(checkItemView),
  }
}

export function attachmentView(a: Attachment) {
  return {
    id: a.id,
    name: a.name,
    url: a.url,
    bytes: a.bytes,
    date: iso(a.date),
    idMember: a.idMember,
    isUpload: a.isUpload,
    mimeType: a.mimeType,
    fileName: a.fileName,
  }
}

export function actionView(s: Store, a: Action) {
  const m = s.members.get(a.idMemberCreator)
  return {
    id: a.id,
    idMemberCreator: a.idMemberCreator,
    type: a.type,
    date: iso(a.date),
    data: a.data,
    memberCreator: {
      id: a.idMemberCreator,
      activityBlocked: false,
      avatarHash: m?.avatarHash,
      fullName: m?.fullName ?? '',
      idMemberReferrer: null,
      initials: m?.initials ?? '',
      nonPublic: {},
      nonPublicAvailable: true,
      username: m?.username ?? '',
    },
    display: { translationKey: a.translationKey },
  }
}

export function notificationView(n: Notification) {
  return {
    id: n.id,
    unread: n.unread,
    type: n.type,
    date: iso(n.date),
    data: n.data,
    idMemberCreator: n.idMemberCreator,
    idAction: n.idAction,
  }
}

export function webhookView(w: Webhook) {
  return {
    id: w.id,
    description: w.description,
    idModel: w.idModel,
    callbackURL: w.callbackURL,
    active: w.active,
    consecutiveFailures: w.consecutiveFailures,
    firstConsecutiveFailDate: w.firstConsecutiveFailDate === null ? null : iso(w.firstConsecutiveFailDate),
  }
}

export function tokenView(t: Token) {
  const read = t.scopes.includes('read')
  const write = t.scopes.includes('write')
  return {
    id: t.id,
    identifier: t.identifier,
    idMember: t.idMember,
    dateCreated: iso(t.dateCreated),
    dateExpires: t.dateExpires === null ? null : iso(t.dateExpires),
    permissions: [
      { idModel: t.idMember, modelType: 'Member', read, write: t.scopes.includes('account') },
      { idModel: '*', modelType: 'Board', read, write },
      { idModel: '*', modelType: 'Organization', read, write },
    ],
  }
}
