// Field schemas shared by the code-host steps (described for an LLM reading the catalog), the slim
// shapes every step returns, and pagination over the upstream's Link header.
import { z } from 'zod'
import type { ScopedField, StepContext } from '../../kit/define.ts'
import type { QueryValue } from '../../kit/http.ts'
import { picked } from '../../kit/pickers.ts'
import { branches, issues, owners, pulls, repos, workflows } from './pickers.ts'
import type {
  ChCommit,
  ChGitPerson,
  ChIssue,
  ChPullRequest,
  ChRelease,
  ChRepository,
  ChSnippet,
  ChUser,
  ChWorkflowRun,
} from './upstream.ts'

export const owner = picked(
  z
    .string()
    .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/, 'must be an account or organization login, e.g. octo-demo')
    .describe(
      'The account or organization that owns the repository: the part before the slash in owner/repo.',
    ),
  owners,
)

export const repo = picked(
  z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,100}$/, 'must be a repository name such as hello-world (no owner, no slash)')
    .refine((s) => s !== '.' && s !== '..', 'must be a repository name')
    .describe('The repository name: the part after the slash in owner/repo, e.g. hello-world.'),
  repos,
)

/** `owner` and `repo`, the two inputs every repository step starts with. */
export const repository = { owner, repo }

/** The scope declaration of a step on one repository: `owner/repo`. */
export const onRepository: ScopedField[] = [
  { kind: 'repository', value: (i: { owner?: string; repo?: string }) => repoName(i) },
]

export function repoName(i: { owner?: string; repo?: string }): string | undefined {
  return i.owner && i.repo ? `${i.owner}/${i.repo}` : undefined
}

/**
 * A field that names a branch of the repository (some also take a tag or a commit sha): its
 * choices are the repository's branches, anything else can still be typed.
 */
export const branchRef = (description: string) =>
  picked(z.string().min(1).max(255).describe(description), branches)

/** A workflow: its file name or numeric id; its choices are the repository's workflows. */
export const workflowRef = picked(
  z
    .union([
      z.number().int().positive(),
      z
        .string()
        .regex(/^[A-Za-z0-9._-]+\.ya?ml$/, 'must be a workflow file name such as ci.yml, or its numeric id'),
    ])
    .describe('The workflow: its file name (ci.yml, from .codehost/workflows/) or its numeric id.'),
  workflows,
)

export const issueNumber = (what = 'issue') =>
  picked(issueNumberSchema(what), what === 'issue' ? issues : pulls)

const issueNumberSchema = (what: string) =>
  z
    .number()
    .int()
    .positive()
    .describe(
      `The ${what} number (the #n shown on the ${what}), from Search Issues and Pull Requests, Create ${what === 'issue' ? 'Issue' : 'Pull Request'} or a trigger event.`,
    )

export const login = z
  .string()
  .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/, 'must be an account login')
  .describe('An account login, e.g. octo-demo.')

export const paging = {
  perPage: z.number().int().min(1).max(100).default(30).describe('Items per page, 1–100 (default 30).'),
  page: z
    .number()
    .int()
    .min(1)
    .default(1)
    .describe('Page number, from 1. Ask for the next page while hasNextPage is true.'),
}

export const pageInfo = {
  page: z.number().describe('The page returned.'),
  hasNextPage: z.boolean().describe('True when another page follows: ask again with page + 1.'),
}

/** A GET whose answer is one page of a list: the data and whether another page follows (Link header). */
export async function getPage<T>(
  ctx: StepContext,
  path: string,
  query: Record<string, QueryValue>,
): Promise<{ data: T; hasNextPage: boolean }> {
  const res = await ctx.http.request<T>({ method: 'GET', path, query })
  return { data: res.data, hasNextPage: /rel="next"/.test(res.headers.link ?? '') }
}

type MaybeAccount = { login?: unknown } | null | undefined
const loginOf = (u: MaybeAccount): string | null => (u && typeof u.login === 'string' ? u.login : null)
const logins = (us: readonly MaybeAccount[] | null | undefined): string[] =>
  Array.isArray(us) ? us.map(loginOf).filter((x): x is string => !!x) : []

// ---- slim shapes ----

export const repositoryOut = z.object({
  fullName: z.string().describe('owner/repo.'),
  owner: z.string(),
  name: z.string(),
  id: z.number(),
  private: z.boolean(),
  description: z.string().nullable(),
  defaultBranch: z.string().nullable(),
  fork: z.boolean(),
  archived: z.boolean(),
  stars: z.number(),
  forks: z.number(),
  openIssues: z.number(),
  topics: z.array(z.string()),
  htmlUrl: z.string(),
  createdAt: z.string().nullable(),
  pushedAt: z.string().nullable(),
})

export function slimRepository(r: ChRepository): z.input<typeof repositoryOut> {
  return {
    fullName: r.full_name,
    owner: loginOf(r.owner) ?? String(r.full_name).split('/')[0],
    name: r.name,
    id: r.id,
    private: Boolean(r.private),
    description: r.description ?? null,
    defaultBranch: r.default_branch ?? null,
    fork: Boolean(r.fork),
    archived: Boolean(r.archived),
    stars: r.stargazers_count ?? 0,
    forks: r.forks_count ?? 0,
    openIssues: r.open_issues_count ?? 0,
    topics: r.topics ?? [],
    htmlUrl: r.html_url,
    createdAt: r.created_at ?? null,
    pushedAt: r.pushed_at ?? null,
  }
}

export const issueOut = z.object({
  number: z.number(),
  title: z.string(),
  body: z.string().nullable(),
  state: z.string().describe('open or closed.'),
  stateReason: z.string().nullable().describe('completed, not_planned or reopened, when given.'),
  labels: z.array(z.string()),
  assignees: z.array(z.string()).describe('Logins of the assignees.'),
  author: z.string().nullable(),
  comments: z.number(),
  isPullRequest: z.boolean(),
  repository: z.string().nullable().describe('owner/repo the issue belongs to.'),
  htmlUrl: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  closedAt: z.string().nullable(),
})

export function slimIssue(i: ChIssue): z.input<typeof issueOut> {
  const repoUrl: string | undefined = i.repository_url
  return {
    number: i.number,
    title: i.title,
    body: i.body ?? null,
    state: i.state,
    stateReason: i.state_reason ?? null,
    labels: (i.labels ?? []).map((l) => (typeof l === 'string' ? l : l.name)),
    assignees: logins(i.assignees),
    author: loginOf(i.user),
    comments: i.comments ?? 0,
    isPullRequest: Boolean(i.pull_request),
    repository: repoUrl ? (repoUrl.split('/repos/')[1] ?? null) : null,
    htmlUrl: i.html_url,
    createdAt: i.created_at,
    updatedAt: i.updated_at,
    closedAt: i.closed_at ?? null,
  }
}

export const pullRequestOut = z.object({
  number: z.number(),
  title: z.string(),
  body: z.string().nullable(),
  state: z.string().describe('open or closed.'),
  draft: z.boolean(),
  merged: z.boolean(),
  mergeable: z
    .boolean()
    .nullable()
    .describe('Whether it can merge cleanly; null while unknown or once closed.'),
  head: z.object({ ref: z.string(), sha: z.string() }).describe('The branch with the changes.'),
  base: z.object({ ref: z.string(), sha: z.string() }).describe('The branch it merges into.'),
  author: z.string().nullable(),
  requestedReviewers: z.array(z.string()),
  labels: z.array(z.string()),
  htmlUrl: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
})

export function slimPullRequest(p: ChPullRequest): z.input<typeof pullRequestOut> {
  return {
    number: p.number,
    title: p.title,
    body: p.body ?? null,
    state: p.state,
    draft: Boolean(p.draft),
    merged: Boolean(p.merged),
    mergeable: p.mergeable ?? null,
    head: { ref: p.head?.ref ?? '', sha: p.head?.sha ?? '' },
    base: { ref: p.base?.ref ?? '', sha: p.base?.sha ?? '' },
    author: loginOf(p.user),
    requestedReviewers: logins(p.requested_reviewers),
    labels: (p.labels ?? []).map((l) => l.name),
    htmlUrl: p.html_url,
    createdAt: p.created_at,
    updatedAt: p.updated_at,
  }
}

const person = z.object({
  name: z.string().nullable(),
  email: z.string().nullable(),
  date: z.string().nullable(),
  login: z.string().nullable().describe('The code-host account, when the email belongs to one.'),
})

export const commitOut = z.object({
  sha: z.string(),
  message: z.string(),
  author: person,
  committer: person,
  parents: z.array(z.string()).describe('Parent commit shas.'),
  htmlUrl: z.string().nullable(),
})

export function slimCommit(c: ChCommit): z.input<typeof commitOut> {
  const p = (git: ChGitPerson | null | undefined, account: MaybeAccount) => ({
    name: git?.name ?? null,
    email: git?.email ?? null,
    date: git?.date ?? null,
    login: loginOf(account),
  })
  return {
    sha: c.sha,
    message: c.commit?.message ?? '',
    author: p(c.commit?.author, c.author),
    committer: p(c.commit?.committer, c.committer),
    parents: (c.parents ?? []).map((x) => x.sha),
    htmlUrl: c.html_url ?? null,
  }
}

export const workflowRunOut = z.object({
  id: z.number().describe('The run id, for Get Workflow Run.'),
  name: z.string().nullable().describe('The workflow name.'),
  workflowId: z.number(),
  runNumber: z.number(),
  event: z.string().describe('What started it: workflow_dispatch, push, pull_request …'),
  status: z.string().describe('queued, in_progress or completed.'),
  conclusion: z
    .string()
    .nullable()
    .describe('When completed: success, failure, cancelled, skipped, timed_out or neutral; null before.'),
  headBranch: z.string().nullable(),
  headSha: z.string(),
  actor: z.string().nullable(),
  htmlUrl: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
})

export function slimWorkflowRun(r: ChWorkflowRun): z.input<typeof workflowRunOut> {
  return {
    id: r.id,
    name: r.name ?? null,
    workflowId: r.workflow_id,
    runNumber: r.run_number,
    event: r.event,
    status: r.status,
    conclusion: r.conclusion ?? null,
    headBranch: r.head_branch ?? null,
    headSha: r.head_sha,
    actor: loginOf(r.actor ?? r.triggering_actor),
    htmlUrl: r.html_url ?? null,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  }
}

export const snippetOut = z.object({
  id: z.string().describe('The snippet id, for Update Snippet.'),
  description: z.string().nullable(),
  public: z.boolean(),
  owner: z.string().nullable(),
  files: z.array(
    z.object({
      filename: z.string(),
      size: z.number(),
      language: z.string().nullable(),
      content: z.string().optional().describe('The text, when the answer carried it.'),
    }),
  ),
  htmlUrl: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
})

export function slimSnippet(g: ChSnippet, withContent = true): z.input<typeof snippetOut> {
  return {
    id: String(g.id),
    description: g.description ?? null,
    public: Boolean(g.public),
    owner: loginOf(g.owner),
    files: Object.values(g.files ?? {}).map((f) => ({
      filename: f.filename,
      size: f.size ?? 0,
      language: f.language ?? null,
      ...(withContent && typeof f.content === 'string' ? { content: f.content } : {}),
    })),
    htmlUrl: g.html_url ?? null,
    createdAt: g.created_at,
    updatedAt: g.updated_at,
  }
}

export const releaseOut = z.object({
  id: z.number(),
  tagName: z.string(),
  name: z.string().nullable(),
  body: z.string().nullable(),
  draft: z.boolean(),
  prerelease: z.boolean(),
  author: z.string().nullable(),
  publishedAt: z.string().nullable(),
  htmlUrl: z.string().nullable(),
})

export function slimRelease(r: ChRelease): z.input<typeof releaseOut> {
  return {
    id: r.id,
    tagName: r.tag_name,
    name: r.name ?? null,
    body: r.body ?? null,
    draft: Boolean(r.draft),
    prerelease: Boolean(r.prerelease),
    author: loginOf(r.author),
    publishedAt: r.published_at ?? null,
    htmlUrl: r.html_url ?? null,
  }
}

export const userOut = z.object({ login: z.string(), id: z.number() })
export const slimUser = (u: ChUser): z.input<typeof userOut> => ({ login: u.login, id: u.id })

/** `/repos/{owner}/{repo}` followed by the given segments, each encoded. */
export function repoPath(i: { owner: string; repo: string }, ...segments: Array<string | number>): string {
  return ['', 'repos', i.owner, i.repo, ...segments].map((s) => encodeURIComponent(String(s))).join('/')
}

/** A path inside a repository (a/b/c.md), each segment encoded, slashes kept. */
export const filePath = (p: string) => p.split('/').filter(Boolean).map(encodeURIComponent).join('/')
