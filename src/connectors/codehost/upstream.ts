// The code-host's JSON as the steps read it (upstreams.md, "Objects", the public REST v3 shapes):
// only the fields read, each as the upstream may send it. What a slim shape (schemas.ts) fills in
// with a default is optional here.

/** An account as answers embed it (user, owner, author, assignees …). */
export interface ChUser {
  login: string
  id: number
}

export interface ChLabel {
  name: string
}

export interface ChRepository {
  id: number
  full_name: string
  name: string
  owner?: ChUser | null
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

export interface ChIssue {
  number: number
  title: string
  body?: string | null
  state: string
  state_reason?: string | null
  /** Objects in answers; names in some search results. */
  labels?: Array<ChLabel | string>
  assignees?: ChUser[] | null
  user?: ChUser | null
  comments?: number
  /** Present (an object) when the issue is a pull request. */
  pull_request?: unknown
  /** `{api}/repos/{owner}/{repo}`. */
  repository_url?: string
  html_url: string
  created_at: string
  updated_at: string
  closed_at?: string | null
}

export interface ChIssueComment {
  id: number
  body: string
  user?: ChUser | null
  html_url: string
  created_at: string
}

export interface ChPullRequest {
  number: number
  title: string
  body?: string | null
  state: string
  draft?: boolean
  merged?: boolean
  mergeable?: boolean | null
  head?: { ref: string; sha: string }
  base?: { ref: string; sha: string }
  user?: ChUser | null
  requested_reviewers?: ChUser[]
  labels?: ChLabel[]
  html_url: string
  created_at: string
  updated_at: string
}

export interface ChRequestedReviewers {
  users?: ChUser[]
  teams?: Array<{ slug?: string; name: string }>
}

export interface ChReview {
  id: number
  user?: ChUser | null
  state: string
  body?: string | null
  submitted_at?: string | null
}

/** A commit's author or committer as git records them. */
export interface ChGitPerson {
  name?: string | null
  email?: string | null
  date?: string | null
}

export interface ChCommit {
  sha: string
  commit?: { message?: string; author?: ChGitPerson | null; committer?: ChGitPerson | null }
  /** The code-host accounts of the author and committer, when their emails belong to one. */
  author?: ChUser | null
  committer?: ChUser | null
  parents?: Array<{ sha: string }>
  html_url?: string | null
  stats?: { additions: number; deletions: number; total: number }
  files?: Array<{ filename: string; status: string; additions?: number; deletions?: number; patch?: string }>
}

export interface ChWorkflowRun {
  id: number
  name?: string | null
  workflow_id: number
  run_number: number
  event: string
  status: string
  conclusion?: string | null
  head_branch?: string | null
  head_sha: string
  actor?: ChUser | null
  triggering_actor?: ChUser | null
  html_url?: string | null
  created_at: string
  updated_at: string
}

export interface ChWorkflowRuns {
  total_count?: number
  workflow_runs?: ChWorkflowRun[]
}

/** A gist. */
export interface ChSnippet {
  id: string
  description?: string | null
  public?: boolean
  owner?: ChUser | null
  files?: Record<string, { filename: string; size?: number; language?: string | null; content?: string }>
  html_url?: string | null
  created_at: string
  updated_at: string
}

export interface ChRelease {
  id: number
  tag_name: string
  name?: string | null
  body?: string | null
  draft?: boolean
  prerelease?: boolean
  author?: ChUser | null
  published_at?: string | null
  html_url?: string | null
}

/** A file read through `…/contents/{path}`. */
export interface ChContent {
  type?: string
  encoding?: string
  content?: string
  sha?: string
  size?: number
  name: string
  path: string
}

/** One entry of a folder read through `…/contents/{path}`. */
export interface ChContentEntry {
  type: string
  sha: string
  size?: number
  name: string
  path: string
}

/** The answer to a contents `PUT`: the file written and its commit. */
export interface ChFileWritten {
  content: { path?: string; sha: string }
  commit: { sha: string; message?: string; html_url?: string | null }
}

export interface ChSearchIssues {
  total_count?: number
  incomplete_results?: boolean
  items?: ChIssue[]
}

/**
 * A webhook delivery's payload (upstreams.md, "Webhooks"): the fields read where an event is
 * normalized (webhooks.ts). The rest is passed through, slimmed.
 */
export interface ChDelivery {
  action?: unknown
  ref?: unknown
  deleted?: boolean
  repository?: { full_name?: string }
  organization?: { login?: string }
  sender?: { login?: string }
  pusher?: unknown
  projects_v2_item?: { content_type?: string }
  head_commit?: { url?: unknown } | null
  commits?: Array<{ id?: string; timestamp?: string; url?: unknown } | null>
  [field: string]: unknown
}

/**
 * An event's data as the triggers match on it: a delivery slimmed (webhooks.ts normalizeDelivery),
 * or a commit of a push; the fields the triggers read.
 */
export interface ChEventData {
  ref?: unknown
  ref_type?: string
  branch?: string | null
  deleted?: boolean
  changes?: {
    field_value?: { field_name?: unknown; project_number?: number; to?: { name?: string } }
    column_id?: unknown
    [field: string]: unknown
  }
  issue?: { title?: string; body?: string | null; pull_request?: unknown }
  pull_request?: { title?: string; body?: string | null; draft?: boolean; merged?: boolean }
  label?: { name?: string }
  requested_reviewer?: { login?: string }
  review?: { state?: string; body?: string | null }
  comment?: { body?: string }
  workflow_run?: { name?: string | null; path?: string; conclusion?: string | null }
  workflow?: { path?: string }
  workflow_job?: { name?: string; conclusion?: string | null }
  sender?: { login?: string }
  project_card?: { column_id?: number }
  release?: { prerelease?: boolean }
  discussion?: { category?: { name?: string } }
  [field: string]: unknown
}
