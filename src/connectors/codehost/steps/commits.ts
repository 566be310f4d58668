import { z } from 'zod'
import { defineStep } from '../../../kit/define.ts'
import {
  branchRef,
  commitOut,
  getPage,
  onRepository,
  pageInfo,
  paging,
  repoPath,
  repository,
  slimCommit,
} from '../schemas.ts'
import type { ChCommit } from '../upstream.ts'

const PATCH_LIMIT = 4000

export const getCommit = defineStep({
  key: 'get_commit',
  name: 'Get Commit',
  description:
    'Reads one commit: message, author, committer, parents, line counts and the files it changed (with patches cut at 4000 characters). ref is a commit sha, a branch (its latest commit) or a tag.',
  input: z.object({
    ...repository,
    ref: branchRef('A commit sha (from List Commits or a New Commit event), a branch or a tag.'),
    includeFiles: z.boolean().default(true).describe('Include the changed files (default true).'),
  }),
  output: commitOut.extend({
    stats: z.object({ additions: z.number(), deletions: z.number(), total: z.number() }).nullable(),
    files: z
      .array(
        z.object({
          filename: z.string(),
          status: z.string().describe('added, modified, removed, renamed …'),
          additions: z.number(),
          deletions: z.number(),
          patch: z.string().nullable(),
        }),
      )
      .nullable(),
  }),
  hints: { readOnly: true, idempotent: true },
  scoped: onRepository,
  run: async (ctx, input) => {
    const c = await ctx.http.get<ChCommit>(repoPath(input, 'commits', input.ref))
    return {
      ...slimCommit(c),
      stats: c.stats
        ? { additions: c.stats.additions, deletions: c.stats.deletions, total: c.stats.total }
        : null,
      files: input.includeFiles
        ? (c.files ?? []).map((f) => ({
            filename: f.filename,
            status: f.status,
            additions: f.additions ?? 0,
            deletions: f.deletions ?? 0,
            patch: typeof f.patch === 'string' ? f.patch.slice(0, PATCH_LIMIT) : null,
          }))
        : null,
    }
  },
})

export const listCommits = defineStep({
  key: 'list_commits',
  name: 'List Commits',
  description:
    'Lists commits newest first, one page at a time: of a branch (or from a sha), optionally only those touching a path, by an author, or within since/until.',
  input: z.object({
    ...repository,
    sha: branchRef('Branch name or commit sha to list from; default: the default branch.').optional(),
    path: z.string().min(1).max(4096).optional().describe('Only commits that touch this file or folder.'),
    author: z.string().min(1).max(255).optional().describe('Only commits by this login or email.'),
    since: z.iso.datetime({ offset: true }).optional().describe('Only commits after this time (ISO 8601).'),
    until: z.iso.datetime({ offset: true }).optional().describe('Only commits before this time (ISO 8601).'),
    ...paging,
  }),
  output: z.object({ commits: z.array(commitOut), ...pageInfo }),
  hints: { readOnly: true, idempotent: true },
  scoped: onRepository,
  run: async (ctx, input) => {
    const { data, hasNextPage } = await getPage<ChCommit[] | null>(ctx, repoPath(input, 'commits'), {
      sha: input.sha,
      path: input.path,
      author: input.author,
      since: input.since,
      until: input.until,
      per_page: input.perPage,
      page: input.page,
    })
    return { commits: (data ?? []).map(slimCommit), page: input.page, hasNextPage }
  },
})
