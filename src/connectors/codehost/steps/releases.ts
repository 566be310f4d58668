import { z } from 'zod'
import { defineStep } from '../../../kit/define.ts'
import {
  getPage,
  onRepository,
  pageInfo,
  paging,
  releaseOut,
  repoPath,
  repository,
  slimRelease,
} from '../schemas.ts'
import type { ChRelease } from '../upstream.ts'

export const listReleases = defineStep({
  key: 'list_releases',
  name: 'List Releases',
  description:
    "Lists a repository's releases newest first, one page at a time: tag, name, notes, draft and pre-release flags, publication date.",
  input: z.object({ ...repository, ...paging }),
  output: z.object({ releases: z.array(releaseOut), ...pageInfo }),
  hints: { readOnly: true, idempotent: true },
  scoped: onRepository,
  run: async (ctx, input) => {
    const { data, hasNextPage } = await getPage<ChRelease[] | null>(ctx, repoPath(input, 'releases'), {
      per_page: input.perPage,
      page: input.page,
    })
    return { releases: (data ?? []).map(slimRelease), page: input.page, hasNextPage }
  },
})
