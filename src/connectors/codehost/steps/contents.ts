import { z } from 'zod'
import { defineStep } from '../../../kit/define.ts'
import { PatchbayError } from '../../../kit/errors.ts'
import type { UpstreamResponse } from '../../../kit/http.ts'
import { branchRef, filePath, onRepository, repoPath, repository } from '../schemas.ts'
import type { ChContent, ChContentEntry, ChFileWritten } from '../upstream.ts'

const pathField = z
  .string()
  .max(4096)
  .refine((p) => !p.split('/').some((s) => s === '..' || s === '.'), 'must not contain . or .. segments')
  .describe('Path inside the repository, e.g. docs/guide.md; empty for the top folder.')

const entry = z.object({
  name: z.string(),
  path: z.string(),
  type: z.string().describe('file, dir, symlink or submodule.'),
  size: z.number(),
  sha: z.string(),
})

export const getRepositoryContent = defineStep({
  key: 'get_repository_content',
  name: 'Get Repository Content',
  description:
    "Reads a file (its text and its sha, which Create or Update File Contents can take) or lists a folder's entries. ref picks a branch, tag or commit (default: the default branch). Long files are cut at maxBytes (truncated says so).",
  input: z.object({
    ...repository,
    path: pathField.default(''),
    ref: branchRef('Branch, tag or commit sha; default: the default branch.').optional(),
    maxBytes: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .default(100_000)
      .describe('At most this many bytes of a file are returned (default 100000).'),
  }),
  output: z.object({
    type: z.string().describe('file or dir (also symlink, submodule).'),
    path: z.string(),
    name: z.string(),
    sha: z.string().nullable().describe("The file's blob sha (give it to Create or Update File Contents)."),
    size: z.number().nullable(),
    text: z.string().nullable().describe('The file as UTF-8 text; null for folders and binary files.'),
    base64: z.string().nullable().describe('Binary files only: the bytes as base64.'),
    truncated: z.boolean(),
    entries: z.array(entry).nullable().describe('Folders: what they hold.'),
  }),
  hints: { readOnly: true, idempotent: true },
  scoped: onRepository,
  run: async (ctx, input) => {
    const path = filePath(input.path)
    const got = await ctx.http.get<ChContent | ChContentEntry[]>(
      repoPath(input, 'contents') + (path ? `/${path}` : ''),
      {
        ref: input.ref,
      },
    )
    if (Array.isArray(got))
      return {
        type: 'dir',
        path: input.path.replace(/^\/|\/$/g, ''),
        name: input.path.split('/').filter(Boolean).pop() ?? '',
        sha: null,
        size: null,
        text: null,
        base64: null,
        truncated: false,
        entries: got.map((e) => ({
          name: e.name,
          path: e.path,
          type: e.type,
          size: e.size ?? 0,
          sha: e.sha,
        })),
      }
    const bytes = got.content
      ? Buffer.from(String(got.content), got.encoding === 'base64' ? 'base64' : 'utf8')
      : null
    const cut = bytes && bytes.length > input.maxBytes ? bytes.subarray(0, input.maxBytes) : bytes
    const isText = cut ? !cut.includes(0) : false
    return {
      type: got.type ?? 'file',
      path: got.path,
      name: got.name,
      sha: got.sha ?? null,
      size: got.size ?? null,
      text: cut && isText ? cut.toString('utf8') : null,
      base64: cut && !isText ? cut.toString('base64') : null,
      truncated: Boolean(bytes && cut && cut.length < bytes.length),
      entries: null,
    }
  },
})

export const createOrUpdateFile = defineStep({
  key: 'create_or_update_file',
  name: 'Create or Update File Contents',
  description:
    "Writes a file as one commit on a branch: creates it, or replaces its content when it exists (Patchbay reads the file's current sha itself; give sha only to make sure nobody changed it since you read it — a stale sha fails with STALE_SHA).",
  input: z.object({
    ...repository,
    path: pathField
      .refine((p) => p.replace(/\//g, '') !== '', 'must name a file')
      .describe('Path of the file, e.g. docs/guide.md.'),
    content: z.string().max(10_000_000).describe('The whole new content.'),
    encoding: z
      .enum(['utf-8', 'base64'])
      .default('utf-8')
      .describe('How content is written: text (utf-8, default) or base64 for binary files.'),
    message: z.string().min(1).max(10_000).describe('The commit message.'),
    branch: branchRef('The branch to commit to; default: the default branch.').optional(),
    sha: z
      .string()
      .regex(/^[0-9a-f]{40}$/, 'must be a 40-character blob sha')
      .optional()
      .describe(
        'The blob sha you read the file at (from Get Repository Content), to refuse the write if it changed since.',
      ),
  }),
  output: z.object({
    created: z.boolean().describe('True when the file was new.'),
    path: z.string(),
    contentSha: z.string().describe("The file's new blob sha."),
    commit: z.object({ sha: z.string(), message: z.string(), htmlUrl: z.string().nullable() }),
  }),
  hints: { readOnly: false, destructive: true, idempotent: false },
  scoped: onRepository,
  run: async (ctx, input) => {
    const path = repoPath(input, 'contents') + `/${filePath(input.path)}`
    let sha = input.sha
    if (!sha) {
      try {
        const current = await ctx.http.get<ChContent | ChContentEntry[]>(path, { ref: input.branch })
        if (Array.isArray(current) || current?.type !== 'file')
          throw new PatchbayError(
            'PATH_IS_NOT_A_FILE',
            `${input.path} in ${input.owner}/${input.repo} is a ${Array.isArray(current) ? 'folder' : current?.type}, not a file.`,
            {
              hint: 'Choose a file path (a folder cannot be written).',
            },
          )
        sha = current.sha
      } catch (err) {
        if (!(err instanceof PatchbayError && err.code === 'UPSTREAM_NOT_FOUND')) throw err
      }
    }
    const content =
      input.encoding === 'base64' ? input.content : Buffer.from(input.content, 'utf8').toString('base64')
    let res: UpstreamResponse<ChFileWritten>
    try {
      res = await ctx.http.request<ChFileWritten>({
        method: 'PUT',
        path,
        body: { message: input.message, content, sha, branch: input.branch },
      })
    } catch (err) {
      if (err instanceof PatchbayError && err.status === 409 && input.sha)
        throw new PatchbayError(
          'STALE_SHA',
          `The file ${input.path} changed since sha ${input.sha} was read; nothing was written.`,
          {
            hint: 'Read the file again (Get Repository Content) and write it with its current sha, or leave sha out to overwrite whatever is there now.',
            upstream: err.upstream,
          },
        )
      throw err
    }
    const data = res.data
    return {
      created: res.status === 201,
      path: data.content?.path ?? input.path,
      contentSha: data.content?.sha,
      commit: {
        sha: data.commit?.sha,
        message: data.commit?.message ?? input.message,
        htmlUrl: data.commit?.html_url ?? null,
      },
    }
  },
})
