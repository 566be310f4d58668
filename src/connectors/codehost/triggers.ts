// The code-host triggers, each on a mechanism the real service has. Repository triggers watch one
// repository through its webhook (owner/repo), New Mention included: the code host has no
// mention event, so mentions are read from the repository's issue, comment and review deliveries.
// New Repository and Project Item Status Changed listen through an organization's webhook for an
// organization; a personal account has no webhook of its own, so for it they are polled. New
// Snippet is always polled (there is no snippet webhook). See webhooks.ts for how deliveries
// become events and polls.ts for the polls.
import { z } from 'zod'
import { defineTrigger, type NormalizedEvent, type TriggerMechanism } from '../../kit/define.ts'
import {
  CreatedCursor,
  pollOwnProjectItems,
  pollOwnRepositories,
  pollOwnSnippets,
  StatusCursor,
} from './polls.ts'
import { branchRef, login, owner, repo, repoName } from './schemas.ts'
import type { ChEventData } from './upstream.ts'
import { orgModel } from './webhooks.ts'

const repoConfig = z.object({
  owner: owner.describe('Owner of the repository to watch (the part before the slash).'),
  repo: repo.describe('Name of the repository to watch.'),
})
type RepoConfig = z.output<typeof repoConfig>

/** The repository triggers' shared parts: config, scope and the webhook they listen through. */
const onRepository = {
  instant: true as const,
  scoped: [{ kind: 'repository' as const, value: (c: RepoConfig) => repoName(c) }],
  watch: (c: RepoConfig) => ({ model: `${c.owner}/${c.repo}`.toLowerCase() }),
}

/** A repository webhook carrying these events. */
const repositoryHook = (events: string, reason?: string): TriggerMechanism[] => [
  { kind: 'webhook', upstream: `repository webhook (${events})`, ...(reason ? { reason } : {}) },
]

const organization = z
  .string()
  .regex(/^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/, 'an organization login, e.g. octo-org')
  .optional()
  .describe(
    "An organization to watch through its webhook (instant; needs an owner of the organization and the admin:org_hook scope). Leave it out to watch the connection's own account (polled).",
  )

/** Triggers an organization's webhook carries instantly, and a personal account's poll otherwise. */
function orgOrPoll(
  event: string,
  poll: string,
): Pick<Parameters<typeof defineTrigger>[0], 'instant' | 'mechanisms'> & {
  mechanismFor: (c: { organization?: string }) => 'webhook' | 'poll'
  watch: (c: { organization?: string }) => { model: string }
} {
  return {
    instant: false,
    mechanisms: [
      {
        kind: 'webhook',
        upstream: `organization webhook (${event})`,
        when: 'organization is given',
        reason: `The code host sends ${event} events only to organization webhooks.`,
      },
      {
        kind: 'poll',
        upstream: poll,
        when: 'no organization (the connection’s own account)',
        reason: 'A personal account has no webhook of its own on the code host.',
      },
    ],
    mechanismFor: (c) => (c.organization ? 'webhook' : 'poll'),
    watch: (c) => ({ model: orgModel(c.organization ?? '') }),
  }
}

/** A code-host event's data: its delivery, slimmed (webhooks.ts normalizeDelivery). */
const d = (e: NormalizedEvent) => e.data as ChEventData
const is = (e: NormalizedEvent, ...types: string[]) => types.includes(e.type)
const same = (a: unknown, b: string | undefined) =>
  b === undefined || String(a ?? '').toLowerCase() === b.toLowerCase()

const sampleRepo = {
  id: 1296269,
  full_name: 'octo-demo/hello-world',
  name: 'hello-world',
  owner: 'octo-demo',
  private: false,
  default_branch: 'main',
  html_url: 'https://codehost.example/octo-demo/hello-world',
}
const sampleSender = { login: 'reviewer', id: 1002, type: 'User' }
const sampleIssue = {
  number: 7,
  title: 'Found a bug',
  body: 'Steps to reproduce …',
  state: 'open',
  labels: [{ name: 'bug', color: 'd73a4a' }],
  assignees: [],
  user: sampleSender,
  html_url: 'https://codehost.example/octo-demo/hello-world/issues/7',
}
const samplePull = {
  number: 8,
  title: 'Fix the bug',
  state: 'open',
  draft: false,
  merged: false,
  head: { ref: 'fix-bug', sha: '7638417db6d59f3c431d3e1f261cc637155684cd' },
  base: { ref: 'main', sha: '553c2077f0edc3d5dc5d17262f6aa498e69d6f8e' },
  user: sampleSender,
  html_url: 'https://codehost.example/octo-demo/hello-world/pull/8',
}
function sample(type: string, data: Record<string, unknown>, repository = true): NormalizedEvent {
  const [event, action] = type.split('.')
  return {
    id: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
    type,
    occurredAt: '2026-11-21T09:30:00.000Z',
    refs: { repository: repository ? sampleRepo.full_name : undefined, account: sampleSender.login },
    data: {
      event,
      ...(action ? { action } : {}),
      ...data,
      ...(repository ? { repository: sampleRepo } : {}),
      sender: sampleSender,
    },
  }
}

// ---- Repository ----

export const newRepository = defineTrigger({
  key: 'new_repository',
  name: 'New Repository',
  description:
    "Fires when a repository is created in an organization (instantly, through the organization's webhook) or in the connection's own account (polled: the code host has no webhook for a personal account).",
  ...orgOrPoll('repository', 'poll of GET /user/repos sorted by creation'),
  config: z.object({ organization }),
  // A new repository cannot be in a scope by name yet: it is when the scope holds its owner.
  eventScope: 'group',
  match: (e) => is(e, 'repository.created'),
  cursor: CreatedCursor,
  poll: (ctx) => pollOwnRepositories(ctx),
  pollIntervalMs: 60_000,
  sample: sample('repository.created', {}),
})

export const newFork = defineTrigger({
  key: 'new_fork',
  name: 'New Fork',
  description: 'Fires when the repository is forked; forkee is the new fork.',
  ...onRepository,
  mechanisms: repositoryHook('fork'),
  config: repoConfig,
  match: (e) => is(e, 'fork'),
  sample: sample('fork', {
    forkee: { ...sampleRepo, full_name: 'reviewer/hello-world', owner: 'reviewer', fork: true },
  }),
})

export const newStar = defineTrigger({
  key: 'new_star',
  name: 'New Star',
  description: 'Fires when someone stars the repository (not when a star is removed).',
  ...onRepository,
  mechanisms: repositoryHook('star'),
  config: repoConfig,
  match: (e) => is(e, 'star.created'),
  sample: sample('star.created', { starred_at: '2026-11-21T09:30:00Z' }),
})

export const newWatcher = defineTrigger({
  key: 'new_watcher',
  name: 'New Watcher',
  description:
    'Fires when someone starts watching the repository (the code-host also reports each new star as a watch).',
  ...onRepository,
  mechanisms: repositoryHook('watch'),
  config: repoConfig,
  match: (e) => is(e, 'watch.started'),
  sample: sample('watch.started', {}),
})

export const newTag = defineTrigger({
  key: 'new_tag',
  name: 'New Tag',
  description:
    'Fires when a tag is created in the repository (ref is the tag name). Branches do not fire it.',
  ...onRepository,
  mechanisms: repositoryHook('create'),
  config: repoConfig,
  match: (e) => is(e, 'create') && d(e).ref_type === 'tag',
  sample: sample('create', { ref: 'v1.0.0', ref_type: 'tag', master_branch: 'main' }),
})

// ---- Issues and pull requests ----

export const newIssue = defineTrigger({
  key: 'new_issue',
  name: 'New Issue',
  description: 'Fires when an issue is opened in the repository (pull requests do not fire it).',
  ...onRepository,
  mechanisms: repositoryHook('issues'),
  config: repoConfig,
  match: (e) => is(e, 'issues.opened'),
  sample: sample('issues.opened', { issue: sampleIssue }),
})

const ISSUE_CHANGES = ['title', 'body', 'labels', 'assignees', 'state'] as const
type IssueChange = (typeof ISSUE_CHANGES)[number]

function issueChanges(e: NormalizedEvent): IssueChange[] {
  switch (e.type) {
    case 'issues.edited': {
      const changed = Object.keys(d(e).changes ?? {})
      return changed.filter((c): c is IssueChange => c === 'title' || c === 'body')
    }
    case 'issues.labeled':
    case 'issues.unlabeled':
      return ['labels']
    case 'issues.assigned':
    case 'issues.unassigned':
      return ['assignees']
    case 'issues.closed':
    case 'issues.reopened':
      return ['state']
    default:
      return []
  }
}

export const updatedIssue = defineTrigger({
  key: 'updated_issue',
  name: 'Updated Issue',
  description:
    'Fires when an issue in the repository changes: its title, body, labels, assignees or status (closed or reopened). Opening an issue and comments do not fire it. Narrow it with changes.',
  ...onRepository,
  mechanisms: repositoryHook('issues'),
  config: repoConfig.extend({
    changes: z
      .array(z.enum(ISSUE_CHANGES))
      .min(1)
      .optional()
      .describe(
        'Fire only for these kinds of change (default: all of title, body, labels, assignees, state).',
      ),
  }),
  match: (e, c) => {
    const kinds = issueChanges(e)
    return kinds.length > 0 && (!c.changes || kinds.some((k) => c.changes!.includes(k)))
  },
  sample: sample('issues.edited', { issue: sampleIssue, changes: { title: { from: 'Found a bug?' } } }),
})

export const newPullRequest = defineTrigger({
  key: 'new_pull_request',
  name: 'New Pull Request',
  description:
    'Fires once per pull request by default: when it is opened ready for review, or — opened as a draft — when it is marked ready. includeDrafts also fires when a draft is opened; readyForReview false leaves out the marking ready.',
  ...onRepository,
  mechanisms: repositoryHook('pull_request'),
  config: repoConfig.extend({
    includeDrafts: z
      .boolean()
      .default(false)
      .describe(
        'Also fire when a pull request is opened as a draft (default false: a draft fires when it is marked ready).',
      ),
    readyForReview: z
      .boolean()
      .default(true)
      .describe(
        'Fire when a draft is marked ready for review (default true). With includeDrafts, false keeps to one firing per pull request: at its opening.',
      ),
  }),
  // Each transition by its option: opened ready (always), opened as a draft (includeDrafts),
  // marked ready (readyForReview). The defaults fire once per pull request.
  match: (e, c) =>
    (is(e, 'pull_request.ready_for_review') && c.readyForReview) ||
    (is(e, 'pull_request.opened') && (c.includeDrafts || !d(e).pull_request?.draft)),
  sample: sample('pull_request.opened', { number: 8, pull_request: samplePull }),
})

const PULL_CHANGES = [
  'edited',
  'closed',
  'merged',
  'reopened',
  'ready_for_review',
  'converted_to_draft',
  'synchronize',
  'labels',
  'assignees',
] as const
type PullChange = (typeof PULL_CHANGES)[number]

function pullChange(e: NormalizedEvent): PullChange | null {
  if (!e.type.startsWith('pull_request.')) return null
  const action = e.type.slice('pull_request.'.length)
  if (action === 'closed') return d(e).pull_request?.merged ? 'merged' : 'closed'
  if (action === 'labeled' || action === 'unlabeled') return 'labels'
  if (action === 'assigned' || action === 'unassigned') return 'assignees'
  return (PULL_CHANGES as readonly string[]).includes(action) ? (action as PullChange) : null
}

export const updatedPullRequest = defineTrigger({
  key: 'updated_pull_request',
  name: 'Updated Pull Request',
  description:
    'Fires when a pull request in the repository is modified or changes state: edited (title, body, base), new commits (synchronize), converted to draft, ready for review, closed, merged, reopened, labels or assignees. Opening and review requests do not fire it. Narrow it with changes.',
  ...onRepository,
  mechanisms: repositoryHook('pull_request'),
  config: repoConfig.extend({
    changes: z
      .array(z.enum(PULL_CHANGES))
      .min(1)
      .optional()
      .describe('Fire only for these changes (default: all). merged is a close that merged.'),
  }),
  match: (e, c) => {
    const k = pullChange(e)
    return k !== null && (!c.changes || c.changes.includes(k))
  },
  sample: sample('pull_request.converted_to_draft', {
    number: 8,
    pull_request: { ...samplePull, draft: true },
  }),
})

export const newComment = defineTrigger({
  key: 'new_comment',
  name: 'New Comment',
  description:
    'Fires when a comment is added to an issue or a pull request in the repository (issue.pull_request is present for pull requests). Narrow it with on.',
  ...onRepository,
  mechanisms: repositoryHook('issue_comment'),
  config: repoConfig.extend({
    on: z
      .enum(['any', 'issue', 'pull_request'])
      .default('any')
      .describe('Comments on issues, on pull requests, or on either (default).'),
  }),
  match: (e, c) => {
    if (!is(e, 'issue_comment.created')) return false
    const onPull = Boolean(d(e).issue?.pull_request)
    return c.on === 'any' || (c.on === 'pull_request') === onPull
  },
  sample: sample('issue_comment.created', {
    issue: sampleIssue,
    comment: { id: 42, body: 'I can reproduce this.', user: sampleSender, html_url: '…#issuecomment-42' },
  }),
})

export const newLabelOnIssue = defineTrigger({
  key: 'new_label_on_issue',
  name: 'New Label on Issue',
  description:
    'Fires when a label is added to an issue in the repository (label is the one added). Narrow it to one label name with label.',
  ...onRepository,
  mechanisms: repositoryHook('issues'),
  config: repoConfig.extend({
    label: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe('Fire only for this label name (case-insensitive).'),
  }),
  match: (e, c) => is(e, 'issues.labeled') && same(d(e).label?.name, c.label),
  sample: sample('issues.labeled', { issue: sampleIssue, label: { name: 'bug', color: 'd73a4a' } }),
})

export const newReviewRequest = defineTrigger({
  key: 'new_review_request',
  name: 'New Review Request',
  description:
    'Fires when someone is asked to review a pull request in the repository (requested_reviewer). Narrow it to one reviewer with reviewer.',
  ...onRepository,
  mechanisms: repositoryHook('pull_request'),
  config: repoConfig.extend({
    reviewer: login.optional().describe('Fire only when this account is asked to review.'),
  }),
  match: (e, c) => is(e, 'pull_request.review_requested') && same(d(e).requested_reviewer?.login, c.reviewer),
  sample: sample('pull_request.review_requested', {
    number: 8,
    pull_request: samplePull,
    requested_reviewer: { login: 'octo-demo', id: 1001, type: 'User' },
  }),
})

const REVIEW_STATES = ['approved', 'changes_requested', 'commented'] as const

export const newPullRequestReview = defineTrigger({
  key: 'new_pull_request_review',
  name: 'New Pull Request Review',
  description:
    'Fires when a review of a pull request in the repository is submitted: approved, changes requested or commented (review.state). Narrow it with states.',
  ...onRepository,
  mechanisms: repositoryHook('pull_request_review'),
  config: repoConfig.extend({
    states: z
      .array(z.enum(REVIEW_STATES))
      .min(1)
      .default([...REVIEW_STATES])
      .describe('The review outcomes to fire for (default all three).'),
  }),
  match: (e, c) =>
    is(e, 'pull_request_review.submitted') &&
    c.states.includes(String(d(e).review?.state ?? '').toLowerCase() as (typeof REVIEW_STATES)[number]),
  sample: sample('pull_request_review.submitted', {
    pull_request: samplePull,
    review: { id: 80, state: 'approved', body: 'Looks good.', user: sampleSender },
  }),
})

// ---- Commits and branches ----

const branchFilter = branchRef('Fire only for this branch (e.g. main); default: any branch.').optional()

export const newCommit = defineTrigger({
  key: 'new_commit',
  name: 'New Commit',
  description:
    'Fires once per commit pushed to the repository, on any branch (or the one named in branch). A push of three commits fires three times.',
  ...onRepository,
  mechanisms: repositoryHook('push'),
  config: repoConfig.extend({ branch: branchFilter }),
  match: (e, c) => is(e, 'commit') && same(d(e).branch, c.branch),
  sample: {
    ...sample('commit', {
      ref: 'refs/heads/main',
      branch: 'main',
      commit: {
        id: '7638417db6d59f3c431d3e1f261cc637155684cd',
        message: 'Fix the bug',
        timestamp: '2026-11-21T09:30:00Z',
        author: { name: 'Reviewer', email: 'reviewer@example.com', username: 'reviewer' },
        added: [],
        removed: [],
        modified: ['README.md'],
      },
    }),
    id: '72d3162e-cc78-11e3-81ab-4c9367dc0958:7638417db6d59f3c431d3e1f261cc637155684cd',
  },
})

export const newPush = defineTrigger({
  key: 'new_push',
  name: 'New Push',
  description:
    'Fires once for every push to the repository (branches and tags; a push may carry several commits, in commits). Deleting a branch does not fire it. Narrow it to one branch with branch.',
  ...onRepository,
  mechanisms: repositoryHook('push'),
  config: repoConfig.extend({ branch: branchFilter }),
  match: (e, c) => {
    if (!is(e, 'push') || d(e).deleted) return false
    if (c.branch === undefined) return true
    const ref = String(d(e).ref ?? '')
    return ref.startsWith('refs/heads/') && same(ref.slice('refs/heads/'.length), c.branch)
  },
  sample: sample('push', {
    ref: 'refs/heads/main',
    before: '553c2077f0edc3d5dc5d17262f6aa498e69d6f8e',
    after: '7638417db6d59f3c431d3e1f261cc637155684cd',
    created: false,
    deleted: false,
    forced: false,
    commits: [{ id: '7638417db6d59f3c431d3e1f261cc637155684cd', message: 'Fix the bug' }],
    pusher: { name: 'reviewer', email: 'reviewer@example.com' },
  }),
})

export const newBranch = defineTrigger({
  key: 'new_branch',
  name: 'New Branch',
  description:
    'Fires when a branch is created in the repository (ref is the branch name). Tags do not fire it.',
  ...onRepository,
  mechanisms: repositoryHook('create'),
  config: repoConfig,
  match: (e) => is(e, 'create') && d(e).ref_type === 'branch',
  sample: sample('create', { ref: 'fix-bug', ref_type: 'branch', master_branch: 'main' }),
})

// ---- Workflow ----

const CONCLUSIONS = [
  'success',
  'failure',
  'cancelled',
  'skipped',
  'timed_out',
  'neutral',
  'action_required',
] as const

const conclusionsFilter = z
  .array(z.enum(CONCLUSIONS))
  .min(1)
  .optional()
  .describe(
    'Fire only for these outcomes, e.g. ["failure"] (success = succeeded, failure = failed, cancelled); default: any.',
  )

export const workflowRunCompleted = defineTrigger({
  key: 'workflow_run_completed',
  name: 'Workflow Run Completed',
  description:
    'Fires when a workflow run in the repository completes — succeeded (success), failed (failure) or cancelled — with workflow_run.conclusion. Queued and in-progress runs do not fire it. Narrow it with conclusions and workflow.',
  ...onRepository,
  mechanisms: repositoryHook('workflow_run'),
  config: repoConfig.extend({
    conclusions: conclusionsFilter,
    workflow: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe('Only this workflow: its name (CI) or file (ci.yml, .codehost/workflows/ci.yml).'),
  }),
  match: (e, c) => {
    if (!is(e, 'workflow_run.completed')) return false
    const run: NonNullable<ChEventData['workflow_run']> = d(e).workflow_run ?? {}
    if (c.conclusions && !c.conclusions.some((x) => x === run.conclusion)) return false
    if (!c.workflow) return true
    const w = c.workflow.toLowerCase()
    const path = String(run.path ?? d(e).workflow?.path ?? '').toLowerCase()
    return String(run.name ?? '').toLowerCase() === w || path === w || path.endsWith(`/${w}`)
  },
  sample: sample('workflow_run.completed', {
    workflow_run: {
      id: 9000000001,
      name: 'CI',
      head_branch: 'main',
      head_sha: '7638417db6d59f3c431d3e1f261cc637155684cd',
      event: 'workflow_dispatch',
      status: 'completed',
      conclusion: 'failure',
      run_number: 12,
      workflow_id: 160000001,
    },
    workflow: { id: 160000001, name: 'CI', path: '.codehost/workflows/ci.yml' },
  }),
})

export const workflowJobCompleted = defineTrigger({
  key: 'workflow_job_completed',
  name: 'Workflow Job Completed',
  description:
    'Fires when a job of a workflow run in the repository completes, with workflow_job.conclusion (success, failure, cancelled …). Narrow it with conclusions and job.',
  ...onRepository,
  mechanisms: repositoryHook('workflow_job'),
  config: repoConfig.extend({
    conclusions: conclusionsFilter,
    job: z.string().min(1).max(255).optional().describe('Only the job with this name (e.g. build).'),
  }),
  match: (e, c) => {
    if (!is(e, 'workflow_job.completed')) return false
    const job: NonNullable<ChEventData['workflow_job']> = d(e).workflow_job ?? {}
    return (!c.conclusions || c.conclusions.some((x) => x === job.conclusion)) && same(job.name, c.job)
  },
  sample: sample('workflow_job.completed', {
    workflow_job: {
      id: 9100000001,
      run_id: 9000000001,
      name: 'build',
      status: 'completed',
      conclusion: 'success',
    },
  }),
})

// ---- Collaboration ----

export const newCollaborator = defineTrigger({
  key: 'new_collaborator',
  name: 'New Collaborator',
  description:
    'Fires when someone becomes a collaborator on the repository (an invitation accepted, or added directly); member is the account.',
  ...onRepository,
  mechanisms: repositoryHook('member'),
  config: repoConfig,
  match: (e) => is(e, 'member.added'),
  sample: sample('member.added', {
    member: { login: 'alice', id: 1003, type: 'User' },
    changes: { permission: { to: 'write' } },
  }),
})

/** The text of a delivery that can @-mention someone, by the event it came as (null: none). */
function mentioningText(e: NormalizedEvent): string | null {
  const x = d(e)
  switch (e.type) {
    case 'issues.opened':
      return `${x.issue?.title ?? ''}\n${x.issue?.body ?? ''}`
    case 'pull_request.opened':
      return `${x.pull_request?.title ?? ''}\n${x.pull_request?.body ?? ''}`
    case 'issue_comment.created':
    case 'pull_request_review_comment.created':
      return x.comment?.body ?? ''
    case 'pull_request_review.submitted':
      return x.review?.body ?? ''
    default:
      return null
  }
}

/** Whether `text` @-mentions `who` (not inside an e-mail address or a longer name). */
export function mentions(text: string, who: string): boolean {
  const escaped = who.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return new RegExp(`(?:^|[^\\w/@.\`-])@${escaped}(?![\\w-])`, 'i').test(text)
}

export const newMention = defineTrigger({
  key: 'new_mention',
  name: 'New Mention',
  description:
    "Fires when an account (the connection's own by default) is @-mentioned in the repository: in a new issue or pull request (title or body), an issue or pull request comment, a review or a review comment. Read instantly from the repository's webhook, since the code host has no mention event.",
  ...onRepository,
  mechanisms: repositoryHook(
    'issues, issue_comment, pull_request, pull_request_review, pull_request_review_comment',
    'The code host has no mention webhook; mentions are read from the repository’s own deliveries.',
  ),
  config: repoConfig.extend({
    login: login
      .optional()
      .describe("The account whose mentions fire it (default: the connection's own account)."),
  }),
  prepare: (c, account) => ({ ...c, login: c.login ?? account.name }),
  match: (e, c) => {
    const text = mentioningText(e)
    if (text === null || !c.login) return false
    // Mentioning yourself notifies nobody.
    if (String(d(e).sender?.login ?? '').toLowerCase() === c.login.toLowerCase()) return false
    return mentions(text, c.login)
  },
  sample: sample('issue_comment.created', {
    issue: sampleIssue,
    comment: { id: 43, body: '@octo-demo could you look at this?', user: sampleSender },
  }),
})

// ---- Projects ----

export const projectItemStatusChanged = defineTrigger({
  key: 'project_item_status_changed',
  name: 'Project Item Status Changed',
  description:
    "Fires when the Status of an item on a project (v2) changes: an organization's project (instantly, through the organization's webhook) or one of the connection's own account (polled through GraphQL: the code host has no webhook for a personal account's projects). changes.field_value has from and to (option names) and project_number. Other field edits do not fire it. Narrow it with projectNumber and status (the new status). An agent hears items whose issue or pull request is in a repository of its scope, and draft issues of a project whose owner has a repository in its scope.",
  ...orgOrPoll(
    'projects_v2_item',
    'poll of the account’s projects through GraphQL (viewer.projectsV2 items)',
  ),
  cursor: StatusCursor,
  poll: (ctx, c) => pollOwnProjectItems(ctx, c.projectNumber),
  pollIntervalMs: 60_000,
  // Held against the agent's repository scope (eventScope `place`): an item of an issue or pull
  // request is in scope when its repository is. An organization's delivery names only the
  // content's node id, so the repository is read before matching (webhooks.ts,
  // projectItemAttribution); the personal poll asks for it in its query. A draft issue lies in no
  // repository: it reaches agents whose scope holds a repository of the project's owner.
  eventScope: 'place',
  config: z.object({
    organization,
    projectNumber: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('Only this project (its number in the project address).'),
    status: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe('Only when the item moves to this status, e.g. Done (case-insensitive).'),
  }),
  match: (e, c) => {
    if (!is(e, 'projects_v2_item.edited')) return false
    const fv = d(e).changes?.field_value
    if (!fv || String(fv.field_name).toLowerCase() !== 'status') return false
    if (c.projectNumber !== undefined && fv.project_number !== c.projectNumber) return false
    return same(fv.to?.name, c.status)
  },
  sample: sample(
    'projects_v2_item.edited',
    {
      projects_v2_item: { id: 80000001, node_id: 'PVTI_…', content_type: 'Issue', project_node_id: 'PVT_…' },
      changes: {
        field_value: {
          field_name: 'Status',
          field_type: 'single_select',
          project_number: 1,
          from: { id: 'f75ad846', name: 'Todo' },
          to: { id: '98236657', name: 'Done' },
        },
      },
    },
    false,
  ),
})

export const newCardInColumn = defineTrigger({
  key: 'new_card_in_column',
  name: 'New Card in Column',
  description:
    "Fires when a card lands in a column of the repository's classic project board: created there, or moved in from another column. Moves within a column do not fire it. Narrow it with columnId. The code host is retiring classic project boards (its REST description no longer lists their operations); it works where they still exist — use Project Item Status Changed for projects (v2).",
  ...onRepository,
  mechanisms: repositoryHook('project_card'),
  config: repoConfig.extend({
    columnId: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('Only this column (its id, from the project board).'),
  }),
  match: (e, c) => {
    const card: NonNullable<ChEventData['project_card']> = d(e).project_card ?? {}
    const arrived =
      is(e, 'project_card.created') || (is(e, 'project_card.moved') && d(e).changes?.column_id !== undefined)
    return arrived && (c.columnId === undefined || card.column_id === c.columnId)
  },
  sample: sample('project_card.created', {
    project_card: { id: 90000002, note: 'Write the changelog', column_id: 30000001, project_id: 20000001 },
  }),
})

// ---- Other ----

export const newRelease = defineTrigger({
  key: 'new_release',
  name: 'New Release',
  description:
    'Fires when a release of the repository is published (drafts fire once they are published). With includePrereleases false, pre-releases do not fire it.',
  ...onRepository,
  mechanisms: repositoryHook('release'),
  config: repoConfig.extend({
    includePrereleases: z.boolean().default(true).describe('Also fire for pre-releases (default true).'),
  }),
  match: (e, c) => is(e, 'release.published') && (c.includePrereleases || !d(e).release?.prerelease),
  sample: sample('release.published', {
    release: {
      id: 70000001,
      tag_name: 'v1.0.0',
      name: 'v1.0.0',
      body: 'First release',
      draft: false,
      prerelease: false,
    },
  }),
})

export const newSnippet = defineTrigger({
  key: 'new_snippet',
  name: 'New Snippet',
  description:
    "Fires when the connection's account creates a snippet (gist). Polled: the code host has no webhook for snippets.",
  instant: false,
  mechanisms: [
    {
      kind: 'poll',
      upstream: 'poll of GET /gists?since=',
      reason: 'The code host has no webhook for snippets.',
    },
  ],
  // A snippet belongs to the account, not to a repository.
  eventScope: 'account',
  config: z.object({}),
  cursor: CreatedCursor,
  poll: (ctx) => pollOwnSnippets(ctx),
  pollIntervalMs: 60_000,
  sample: sample(
    'gist.created',
    {
      gist: {
        id: 'aa5a315d61ae9438b18d',
        description: 'Notes',
        public: true,
        files: { 'notes.md': { filename: 'notes.md' } },
      },
    },
    false,
  ),
})

export const newDiscussion = defineTrigger({
  key: 'new_discussion',
  name: 'New Discussion',
  description:
    'Fires when a discussion is started in the repository. Narrow it to one category with category.',
  ...onRepository,
  mechanisms: repositoryHook('discussion'),
  config: repoConfig.extend({
    category: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe('Only this category, e.g. Ideas (case-insensitive).'),
  }),
  match: (e, c) => is(e, 'discussion.created') && same(d(e).discussion?.category?.name, c.category),
  sample: sample('discussion.created', {
    discussion: { number: 3, title: 'How do I …?', body: '…', category: { name: 'Q&A' } },
  }),
})

export const newDiscussionComment = defineTrigger({
  key: 'new_discussion_comment',
  name: 'New Discussion Comment',
  description: 'Fires when a comment is added to a discussion in the repository.',
  ...onRepository,
  mechanisms: repositoryHook('discussion_comment'),
  config: repoConfig,
  match: (e) => is(e, 'discussion_comment.created'),
  sample: sample('discussion_comment.created', {
    discussion: { number: 3, title: 'How do I …?' },
    comment: { id: 8000001, body: 'Like this: …' },
  }),
})

export const codehostTriggers = [
  newRepository,
  newFork,
  newStar,
  newWatcher,
  newTag,
  newIssue,
  updatedIssue,
  newPullRequest,
  updatedPullRequest,
  newComment,
  newLabelOnIssue,
  newReviewRequest,
  newPullRequestReview,
  newCommit,
  newPush,
  newBranch,
  workflowRunCompleted,
  workflowJobCompleted,
  newCollaborator,
  newMention,
  projectItemStatusChanged,
  newCardInColumn,
  newRelease,
  newSnippet,
  newDiscussion,
  newDiscussionComment,
]
