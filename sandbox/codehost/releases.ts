// Releases. Publishing one with a new tag creates the tag (and its `create`/`push` events).
import { updateRef } from './branches.ts'
import { ApiError, type Ctx, validationFailed } from './context.ts'
import { emit, envelope } from './events.ts'
import { resolveRef } from './git.ts'
import type { Release, Repo, User } from './store.ts'
import { releaseView } from './views-misc.ts'

export interface ReleaseInput {
  tagName?: string
  targetCommitish?: string
  name?: string | null
  body?: string | null
  draft?: boolean
  prerelease?: boolean
}

export function createRelease(ctx: Ctx, repo: Repo, actor: User, input: ReleaseInput): Release {
  if (!input.tagName)
    throw validationFailed([{ resource: 'Release', code: 'missing_field', field: 'tag_name' }])
  if (repo.releases.some((r) => r.tagName === input.tagName))
    throw validationFailed([{ resource: 'Release', code: 'already_exists', field: 'tag_name' }])
  const target = input.targetCommitish ?? repo.defaultBranch
  if (!repo.tags.has(input.tagName) && !resolveRef(ctx.store, repo, target))
    throw validationFailed([{ resource: 'Release', code: 'invalid', field: 'target_commitish' }])
  const now = ctx.emulator.clock.iso()
  const release: Release = {
    id: ctx.store.nextId('release', 120_000_001),
    repoId: repo.id,
    tagName: input.tagName,
    targetCommitish: target,
    name: input.name ?? input.tagName,
    body: input.body ?? null,
    draft: input.draft ?? false,
    prerelease: input.prerelease ?? false,
    createdAt: now,
    publishedAt: null,
    authorId: actor.id,
  }
  repo.releases.push(release)
  emit(
    ctx,
    'release',
    { action: 'created', release: releaseView(ctx, repo, release), ...envelope(ctx, repo, actor) },
    { repo },
  )
  if (!release.draft) publish(ctx, repo, release, actor)
  return release
}

export function publish(ctx: Ctx, repo: Repo, release: Release, actor: User): void {
  if (!repo.tags.has(release.tagName)) {
    const commit = resolveRef(ctx.store, repo, release.targetCommitish)
    if (!commit)
      throw new ApiError(422, 'Validation Failed', [
        { resource: 'Release', code: 'invalid', field: 'target_commitish' },
      ])
    updateRef(ctx, repo, 'tag', release.tagName, commit.sha, actor)
  }
  release.draft = false
  release.publishedAt = ctx.emulator.clock.iso()
  const view = releaseView(ctx, repo, release)
  emit(ctx, 'release', { action: 'published', release: view, ...envelope(ctx, repo, actor) }, { repo })
  if (!release.prerelease)
    emit(ctx, 'release', { action: 'released', release: view, ...envelope(ctx, repo, actor) }, { repo })
}
