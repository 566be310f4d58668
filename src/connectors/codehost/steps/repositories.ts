import { z } from 'zod'
import { defineStep } from '../../../kit/define.ts'
import { onRepository, repoPath, repository, repositoryOut, slimRepository } from '../schemas.ts'
import { requireInScope } from '../scope.ts'
import type { ChRepository } from '../upstream.ts'

export const createRepository = defineStep({
  key: 'create_repository',
  name: 'Create Repository',
  description:
    "Creates a repository in the connection's account, or in an organization the account may create repositories in (org). With autoInit (default) it starts with a README on its default branch, so branches and files can follow at once. An agent may create only a repository its scope already lists.",
  input: z.object({
    name: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,100}$/, 'must be 1–100 letters, digits, dots, dashes or underscores')
      .describe('Name of the new repository, e.g. release-notes.'),
    description: z.string().max(350).optional().describe('A short description.'),
    private: z.boolean().default(false).describe('Private (true) or public (false, the default).'),
    autoInit: z.boolean().default(true).describe('Start with a README commit (default true).'),
    org: z
      .string()
      .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/, 'must be an organization login')
      .optional()
      .describe("An organization to create it in; default: the connection's own account."),
  }),
  output: repositoryOut,
  hints: { readOnly: false, destructive: false, idempotent: false },
  run: async (ctx, input) => {
    requireInScope(ctx, `${input.org ?? ctx.connection.accountName}/${input.name}`)
    const body = {
      name: input.name,
      description: input.description,
      private: input.private,
      auto_init: input.autoInit,
    }
    const created = input.org
      ? await ctx.http.post<ChRepository>(`/orgs/${encodeURIComponent(input.org)}/repos`, body)
      : await ctx.http.post<ChRepository>('/user/repos', body)
    return slimRepository(created)
  },
})

export const getRepository = defineStep({
  key: 'get_repository',
  name: 'Get Repository Info',
  description:
    'Reads a repository: description, visibility, default branch, stars, forks, open issue count, topics and dates. owner/repo come from the repository address (codehost/{owner}/{repo}) or a trigger event (repository.full_name).',
  input: z.object(repository),
  output: repositoryOut,
  hints: { readOnly: true, idempotent: true },
  scoped: onRepository,
  run: async (ctx, input) => slimRepository(await ctx.http.get(repoPath(input))),
})

export const starRepo = defineStep({
  key: 'star_repo',
  name: 'Star Repo',
  description:
    'Stars a repository as the connected account. Starring an already starred repository changes nothing.',
  input: z.object(repository),
  output: z.object({ starred: z.literal(true), repository: z.string().describe('owner/repo.') }),
  hints: { readOnly: false, destructive: false, idempotent: true },
  scoped: onRepository,
  run: async (ctx, input) => {
    await ctx.http.put(`/user/starred/${encodeURIComponent(input.owner)}/${encodeURIComponent(input.repo)}`)
    return { starred: true as const, repository: `${input.owner}/${input.repo}` }
  },
})
