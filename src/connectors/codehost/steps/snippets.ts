import { z } from 'zod'
import { defineStep } from '../../../kit/define.ts'
import { getPage, login, pageInfo, paging, slimSnippet, snippetOut } from '../schemas.ts'
import type { ChSnippet } from '../upstream.ts'

const filename = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[^/\\]+$/, 'must be a file name without slashes')

const snippetId = z
  .string()
  .regex(
    /^[0-9a-f]{1,64}$/i,
    'must be a snippet id (hexadecimal), from Create Snippet or List Snippets for a User',
  )
  .describe('The snippet id, from Create Snippet or List Snippets for a User.')

export const createSnippet = defineStep({
  key: 'create_snippet',
  name: 'Create Snippet',
  description:
    "Creates a snippet (a gist) in the connection's account: one or more named text files. Secret (public false, the default) snippets are unlisted but visible to anyone with the link.",
  input: z.object({
    description: z.string().max(1000).optional().describe('What the snippet is.'),
    public: z.boolean().default(false).describe('Listed publicly (true) or secret (false, default).'),
    files: z
      .record(filename, z.string().min(1).max(1_000_000))
      .refine((f) => Object.keys(f).length > 0 && Object.keys(f).length <= 20, 'give 1 to 20 files')
      .describe('File name → content, e.g. {"notes.md": "# Notes"}.'),
  }),
  output: snippetOut,
  hints: { readOnly: false, destructive: false, idempotent: false },
  run: async (ctx, input) => {
    const files = Object.fromEntries(
      Object.entries(input.files).map(([name, content]) => [name, { content }]),
    )
    return slimSnippet(
      await ctx.http.post('/gists', { description: input.description, public: input.public, files }),
    )
  },
})

export const updateSnippet = defineStep({
  key: 'update_snippet',
  name: 'Update Snippet',
  description:
    "Changes a snippet of the connection's account: its description, and files by name — new content for a file, a new file, or null to delete one. Files not named stay as they are.",
  input: z
    .object({
      snippetId,
      description: z.string().max(1000).optional().describe('New description.'),
      files: z
        .record(filename, z.string().min(1).max(1_000_000).nullable())
        .optional()
        .describe('File name → new content, or null to delete the file.'),
    })
    .refine(
      (i) => i.description !== undefined || (i.files && Object.keys(i.files).length > 0),
      'give description or files',
    ),
  output: snippetOut,
  hints: { readOnly: false, destructive: true, idempotent: true },
  run: async (ctx, input) => {
    const files = input.files
      ? Object.fromEntries(
          Object.entries(input.files).map(([name, content]) => [name, content === null ? null : { content }]),
        )
      : undefined
    return slimSnippet(
      await ctx.http.patch(`/gists/${encodeURIComponent(input.snippetId)}`, {
        description: input.description,
        files,
      }),
    )
  },
})

export const listSnippetsForUser = defineStep({
  key: 'list_snippets_for_user',
  name: 'List Snippets for a User',
  description:
    "Lists an account's snippets newest first, one page at a time (file names and sizes, no contents), optionally only those updated since a time.",
  input: z.object({
    username: login.describe('The account whose snippets to list, e.g. octo-demo.'),
    since: z.iso
      .datetime({ offset: true })
      .optional()
      .describe('Only snippets updated after this time (ISO 8601).'),
    ...paging,
  }),
  output: z.object({ snippets: z.array(snippetOut), ...pageInfo }),
  hints: { readOnly: true, idempotent: true },
  run: async (ctx, input) => {
    const { data, hasNextPage } = await getPage<ChSnippet[] | null>(
      ctx,
      `/users/${encodeURIComponent(input.username)}/gists`,
      {
        since: input.since,
        per_page: input.perPage,
        page: input.page,
      },
    )
    return { snippets: (data ?? []).map((g) => slimSnippet(g, false)), page: input.page, hasNextPage }
  },
})
