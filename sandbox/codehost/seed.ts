// The seeded start state. Everything here (credentials, ids, commit shas) is the same on every
// start and after every reset: ids are sequential, secrets come from the fixed-seed generator,
// and seed commits carry fixed dates.

import { registerWorkflows } from './actions.ts'
import type { Ctx } from './context.ts'
import { createCommit, putBlob } from './git.ts'
import { classicToken, nodeId } from './ids.ts'
import { newRepo } from './repos.ts'
import { type Issue, type OAuthApp, type ProjectV2, Store, type Token, type User } from './store.ts'

export const DEMO_LOGIN = 'octo-demo'
export const DEMO_PASSWORD = 'octo-demo-password'
export const REVIEWER_LOGIN = 'reviewer'
export const REVIEWER_PASSWORD = 'reviewer-password'
export const DEMO_REPO = 'hello-world'
export const DEMO_ORG = 'octo-org'
export const DEMO_SCOPES = [
  'repo',
  'workflow',
  'gist',
  'user',
  'admin:repo_hook',
  'admin:org_hook',
  'project',
  'notifications',
  'delete_repo',
  'read:org',
  'write:discussion',
]
const SEED_DATE = '2024-01-15T09:00:00.000Z'
const SEED_DATE_2 = '2024-01-16T10:30:00.000Z'

export const CI_YML = `name: CI
on:
  workflow_dispatch:
    inputs:
      reason:
        description: Why this run was started
        required: false
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: npm test
`

export function addUser(
  store: Store,
  login: string,
  opts: {
    name?: string | null
    email?: string | null
    password?: string
    type?: User['type']
    createdAt: string
  },
): User {
  const u: User = {
    id: store.nextId('user', 1001),
    login,
    name: opts.name ?? null,
    email: opts.email === undefined ? `${login}@users.codehost.local` : opts.email,
    password: opts.password ?? `${login}-password`,
    type: opts.type ?? 'User',
    createdAt: opts.createdAt,
    bio: null,
    company: null,
    location: null,
    members: new Map(),
  }
  store.users.set(u.id, u)
  return u
}

export function addToken(
  store: Store,
  user: User,
  kind: Token['kind'],
  value: string,
  scopes: string[],
  createdAt: string,
  extra: Partial<Token> = {},
): Token {
  const t: Token = {
    id: store.nextId('token', 1),
    value,
    kind,
    userId: user.id,
    scopes,
    ownerId: null,
    repoIds: null,
    permissions: null,
    expiresAt: null,
    appId: null,
    note: null,
    createdAt,
    ...extra,
  }
  store.tokens.set(t.value, t)
  return t
}

export interface SeedInfo {
  demo: User
  reviewer: User
  demoToken: Token
  reviewerToken: Token
  app: OAuthApp
}

export function seed(ctx: Ctx): SeedInfo {
  const store = new Store()
  ctx.store = store
  const demo = addUser(store, DEMO_LOGIN, {
    name: 'Octo Demo',
    password: DEMO_PASSWORD,
    createdAt: SEED_DATE,
  })
  const reviewer = addUser(store, REVIEWER_LOGIN, {
    name: 'Rae Viewer',
    password: REVIEWER_PASSWORD,
    createdAt: SEED_DATE,
  })
  const org = addUser(store, DEMO_ORG, {
    name: 'Octo Org',
    type: 'Organization',
    email: 'octo-org@example.com',
    createdAt: SEED_DATE,
  })
  org.members.set(demo.id, 'admin')
  const demoToken = addToken(store, demo, 'classic', classicToken(store.rng), DEMO_SCOPES, SEED_DATE, {
    note: 'demo',
  })
  const reviewerToken = addToken(
    store,
    reviewer,
    'classic',
    classicToken(store.rng),
    ['repo', 'gist', 'project', 'user'],
    SEED_DATE,
    { note: 'reviewer' },
  )
  const app: OAuthApp = {
    id: store.nextId('app', 501),
    name: 'Patchbay Sandbox',
    clientId: `Ov23li${store.rng.alnum(14)}`,
    clientSecret: store.rng.hex(40),
    callbackUrl: null,
    ownerId: demo.id,
  }
  store.apps.set(app.id, app)

  const repo = newRepo(ctx, demo, {
    name: DEMO_REPO,
    description: 'A demo repository for the Patchbay code-host sandbox.',
  })
  repo.createdAt = SEED_DATE
  repo.updatedAt = SEED_DATE_2
  repo.pushedAt = SEED_DATE_2
  repo.watchers.set(demo.id, SEED_DATE)
  repo.collaborators.set(reviewer.id, 'write')
  const person = (u: User, date: string) => ({ name: u.name ?? u.login, email: u.email!, date })
  const readme = putBlob(
    store,
    Buffer.from('# hello-world\n\nA demo repository for the Patchbay code-host sandbox.\n'),
  )
  const c1 = createCommit(store, {
    tree: new Map([['README.md', readme]]),
    parents: [],
    message: 'Initial commit',
    author: person(demo, SEED_DATE),
    authorId: demo.id,
  })
  const ci = putBlob(store, Buffer.from(CI_YML))
  const c2 = createCommit(store, {
    tree: new Map([...c1.tree, ['.codehost/workflows/ci.yml', ci]]),
    parents: [c1.sha],
    message: 'Add CI workflow',
    author: person(demo, SEED_DATE_2),
    authorId: demo.id,
  })
  repo.branches.set('main', c2.sha)
  registerWorkflows(ctx, repo, c2)
  for (const w of repo.workflows) {
    w.createdAt = SEED_DATE_2
    w.updatedAt = SEED_DATE_2
  }

  const bug = [...repo.labels.values()].find((l) => l.name === 'bug')!
  const issue: Issue = {
    id: store.nextId('issue', 3_000_001),
    number: repo.nextNumber++,
    repoId: repo.id,
    title: 'Found a bug',
    body: "I'm having a problem with this.",
    state: 'open',
    stateReason: null,
    userId: reviewer.id,
    labelIds: [bug.id],
    assigneeIds: [],
    comments: [],
    createdAt: SEED_DATE_2,
    updatedAt: SEED_DATE_2,
    closedAt: null,
    closedById: null,
    locked: false,
    pull: null,
  }
  repo.issues.set(issue.number, issue)

  seedProjects(store, demo, repo.id, issue.number)
  return { demo, reviewer, demoToken, reviewerToken, app }
}

export const STATUS_OPTIONS = [
  { id: 'f75ad846', name: 'Todo', color: 'GREEN', description: 'This item has not been started' },
  { id: '47fc9ee4', name: 'In Progress', color: 'YELLOW', description: 'This is actively being worked on' },
  { id: '98236657', name: 'Done', color: 'PURPLE', description: 'This has been completed' },
]

/** A Projects v2 board with Title/Status/Notes fields and two items; a classic board too. */
function seedProjects(store: Store, owner: User, repoId: number, issueNumber: number): void {
  const pid = store.nextId('project', 1)
  const field = (
    name: string,
    dataType: ProjectV2['fields'][number]['dataType'],
    options: ProjectV2['fields'][number]['options'] = [],
  ) => {
    const id = store.nextId('project_field', 100_001)
    return {
      id,
      nodeId: nodeId(dataType === 'SINGLE_SELECT' ? 'PVTSSF' : 'PVTF', id),
      name,
      dataType,
      options,
    }
  }
  const title = field('Title', 'TITLE')
  const status = field(
    'Status',
    'SINGLE_SELECT',
    STATUS_OPTIONS.map((o) => ({ ...o })),
  )
  const notes = field('Notes', 'TEXT')
  const item = (contentType: 'Issue' | 'DraftIssue', optionId: string, draftTitle: string | null) => {
    const id = store.nextId('project_item', 80_000_001)
    return {
      id,
      nodeId: nodeId('PVTI', id),
      contentType,
      repoId: contentType === 'Issue' ? repoId : null,
      number: contentType === 'Issue' ? issueNumber : null,
      draftTitle,
      draftBody: draftTitle ? 'Describe every control route.' : null,
      values: new Map([[status.id, { optionId }]]),
      creatorId: owner.id,
      createdAt: SEED_DATE_2,
      updatedAt: SEED_DATE_2,
      archived: false,
    }
  }
  store.projectsV2.push({
    id: pid,
    nodeId: nodeId('PVT', pid),
    number: 1,
    ownerId: owner.id,
    title: 'Demo roadmap',
    shortDescription: 'Work planned for hello-world',
    public: false,
    closed: false,
    createdAt: SEED_DATE,
    updatedAt: SEED_DATE_2,
    fields: [title, status, notes],
    items: [
      item('Issue', STATUS_OPTIONS[0].id, null),
      item('DraftIssue', STATUS_OPTIONS[1].id, 'Write the docs'),
    ],
  })

  const col = (name: string) => ({
    id: store.nextId('column', 30_000_001),
    name,
    createdAt: SEED_DATE,
    updatedAt: SEED_DATE,
    cards: [] as ClassicCard[],
  })
  const todo = col('To do')
  todo.cards.push({
    id: store.nextId('card', 90_000_001),
    note: 'Try the sandbox',
    repoId: null,
    number: null,
    creatorId: owner.id,
    createdAt: SEED_DATE,
    updatedAt: SEED_DATE,
    archived: false,
  })
  store.classicProjects.push({
    id: store.nextId('classic_project', 20_000_001),
    number: 1,
    name: 'Demo board',
    body: 'A classic project board',
    state: 'open',
    repoId,
    ownerId: owner.id,
    creatorId: owner.id,
    createdAt: SEED_DATE,
    updatedAt: SEED_DATE,
    columns: [todo, col('In progress'), col('Done')],
  })
}

type ClassicCard = Store['classicProjects'][number]['columns'][number]['cards'][number]
