import { z } from 'zod'
import { defineStep } from '../../../kit/define.ts'
import { PatchbayError } from '../../../kit/errors.ts'
import { getPage, issueOut, pageInfo, paging, slimIssue } from '../schemas.ts'
import { repoQualifiers, wideningQualifiers } from '../scope.ts'
import type { ChSearchIssues } from '../upstream.ts'

const fullName = z
  .string()
  .regex(/^[A-Za-z0-9-]{1,39}\/[A-Za-z0-9._-]{1,100}$/, 'must be owner/repo, e.g. octo-demo/hello-world')

export const searchIssuesAndPullRequests = defineStep({
  key: 'search_issues_and_pull_requests',
  name: 'Search Issues and Pull Requests',
  description:
    'Searches issues and pull requests across repositories with the code-host search syntax, e.g. "is:open label:bug crash" or "is:pr review-requested:octo-demo". Narrow it with repositories (owner/repo), type and state. For an agent the search covers only the repositories in its scope. One page at a time (at most 1,000 results overall); search has its own, smaller rate limit.',
  input: z.object({
    q: z
      .string()
      .max(256)
      .default('')
      .describe('Words and qualifiers (repo:, is:, label:, author:, assignee:, mentions:, created:, …).'),
    repositories: z
      .array(fullName)
      .max(50)
      .optional()
      .describe('Only these repositories (owner/repo); added to q as repo: qualifiers.'),
    type: z.enum(['issue', 'pr', 'any']).default('any').describe('Issues, pull requests, or both (default).'),
    state: z.enum(['open', 'closed', 'any']).default('any').describe('open, closed or any (default).'),
    sort: z
      .enum(['comments', 'created', 'updated', 'reactions', 'interactions'])
      .optional()
      .describe('Sort by this instead of best match.'),
    order: z.enum(['asc', 'desc']).default('desc').describe('With sort: descending (default) or ascending.'),
    ...paging,
  }),
  output: z.object({
    totalCount: z.number(),
    incompleteResults: z
      .boolean()
      .describe('True when the search timed out upstream and results may be missing.'),
    items: z.array(issueOut),
    query: z.string().describe('The query as sent, with the qualifiers Patchbay added.'),
    ...pageInfo,
  }),
  hints: { readOnly: true, idempotent: true },
  scoped: [
    {
      kind: 'repository',
      value: (i: { q?: string; repositories?: string[] }) => [
        ...(i.repositories ?? []),
        ...repoQualifiers(i.q),
      ],
    },
  ],
  run: async (ctx, input) => {
    const terms = [input.q.trim()]
    for (const r of input.repositories ?? []) terms.push(`repo:${r}`)
    if (input.type !== 'any') terms.push(`is:${input.type}`)
    if (input.state !== 'any') terms.push(`is:${input.state}`)
    if (ctx.scope) {
      // A scoped agent searches its own repositories only: the repositories it names (already
      // checked against its scope) or, when it names none, every repository in its scope.
      const widening = wideningQualifiers(input.q)
      if (widening.length > 0)
        throw new PatchbayError(
          'SCOPE_DENIED',
          `An agent's search cannot use ${widening.join(' ')}: it would reach repositories outside the agent's scope.`,
          { hint: 'Name repositories with repo: (or the repositories field) instead.' },
        )
      const named = [...(input.repositories ?? []), ...repoQualifiers(input.q)]
      if (named.length === 0) {
        if (ctx.scope.repositories.length === 0)
          throw new PatchbayError('SCOPE_DENIED', 'This agent has no repositories in its scope to search.', {
            hint: 'Add repositories to the agent’s scope (PATCH /v1/agents/{id}).',
          })
        for (const r of ctx.scope.repositories) terms.push(`repo:${r}`)
      }
    }
    const query = terms.filter(Boolean).join(' ')
    if (query === '')
      throw new PatchbayError(
        'VALIDATION_FAILED',
        'Invalid input: input.q: give search words or qualifiers (or repositories, type or state).',
        {
          hint: 'For example q: "is:open label:bug".',
        },
      )
    const { data, hasNextPage } = await getPage<ChSearchIssues | null>(ctx, '/search/issues', {
      q: query,
      sort: input.sort,
      order: input.sort ? input.order : undefined,
      per_page: input.perPage,
      page: input.page,
    })
    const total = data?.total_count ?? 0
    return {
      totalCount: total,
      incompleteResults: Boolean(data?.incomplete_results),
      items: (data?.items ?? []).map(slimIssue),
      query,
      page: input.page,
      hasNextPage:
        hasNextPage || (input.page * input.perPage < Math.min(total, 1000) && (data?.items?.length ?? 0) > 0),
    }
  },
})
