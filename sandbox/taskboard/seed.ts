// The demo account every start begins with. The key, secret and tokens are fixed strings and the
// ids come from a seeded generator, so they are the same on every start and after every reset.
import { memberCtx } from './access.ts'
import { addMemberToBoard, createBoard } from './ops/boards.ts'
import { addComment, createCard } from './ops/cards.ts'
import { addCheckItem, createChecklist } from './ops/checklists.ts'
import type { Store } from './store.ts'

export const DEMO = {
  key: '953320eb7a845a6de968a7fd0e0a2625',
  secret: 'ed34543a53e2d1cdb19dec76fc27e9b18d7466301f768296a77b0d43f21c00b8',
  token: '4c2816c31df0f6748232de793ddb49c10f7c51cdf608138e7882977a73d5f96a',
  username: 'demo',
  fullName: 'Demo User',
  password: 'demo',
  teammate: {
    username: 'teammate',
    fullName: 'Team Mate',
    password: 'teammate',
    token: '0600093253dddd0cff2358c1e345360518a7b697f3703e81c41c4390429bd635',
  },
} as const

export function seedDemo(s: Store): void {
  const demo = s.addMember(DEMO.username, DEMO.fullName, DEMO.password)
  const mate = s.addMember(DEMO.teammate.username, DEMO.teammate.fullName, DEMO.teammate.password)
  s.addApp(demo.id, 'Demo App', DEMO.key, DEMO.secret)
  s.addToken(DEMO.key, demo.id, ['read', 'write', 'account'], 'never', 'Demo token', { value: DEMO.token })
  s.addToken(DEMO.key, mate.id, ['read', 'write', 'account'], 'never', 'Teammate token', {
    value: DEMO.teammate.token,
  })

  const asDemo = memberCtx(demo)
  const board = createBoard(s, asDemo, {
    name: 'Demo Board',
    desc: 'A board to try the task-board connector on.',
  })
  addMemberToBoard(s, asDemo, board.id, mate.id, { type: 'normal' })
  const labels = [...s.labels.values()].filter((l) => l.idBoard === board.id)
  labels[0]!.name = 'Ready'
  labels[3]!.name = 'Urgent'
  const [todo, doing, done] = [...s.lists.values()]
    .filter((l) => l.idBoard === board.id)
    .sort((a, b) => a.pos - b.pos)

  createCard(s, asDemo, {
    idList: todo!.id,
    name: 'Welcome to Patchbay',
    desc: 'Cards move from To Do to Doing to Done.',
    idLabels: [labels[0]!.id],
    idMembers: [demo.id],
  })
  const docs = createCard(s, asDemo, {
    idList: doing!.id,
    name: 'Write the docs',
    due: '2024-02-01T12:00:00.000Z',
    idMembers: [demo.id, mate.id],
  })
  const checklist = createChecklist(s, asDemo, { idCard: docs.id, name: 'Sections' })
  addCheckItem(s, asDemo, checklist.id, { name: 'Getting started', checked: true })
  addCheckItem(s, asDemo, checklist.id, { name: 'Reference' })
  addComment(s, asDemo, docs.id, { text: 'Drafting this now.' })
  createCard(s, asDemo, { idList: done!.id, name: 'Set up the board' })
}
