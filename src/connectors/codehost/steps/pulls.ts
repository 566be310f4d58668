import { z } from 'zod'
import { defineStep } from '../../../kit/define.ts'
import { PatchbayError } from '../../../kit/errors.ts'
import {
  branchRef,
  issueNumber,
  onRepository,
  pullRequestOut,
  repoPath,
  repository,
  slimPullRequest,
} from '../schemas.ts'
import type { ChRequestedReviewers, ChReview } from '../upstream.ts'

export const createPullRequest = defineStep({
  key: 'create_pull_request',
  name: 'Create Pull Request',
  description:
    "Opens a pull request from the head branch into the base branch (default: the repository's default branch). head is a branch of this repository, or owner:branch for a fork. Fails when the branches are missing, have no commits between them, or already have an open pull request. mergeable in the output says whether it can merge cleanly (null while the code-host is still computing it).",
  input: z.object({
    ...repository,
    title: z.string().min(1).max(256).describe('Title of the pull request.'),
    head: branchRef('The branch with the changes (e.g. fix/login), or owner:branch from a fork.'),
    base: branchRef('The branch to merge into; default: the default branch.').optional(),
    body: z
      .string()
      .max(65_536)
      .optional()
      .describe('Description (Markdown); "Fixes #12" closes issue 12 on merge.'),
    draft: z.boolean().default(false).describe('Open it as a draft (not ready for review).'),
  }),
  output: pullRequestOut,
  hints: { readOnly: false, destructive: false, idempotent: false },
  scoped: onRepository,
  run: async (ctx, input) => {
    const base =
      input.base ?? (await ctx.http.get<{ default_branch: string }>(repoPath(input))).default_branch
    try {
      return slimPullRequest(
        await ctx.http.post(repoPath(input, 'pulls'), {
          title: input.title,
          head: input.head,
          base,
          body: input.body,
          draft: input.draft,
        }),
      )
    } catch (err) {
      if (err instanceof PatchbayError && err.status === 422)
        throw new PatchbayError(
          'PULL_REQUEST_REJECTED',
          `The pull request from ${input.head} into ${base} was refused: ${err.message.replace(/^.*?: /, '')}`,
          {
            hint: 'Check that both branches exist, that head has commits base lacks, and that no open pull request joins them already.',
            upstream: err.upstream,
          },
        )
      throw err
    }
  },
})

export const getReviewers = defineStep({
  key: 'get_reviewers',
  name: 'Get Reviewers',
  description:
    "Shows a pull request's reviewers: who is asked to review (requested) and the reviews given so far (approved, changes requested, commented), with each reviewer's latest verdict.",
  input: z.object({ ...repository, pullNumber: issueNumber('pull request') }),
  output: z.object({
    pullNumber: z.number(),
    requested: z.object({ users: z.array(z.string()), teams: z.array(z.string()) }),
    reviews: z.array(
      z.object({
        id: z.number(),
        reviewer: z.string().nullable(),
        state: z.string().describe('APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED or PENDING.'),
        body: z.string().nullable(),
        submittedAt: z.string().nullable(),
      }),
    ),
    latestByReviewer: z.record(z.string(), z.string()).describe("Each reviewer's latest review state."),
  }),
  hints: { readOnly: true, idempotent: true },
  scoped: onRepository,
  run: async (ctx, input) => {
    const [requested, reviews] = await Promise.all([
      ctx.http.get<ChRequestedReviewers | null>(
        repoPath(input, 'pulls', input.pullNumber, 'requested_reviewers'),
      ),
      ctx.http.get<ChReview[] | null>(repoPath(input, 'pulls', input.pullNumber, 'reviews'), {
        per_page: 100,
      }),
    ])
    const slim = (reviews ?? []).map((r) => ({
      id: r.id,
      reviewer: r.user?.login ?? null,
      state: r.state,
      body: r.body || null,
      submittedAt: r.submitted_at ?? null,
    }))
    const latestByReviewer: Record<string, string> = {}
    for (const r of slim) if (r.reviewer && r.state !== 'PENDING') latestByReviewer[r.reviewer] = r.state
    return {
      pullNumber: input.pullNumber,
      requested: {
        users: (requested?.users ?? []).map((u) => u.login),
        teams: (requested?.teams ?? []).map((t) => t.slug ?? t.name),
      },
      reviews: slim,
      latestByReviewer,
    }
  },
})
