import { z } from 'zod'
import { defineStep } from '../../../kit/define.ts'
import {
  issueNumber,
  issueOut,
  login,
  onRepository,
  repoPath,
  repository,
  slimIssue,
  slimUser,
  userOut,
} from '../schemas.ts'
import type { ChIssue, ChIssueComment } from '../upstream.ts'

const labels = z.array(z.string().min(1).max(100)).max(100)
const assignees = z.array(login).max(10)

export const createIssue = defineStep({
  key: 'create_issue',
  name: 'Create Issue',
  description:
    "Opens an issue in a repository. Labels that do not exist yet are created; labels and assignees are only applied when the account may triage the repository (otherwise the code-host drops them silently — check the output's labels).",
  input: z.object({
    ...repository,
    title: z.string().min(1).max(256).describe('Title of the issue.'),
    body: z.string().max(65_536).optional().describe('Body (Markdown).'),
    labels: labels.optional().describe('Label names to apply, e.g. ["bug"].'),
    assignees: assignees.optional().describe('Logins to assign (collaborators of the repository).'),
  }),
  output: issueOut,
  hints: { readOnly: false, destructive: false, idempotent: false },
  scoped: onRepository,
  run: async (ctx, input) =>
    slimIssue(
      await ctx.http.post(repoPath(input, 'issues'), {
        title: input.title,
        body: input.body,
        labels: input.labels,
        assignees: input.assignees,
      }),
    ),
})

export const createIssueComment = defineStep({
  key: 'create_issue_comment',
  name: 'Create Issue Comment',
  description:
    'Adds a comment to an issue or a pull request (pull requests share the issue numbering, so use the pull request number).',
  input: z.object({
    ...repository,
    issueNumber: issueNumber(),
    body: z.string().min(1).max(65_536).describe('The comment (Markdown).'),
  }),
  output: z.object({
    id: z.number().describe('The comment id.'),
    issueNumber: z.number(),
    body: z.string(),
    author: z.string().nullable(),
    htmlUrl: z.string(),
    createdAt: z.string(),
  }),
  hints: { readOnly: false, destructive: false, idempotent: false },
  scoped: onRepository,
  run: async (ctx, input) => {
    const c = await ctx.http.post<ChIssueComment>(repoPath(input, 'issues', input.issueNumber, 'comments'), {
      body: input.body,
    })
    return {
      id: c.id,
      issueNumber: input.issueNumber,
      body: c.body,
      author: c.user?.login ?? null,
      htmlUrl: c.html_url,
      createdAt: c.created_at,
    }
  },
})

export const updateIssue = defineStep({
  key: 'update_issue',
  name: 'Update Issue',
  description:
    'Changes an issue: title, body, state (open or closed, with a reason), labels or assignees. labels and assignees replace the current ones (give the full list; [] clears). Only the fields given change.',
  input: z
    .object({
      ...repository,
      issueNumber: issueNumber(),
      title: z.string().min(1).max(256).optional().describe('New title.'),
      body: z.string().max(65_536).optional().describe('New body (Markdown); replaces the current one.'),
      state: z.enum(['open', 'closed']).optional().describe('open or closed.'),
      stateReason: z
        .enum(['completed', 'not_planned', 'reopened'])
        .optional()
        .describe('Why it was closed (completed, not_planned) or reopened.'),
      labels: labels.optional().describe('The full list of label names the issue should have.'),
      assignees: assignees.optional().describe('The full list of logins it should be assigned to.'),
    })
    .refine(
      (i) => [i.title, i.body, i.state, i.stateReason, i.labels, i.assignees].some((v) => v !== undefined),
      'give at least one of title, body, state, stateReason, labels, assignees',
    ),
  output: issueOut,
  hints: { readOnly: false, destructive: true, idempotent: true },
  scoped: onRepository,
  run: async (ctx, input) =>
    slimIssue(
      await ctx.http.patch(repoPath(input, 'issues', input.issueNumber), {
        title: input.title,
        body: input.body,
        state: input.state,
        state_reason: input.stateReason,
        labels: input.labels,
        assignees: input.assignees,
      }),
    ),
})

export const getIssueAssignees = defineStep({
  key: 'get_issue_assignees',
  name: 'Get Issue Assignees',
  description: 'Lists who an issue (or pull request) is assigned to.',
  input: z.object({ ...repository, issueNumber: issueNumber() }),
  output: z.object({
    issueNumber: z.number(),
    title: z.string(),
    state: z.string(),
    assignees: z.array(userOut),
  }),
  hints: { readOnly: true, idempotent: true },
  scoped: onRepository,
  run: async (ctx, input) => {
    const i = await ctx.http.get<ChIssue>(repoPath(input, 'issues', input.issueNumber))
    return {
      issueNumber: i.number,
      title: i.title,
      state: i.state,
      assignees: (i.assignees ?? []).map(slimUser),
    }
  },
})
