// Snippets ("gists"). (choice) `gist` events go to the owner's account hooks.
import { ApiError, type Ctx, validationFailed } from './context.ts'
import type { Gist, User } from './store.ts'

type FilesInput = Record<string, { content?: unknown; filename?: unknown } | null>

function checkFiles(files: unknown, creating: boolean): FilesInput {
  if (files === undefined && !creating) return {}
  if (
    typeof files !== 'object' ||
    files === null ||
    Array.isArray(files) ||
    (creating && Object.keys(files).length === 0)
  )
    throw validationFailed([{ resource: 'Gist', code: 'missing_field', field: 'files' }])
  for (const [name, f] of Object.entries(files as FilesInput)) {
    if (f === null && !creating) continue
    if (typeof f !== 'object' || f === null)
      throw validationFailed([{ resource: 'Gist', code: 'invalid', field: `files.${name}` }])
    if (f.content !== undefined && typeof f.content !== 'string')
      throw validationFailed([{ resource: 'Gist', code: 'invalid', field: `files.${name}.content` }])
    if (creating && (typeof f.content !== 'string' || f.content === ''))
      throw validationFailed([{ resource: 'Gist', code: 'missing_field', field: 'files' }])
  }
  return files as FilesInput
}

function version(ctx: Ctx): string {
  return ctx.store.rng.hex(40)
}

export function createGist(
  ctx: Ctx,
  owner: User,
  input: { description?: string | null; public?: boolean; files: unknown },
): Gist {
  const files = checkFiles(input.files, true)
  const now = ctx.emulator.clock.iso()
  const gist: Gist = {
    id: ctx.store.rng.hex(32),
    ownerId: owner.id,
    description: input.description ?? null,
    public: input.public ?? false,
    files: new Map(Object.entries(files).map(([name, f]) => [name, String(f!.content)])),
    createdAt: now,
    updatedAt: now,
    history: [{ version: version(ctx), committedAt: now, userId: owner.id }],
  }
  ctx.store.gists.set(gist.id, gist)
  return gist
}

export function updateGist(
  ctx: Ctx,
  actor: User,
  gist: Gist,
  input: { description?: string | null; files?: unknown },
): Gist {
  if (gist.ownerId !== actor.id) throw new ApiError(404, 'Not Found')
  const files = checkFiles(input.files, false)
  for (const [name, f] of Object.entries(files)) {
    if (f === null) {
      gist.files.delete(name)
      continue
    }
    const existing = gist.files.get(name)
    const target = typeof f.filename === 'string' && f.filename ? f.filename : name
    const content = typeof f.content === 'string' ? f.content : existing
    if (content === undefined)
      throw validationFailed([{ resource: 'Gist', code: 'missing_field', field: `files.${name}.content` }])
    gist.files.delete(name)
    gist.files.set(target, content)
  }
  if (gist.files.size === 0)
    throw validationFailed([{ resource: 'Gist', code: 'missing_field', field: 'files' }])
  if (input.description !== undefined) gist.description = input.description
  gist.updatedAt = ctx.emulator.clock.iso()
  gist.history.push({ version: version(ctx), committedAt: gist.updatedAt, userId: actor.id })
  return gist
}
