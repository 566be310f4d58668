// Argument helpers of the control API.
import { ApiError, type Ctx } from './context.ts'
import type { Conclusion, Repo, User } from './store.ts'

export const CONCLUSIONS: Conclusion[] = [
  'success',
  'failure',
  'cancelled',
  'skipped',
  'timed_out',
  'neutral',
]

export function str(b: Record<string, any>, key: string, required = false): string | undefined {
  const v = b[key]
  if (v === undefined || v === null) {
    if (required) throw new ApiError(422, `"${key}" is required`)
    return undefined
  }
  return String(v)
}

export function conclusionOf(v: unknown): Conclusion {
  if (typeof v !== 'string' || !CONCLUSIONS.includes(v as Conclusion))
    throw new ApiError(422, `"conclusion" must be one of ${CONCLUSIONS.join(', ')}`)
  return v as Conclusion
}

export function userOf(ctx: Ctx, login: unknown, fallback?: User): User {
  if (login === undefined || login === null) {
    if (fallback) return fallback
    throw new ApiError(422, '"as" is required')
  }
  const u = ctx.store.userByLogin(String(login))
  if (!u) throw new ApiError(404, `No user ${login}`)
  return u
}

/** The repository named by `repository: "owner/name"` or by `owner` and `repo`. */
export function repoOf(ctx: Ctx, b: Record<string, any>): Repo {
  const full = typeof b.repository === 'string' ? b.repository.split('/') : [b.owner, b.repo]
  const repo = full[0] && full[1] ? ctx.store.repoByName(String(full[0]), String(full[1])) : undefined
  if (!repo)
    throw new ApiError(404, `No repository ${full.filter(Boolean).join('/') || '(owner/repo missing)'}`)
  return repo
}

export function issueOf(repo: Repo, n: unknown) {
  const issue = repo.issues.get(Number(n))
  if (!issue) throw new ApiError(404, `No issue or pull request #${n}`)
  return issue
}
