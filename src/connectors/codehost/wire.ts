// What the code host answers and sends (REST and webhook payloads), as far as Patchbay reads it:
// the fields the slim outputs, the triggers and the error mapping take. Everything else passes
// through unread. (The sandbox's answers and payloads are checked against the code host's
// published OpenAPI description and webhook schemas in test/helpers/codehost-contract.ts.)

/** An account as the code host names it (owner, author, assignee …). */
export interface WireAccount {
  login?: string
  id?: number
}

export interface WireRepository {
  full_name: string
  name: string
  id: number
  owner?: WireAccount | null
  private?: boolean
  description?: string | null
  default_branch?: string | null
  fork?: boolean
  archived?: boolean
  stargazers_count?: number
  forks_count?: number
  open_issues_count?: number
  topics?: string[]
  html_url: string
  created_at?: string | null
  pushed_at?: string | null
}

export interface WireLabel {
  name: string
}

export interface WireIssue {
  number: number
  title: string
  body?: string | null
  state: string
  state_reason?: string | null
  labels?: Array<string | WireLabel>
  assignees?: WireUser[] | null
  user?: WireAccount | null
  comments?: number
  pull_request?: unknown
  repository_url?: string
  html_url: string
  created_at: string
  updated_at: string
  closed_at?: string | null
}

export interface WirePullRequest {
  number: number
  title: string
  body?: string | null
  state: string
  draft?: boolean
  merged?: boolean
  mergeable?: boolean | null
  head?: { ref?: string; sha?: string }
  base?: { ref?: string; sha?: string }
  user?: WireAccount | null
  requested_reviewers?: WireAccount[] | null
  labels?: WireLabel[]
  html_url: string
  created_at: string
  updated_at: string
}

/** A commit's git author or committer. */
export interface WireGitPerson {
  name?: string | null
  email?: string | null
  date?: string | null
}

export interface WireCommitFile {
  filename: string
  status: string
  additions?: number
  deletions?: number
  changes?: number
  patch?: string
}

export interface WireCommit {
  sha: string
  commit?: { message?: string; author?: WireGitPerson | null; committer?: WireGitPerson | null }
  author?: WireAccount | null
  committer?: WireAccount | null
  parents?: Array<{ sha: string }>
  html_url?: string | null
  files?: WireCommitFile[]
  stats?: { additions: number; deletions: number; total: number }
}

export interface WireWorkflowRun {
  id: number
  name?: string | null
  workflow_id: number
  run_number: number
  event: string
  status: string
  conclusion?: string | null
  head_branch?: string | null
  head_sha: string
  actor?: WireAccount | null
  triggering_actor?: WireAccount | null
  html_url?: string | null
  created_at: string
  updated_at: string
}

export interface WireSnippetFile {
  filename: string
  size?: number
  language?: string | null
  content?: string
}

export interface WireSnippet {
  id: string | number
  description?: string | null
  public?: boolean
  owner?: WireAccount | null
  files?: Record<string, WireSnippetFile>
  html_url?: string | null
  created_at: string
  updated_at: string
}

export interface WireRelease {
  id: number
  tag_name: string
  name?: string | null
  body?: string | null
  draft?: boolean
  prerelease?: boolean
  author?: WireAccount | null
  published_at?: string | null
  html_url?: string | null
}

/** An issue comment. */
export interface WireComment {
  id: number
  body: string
  user?: WireAccount | null
  html_url: string
  created_at: string
}

/** GET /search/issues. */
export interface WireIssueSearch {
  total_count?: number
  incomplete_results?: boolean
  items?: WireIssue[]
}

/** A repository path's content: a file (or symlink, submodule), or a folder's entries. */
export interface WireContentEntry {
  type: string
  name: string
  path: string
  sha: string
  size?: number | null
  content?: string
  encoding?: string
}
export type WireContent = WireContentEntry | WireContentEntry[]

/** The answer to a file write. */
export interface WireFileWrite {
  content: { path?: string; sha: string }
  commit: { sha: string; message?: string; html_url?: string | null }
}

/** GET …/pulls/{n}/requested_reviewers. */
export interface WireRequestedReviewers {
  users?: WireUser[]
  teams?: Array<{ slug?: string; name: string }>
}

/** A pull request review. */
export interface WireReview {
  id: number
  user?: WireAccount | null
  state: string
  body?: string | null
  submitted_at?: string | null
}

export interface WireUser {
  login: string
  id: number
}
