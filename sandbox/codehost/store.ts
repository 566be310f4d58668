// The code-host's whole state in memory. Git objects (blobs, commits) are global and
// content-addressed so that a fork simply shares them; everything else hangs off its repository.
import { Rng } from '../common/rng.ts'
import type { DeliveryRecord } from '../common/webhook-sender.ts'

export type Role = 'read' | 'triage' | 'write' | 'maintain' | 'admin'
export const ROLE_ORDER: Role[] = ['read', 'triage', 'write', 'maintain', 'admin']

export interface User {
  id: number
  login: string
  name: string | null
  email: string | null
  password: string
  type: 'User' | 'Organization'
  createdAt: string
  bio: string | null
  company: string | null
  location: string | null
  /** Organizations only: member id → role. */
  members: Map<number, 'admin' | 'member'>
}

export type TokenKind = 'classic' | 'oauth' | 'fine_grained'

export interface Token {
  id: number
  value: string
  kind: TokenKind
  userId: number
  scopes: string[]
  /** Fine-grained only: the one resource owner and the selected repositories. */
  ownerId: number | null
  repoIds: number[] | null
  /** Fine-grained only: permission name → level ("read" | "write"); absent = write. */
  permissions: Record<string, 'read' | 'write'> | null
  expiresAt: number | null
  appId: number | null
  note: string | null
  createdAt: string
}

export interface OAuthApp {
  id: number
  name: string
  clientId: string
  clientSecret: string
  /** null accepts any redirect_uri (a sandbox convenience: connector ports are ephemeral). */
  callbackUrl: string | null
  ownerId: number
}

export interface AuthCode {
  code: string
  appId: number
  userId: number
  scopes: string[]
  redirectUri: string | null
  expiresAt: number
  used: boolean
}

export interface GitPerson {
  name: string
  email: string
  date: string
}

export interface Commit {
  sha: string
  treeSha: string
  /** path → blob sha */
  tree: Map<string, string>
  parents: string[]
  message: string
  author: GitPerson
  committer: GitPerson
  authorId: number | null
  committerId: number | null
}

export interface Label {
  id: number
  name: string
  color: string
  description: string | null
  isDefault: boolean
}

export interface IssueComment {
  id: number
  issueNumber: number
  body: string
  userId: number
  createdAt: string
  updatedAt: string
}

export interface Review {
  id: number
  userId: number
  body: string
  state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED' | 'PENDING' | 'DISMISSED'
  commitId: string
  submittedAt: string | null
}

export interface PullData {
  id: number
  headRepoId: number
  headRef: string
  headSha: string
  baseRef: string
  /** Base sha as of merge/close; open pulls read the live branch. */
  baseSha: string
  draft: boolean
  merged: boolean
  mergedAt: string | null
  mergedById: number | null
  mergeCommitSha: string | null
  /** Set through the control API to simulate a conflict (false) or force mergeability (true). */
  mergeableOverride: boolean | null
  requestedReviewerIds: number[]
  reviews: Review[]
  maintainerCanModify: boolean
}

export interface Issue {
  id: number
  number: number
  repoId: number
  title: string
  body: string | null
  state: 'open' | 'closed'
  stateReason: 'completed' | 'not_planned' | 'reopened' | null
  userId: number
  labelIds: number[]
  assigneeIds: number[]
  comments: IssueComment[]
  createdAt: string
  updatedAt: string
  closedAt: string | null
  closedById: number | null
  locked: boolean
  pull: PullData | null
}

export interface Workflow {
  id: number
  repoId: number
  name: string
  path: string
  state: 'active' | 'disabled_manually'
  createdAt: string
  updatedAt: string
  nextRunNumber: number
}

export type RunStatus = 'queued' | 'in_progress' | 'completed'
export type Conclusion = 'success' | 'failure' | 'cancelled' | 'skipped' | 'timed_out' | 'neutral'

export interface JobStep {
  name: string
  number: number
}

export interface Job {
  id: number
  runId: number
  name: string
  status: RunStatus
  conclusion: Conclusion | null
  createdAt: string
  startedAt: string | null
  completedAt: string | null
  steps: JobStep[]
}

export interface WorkflowRun {
  id: number
  workflowId: number
  repoId: number
  runNumber: number
  event: string
  status: RunStatus
  conclusion: Conclusion | null
  headBranch: string | null
  headSha: string
  actorId: number
  inputs: Record<string, unknown>
  displayTitle: string
  createdAtMs: number
  startedAtMs: number | null
  completedAtMs: number | null
  updatedAt: string
  /** Conclusion chosen ahead of completion through the control API. */
  plannedConclusion: Conclusion | null
  jobs: Job[]
}

export interface Hook {
  id: number
  kind: 'repo' | 'org'
  /** Repository id for repository hooks, organization id for organization hooks. */
  targetId: number
  name: string
  active: boolean
  events: string[]
  url: string
  contentType: 'json' | 'form'
  secret: string | null
  insecureSsl: string
  createdAt: string
  updatedAt: string
}

export interface HookDelivery {
  id: number
  guid: string
  hookId: number
  event: string
  action: string | null
  repoId: number | null
  redelivery: boolean
  deliveredAt: string
  /** The WebhookSender record (its id is the guid): attempts and outcome. */
  record: DeliveryRecord
  payload: unknown
}

export interface Gist {
  id: string
  ownerId: number
  description: string | null
  public: boolean
  files: Map<string, string>
  createdAt: string
  updatedAt: string
  history: { version: string; committedAt: string; userId: number }[]
}

export interface Release {
  id: number
  repoId: number
  tagName: string
  targetCommitish: string
  name: string | null
  body: string | null
  draft: boolean
  prerelease: boolean
  createdAt: string
  publishedAt: string | null
  authorId: number
}

export interface Discussion {
  id: number
  repoId: number
  number: number
  title: string
  body: string
  userId: number
  category: string
  createdAt: string
  updatedAt: string
  comments: { id: number; body: string; userId: number; createdAt: string; parentId: number | null }[]
}

export interface Invitation {
  id: number
  repoId: number
  inviteeId: number
  inviterId: number
  role: Role
  createdAt: string
}

export interface MergeSettings {
  allow_merge_commit: boolean
  allow_squash_merge: boolean
  allow_rebase_merge: boolean
  allow_auto_merge: boolean
  delete_branch_on_merge: boolean
  allow_update_branch: boolean
  use_squash_pr_title_as_default: boolean
  squash_merge_commit_title: 'PR_TITLE' | 'COMMIT_OR_PR_TITLE'
  squash_merge_commit_message: 'PR_BODY' | 'COMMIT_MESSAGES' | 'BLANK'
  merge_commit_title: 'PR_TITLE' | 'MERGE_MESSAGE'
  merge_commit_message: 'PR_BODY' | 'PR_TITLE' | 'BLANK'
}

/** A new repository's merge settings, as upstream makes them. */
export const DEFAULT_MERGE_SETTINGS: MergeSettings = {
  allow_merge_commit: true,
  allow_squash_merge: true,
  allow_rebase_merge: true,
  allow_auto_merge: false,
  delete_branch_on_merge: false,
  allow_update_branch: false,
  use_squash_pr_title_as_default: false,
  squash_merge_commit_title: 'COMMIT_OR_PR_TITLE',
  squash_merge_commit_message: 'COMMIT_MESSAGES',
  merge_commit_title: 'MERGE_MESSAGE',
  merge_commit_message: 'PR_TITLE',
}

export function mergeSettingsOf(r: Repo): MergeSettings {
  return { ...DEFAULT_MERGE_SETTINGS, ...r.mergeSettings }
}

export interface Repo {
  id: number
  ownerId: number
  name: string
  description: string | null
  homepage: string | null
  private: boolean
  parentId: number | null
  defaultBranch: string
  createdAt: string
  updatedAt: string
  pushedAt: string | null
  hasIssues: boolean
  hasProjects: boolean
  hasWiki: boolean
  hasDiscussions: boolean
  archived: boolean
  topics: string[]
  /** How pull requests may be merged (absent in a state file from before: the defaults). */
  mergeSettings?: MergeSettings
  /** Names the repository had before a rename: they answer 301 to /repositories/{id}, as upstream. */
  formerNames?: string[]
  branches: Map<string, string>
  tags: Map<string, string>
  collaborators: Map<number, Role>
  stars: Map<number, string>
  watchers: Map<number, string>
  labels: Map<number, Label>
  nextNumber: number
  issues: Map<number, Issue>
  discussions: Map<number, Discussion>
  workflows: Workflow[]
  runs: WorkflowRun[]
  hooks: Hook[]
  releases: Release[]
}

export interface ProjectField {
  id: number
  nodeId: string
  name: string
  dataType: 'TITLE' | 'TEXT' | 'NUMBER' | 'DATE' | 'SINGLE_SELECT' | 'ASSIGNEES' | 'LABELS'
  options: { id: string; name: string; color: string; description: string }[]
}

export interface ProjectItemValue {
  optionId?: string
  text?: string
  number?: number
  date?: string
}

export interface ProjectItem {
  id: number
  nodeId: string
  contentType: 'Issue' | 'PullRequest' | 'DraftIssue'
  /** Issue or pull request: repository id and number. */
  repoId: number | null
  number: number | null
  draftTitle: string | null
  draftBody: string | null
  values: Map<number, ProjectItemValue>
  creatorId: number
  createdAt: string
  updatedAt: string
  archived: boolean
}

export interface ProjectV2 {
  id: number
  nodeId: string
  number: number
  ownerId: number
  title: string
  shortDescription: string | null
  public: boolean
  closed: boolean
  createdAt: string
  updatedAt: string
  fields: ProjectField[]
  items: ProjectItem[]
}

export interface ProjectCard {
  id: number
  note: string | null
  /** Linked issue/pull request (repository id and number). */
  repoId: number | null
  number: number | null
  creatorId: number
  createdAt: string
  updatedAt: string
  archived: boolean
}

export interface ClassicProject {
  id: number
  number: number
  name: string
  body: string | null
  state: 'open' | 'closed'
  /** A repository project (repoId) or an account project (ownerId). */
  repoId: number | null
  ownerId: number
  creatorId: number
  createdAt: string
  updatedAt: string
  columns: { id: number; name: string; createdAt: string; updatedAt: string; cards: ProjectCard[] }[]
}

/** The seed of every generator: credentials and ids are the same on every start. */
export const RNG_SEED = 0xc0de4057

export class Store {
  rng = new Rng(RNG_SEED)
  users = new Map<number, User>()
  tokens = new Map<string, Token>()
  apps = new Map<number, OAuthApp>()
  codes = new Map<string, AuthCode>()
  /** Browser sessions of the OAuth login page: cookie value → user id. */
  sessions = new Map<string, number>()
  repos = new Map<number, Repo>()
  commits = new Map<string, Commit>()
  blobs = new Map<string, Buffer>()
  gists = new Map<string, Gist>()
  invitations = new Map<number, Invitation>()
  hooksById = new Map<number, Hook>()
  deliveries: HookDelivery[] = []
  projectsV2: ProjectV2[] = []
  classicProjects: ClassicProject[] = []
  #counters = new Map<string, number>()

  /** The data, for a state file (sandbox/common/persistence.ts): every field, the generators by position. */
  snapshot() {
    const { rng, ...data } = this
    return { ...data, rng: rng.state, counters: this.#counters }
  }

  restore(state: ReturnType<Store['snapshot']>): void {
    const { rng, counters, ...data } = state
    Object.assign(this, data)
    this.rng = new Rng(rng)
    this.#counters = counters
  }

  /** Sequential ids per kind, from a kind-specific base so that ids of different kinds rarely meet. */
  nextId(kind: string, base = 1): number {
    const n = (this.#counters.get(kind) ?? base - 1) + 1
    this.#counters.set(kind, n)
    return n
  }

  userByLogin(login: string): User | undefined {
    const l = login.toLowerCase()
    for (const u of this.users.values()) if (u.login.toLowerCase() === l) return u
    return undefined
  }

  user(id: number): User {
    const u = this.users.get(id)
    if (!u) throw new Error(`no user ${id}`)
    return u
  }

  repoByName(owner: string, name: string): Repo | undefined {
    const o = this.userByLogin(owner)
    if (!o) return undefined
    const n = name.toLowerCase()
    for (const r of this.repos.values()) if (r.ownerId === o.id && r.name.toLowerCase() === n) return r
    return undefined
  }

  /** The repository that had this name before a rename (and has another now). */
  renamedRepo(owner: string, name: string): Repo | undefined {
    const o = this.userByLogin(owner)
    if (!o) return undefined
    const n = name.toLowerCase()
    for (const r of this.repos.values())
      if (r.ownerId === o.id && r.formerNames?.some((f) => f.toLowerCase() === n)) return r
    return undefined
  }

  repo(id: number): Repo {
    const r = this.repos.get(id)
    if (!r) throw new Error(`no repo ${id}`)
    return r
  }

  hooksFor(kind: Hook['kind'], targetId: number): Hook[] {
    return [...this.hooksById.values()].filter((h) => h.kind === kind && h.targetId === targetId)
  }

  findIssueById(id: number): { repo: Repo; issue: Issue } | undefined {
    for (const repo of this.repos.values())
      for (const issue of repo.issues.values()) if (issue.id === id) return { repo, issue }
    return undefined
  }

  findPullById(id: number): { repo: Repo; issue: Issue } | undefined {
    for (const repo of this.repos.values())
      for (const issue of repo.issues.values()) if (issue.pull?.id === id) return { repo, issue }
    return undefined
  }
}
