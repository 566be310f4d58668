import { z } from 'zod'
import { defineStep } from '../../../kit/define.ts'
import { PatchbayError } from '../../../kit/errors.ts'
import { branchRef, onRepository, repoPath, repository } from '../schemas.ts'

export const branchName = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[^\s~^:?*[\\]+$/, 'must be a branch name without spaces or any of ~ ^ : ? * [ \\')
  .refine(
    (b) =>
      !b.startsWith('/') &&
      !b.endsWith('/') &&
      !b.includes('//') &&
      !b.includes('..') &&
      !b.endsWith('.lock') &&
      !b.startsWith('refs/'),
    'must be a plain branch name such as feature/login (no leading or trailing /, no .., not refs/…)',
  )

const SHA = /^[0-9a-f]{40}$/

export const createBranch = defineStep({
  key: 'create_branch',
  name: 'Create Branch',
  description:
    "Creates a branch (a git reference) starting at another branch or a commit sha; from defaults to the repository's default branch. Fails with BRANCH_EXISTS when the name is taken.",
  input: z.object({
    ...repository,
    branch: branchName.describe('Name of the new branch, e.g. fix/login-timeout.'),
    from: branchRef(
      'A branch name or a 40-character commit sha to start from; default: the default branch.',
    ).optional(),
  }),
  output: z.object({
    branch: z.string(),
    ref: z.string().describe('The full reference: refs/heads/<branch>.'),
    sha: z.string().describe('The commit the branch points at.'),
  }),
  hints: { readOnly: false, destructive: false, idempotent: false },
  scoped: onRepository,
  run: async (ctx, input) => {
    let sha = input.from && SHA.test(input.from) ? input.from : undefined
    if (!sha) {
      const from =
        input.from ?? (await ctx.http.get<{ default_branch: string }>(repoPath(input))).default_branch
      try {
        sha = (await ctx.http.get<{ commit: { sha: string } }>(repoPath(input, 'branches', from))).commit.sha
      } catch (err) {
        if (err instanceof PatchbayError && err.code === 'UPSTREAM_NOT_FOUND')
          throw new PatchbayError(
            'BRANCH_NOT_FOUND',
            `There is no branch "${from}" in ${input.owner}/${input.repo} to start from.`,
            {
              hint: 'Give an existing branch or a commit sha in from (or leave it out for the default branch).',
              upstream: err.upstream,
            },
          )
        throw err
      }
    }
    try {
      const made = await ctx.http.post<{ ref: string; object: { sha: string } }>(
        repoPath(input, 'git', 'refs'),
        {
          ref: `refs/heads/${input.branch}`,
          sha,
        },
      )
      return { branch: input.branch, ref: made.ref, sha: made.object.sha }
    } catch (err) {
      if (err instanceof PatchbayError && err.status === 422 && /already exists/i.test(err.message))
        throw new PatchbayError(
          'BRANCH_EXISTS',
          `The branch "${input.branch}" already exists in ${input.owner}/${input.repo}.`,
          {
            hint: 'Pick another name, or use the existing branch.',
            upstream: err.upstream,
          },
        )
      throw err
    }
  },
})
