// Who is calling and what their token lets them touch. Classic and OAuth tokens are limited by
// scopes; fine-grained tokens by one owner, a repository selection and per-area permissions.
import type { FastifyRequest } from 'fastify'
import { ApiError, type Ctx, DOCS, notFound } from './context.ts'
import { roleAtLeast, roleOf } from './permissions.ts'
import type { Repo, Role, Token, User } from './store.ts'

export interface Principal {
  user: User | null
  token: Token | null
}

const principals = new WeakMap<FastifyRequest, Principal>()

export function setPrincipal(req: FastifyRequest, p: Principal): void {
  principals.set(req, p)
}

export function principalOf(req: FastifyRequest): Principal {
  return principals.get(req) ?? { user: null, token: null }
}

/** The token of an Authorization header: null when absent, 'bad' when unknown or expired. */
export function tokenFromHeader(ctx: Ctx, header: string | undefined): Token | null | 'bad' {
  if (!header) return null
  const m = /^(bearer|token)\s+(\S+)\s*$/i.exec(header)
  if (!m) return 'bad'
  const t = ctx.store.tokens.get(m[2])
  if (!t) return 'bad'
  if (t.expiresAt !== null && t.expiresAt <= ctx.emulator.clock.now()) return 'bad'
  return t
}

// A granted scope also grants the narrower scopes under it.
const IMPLIED: Record<string, string[]> = {
  repo: ['public_repo', 'repo:status', 'repo_deployment', 'repo:invite', 'security_events'],
  user: ['read:user', 'user:email', 'user:follow'],
  'admin:repo_hook': ['write:repo_hook', 'read:repo_hook'],
  'write:repo_hook': ['read:repo_hook'],
  'admin:org': ['write:org', 'read:org'],
  'write:org': ['read:org'],
  'admin:org_hook': [],
  project: ['read:project'],
  'write:discussion': ['read:discussion'],
}

export function expandScopes(scopes: string[]): Set<string> {
  const out = new Set<string>()
  for (const s of scopes) {
    out.add(s)
    for (const i of IMPLIED[s] ?? []) out.add(i)
  }
  return out
}

export function hasScope(t: Token, scope: string): boolean {
  return expandScopes(t.scopes).has(scope)
}

export function hasAnyScope(t: Token, scopes: string[]): boolean {
  return scopes.some((s) => hasScope(t, s))
}

export function fgAllows(t: Token, perm: string, level: 'read' | 'write'): boolean {
  if (t.permissions === null) return true
  if (perm === 'metadata' && level === 'read') return true
  const granted = t.permissions[perm]
  return granted === 'write' || (granted === 'read' && level === 'read')
}

export function requireUser(req: FastifyRequest): User {
  const p = principalOf(req)
  if (!p.user) throw new ApiError(401, 'Requires authentication')
  return p.user
}

/**
 * Account-level endpoints (gists, stars, account hooks): classic and OAuth tokens need one of
 * `scopes` (404 otherwise, as the code-host hides what a token may not see); fine-grained tokens
 * need the account permission.
 */
export function requireAccountAccess(
  req: FastifyRequest,
  opts: { scopes?: string[]; fg?: [string, 'read' | 'write']; fgForbidden?: boolean },
): User {
  const user = requireUser(req)
  const t = principalOf(req).token
  if (!t) return user
  if (t.kind === 'fine_grained') {
    if (opts.fgForbidden) throw new ApiError(403, 'Resource not accessible by personal access token')
    if (opts.fg && !fgAllows(t, opts.fg[0], opts.fg[1]))
      throw new ApiError(403, 'Resource not accessible by personal access token')
    return user
  }
  if (opts.scopes?.length && !hasAnyScope(t, opts.scopes))
    throw new ApiError(404, 'Not Found', undefined, undefined, {
      'x-accepted-oauth-scopes': opts.scopes.join(', '),
    })
  return user
}

const MOVED_DOCS = `${DOCS}/guides/best-practices-for-using-the-rest-api#follow-redirects`

export interface RepoNeed {
  /** The repository role needed (default read). */
  role?: Role
  /** A change, even when any reader may make it (opening an issue on a public repository). */
  write?: boolean
  /** Fine-grained permission area and level. */
  fg?: [string, 'read' | 'write']
  /** Classic/OAuth scopes accepted for this call instead of repo/public_repo. */
  scopes?: string[]
}

/** Whether the principal can see the repository at all (fine-grained selection, scopes, role). */
export function canSee(ctx: Ctx, p: Principal, repo: Repo): boolean {
  const t = p.token
  if (t?.kind === 'fine_grained' && (t.ownerId !== repo.ownerId || !t.repoIds?.includes(repo.id)))
    return false
  if (t && t.kind !== 'fine_grained' && repo.private && !hasScope(t, 'repo')) return false
  return roleOf(ctx.store, repo, p.user?.id ?? null) !== null
}

export function repoFor(
  ctx: Ctx,
  req: FastifyRequest,
  owner: string,
  name: string,
  need: RepoNeed = {},
): Repo {
  const repo = ctx.store.repoByName(owner, name)
  const p = principalOf(req)
  if (!repo) {
    // A renamed repository answers from its old name with a redirect to its id, as upstream:
    // 301 for reads, 307 for the rest (a client repeats the method there).
    const moved = ctx.store.renamedRepo(owner, name)
    if (!moved || !canSee(ctx, p, moved)) throw notFound()
    const rest = /^\/repos\/[^/]+\/[^/?]+(.*)$/.exec(req.url)?.[1] ?? ''
    const location = `${ctx.url}/repositories/${moved.id}${rest}`
    throw new ApiError(
      req.method === 'GET' || req.method === 'HEAD' ? 301 : 307,
      'Moved Permanently',
      undefined,
      MOVED_DOCS,
      {
        location,
      },
    )
  }
  const t = p.token
  const role = need.role ?? 'read'
  const write = need.write || role !== 'read' || need.fg?.[1] === 'write'
  if (!canSee(ctx, p, repo)) throw notFound()
  if (write && !p.user) throw new ApiError(401, 'Requires authentication')
  if (t?.kind === 'fine_grained') {
    if (need.fg && !fgAllows(t, need.fg[0], need.fg[1]))
      throw new ApiError(403, 'Resource not accessible by personal access token')
  } else if (t && write) {
    const accepted = need.scopes ?? (repo.private ? ['repo'] : ['repo', 'public_repo'])
    if (!hasAnyScope(t, accepted))
      throw new ApiError(404, 'Not Found', undefined, undefined, {
        'x-accepted-oauth-scopes': accepted.join(', '),
      })
  }
  const actual = roleOf(ctx.store, repo, p.user?.id ?? null)
  if (!roleAtLeast(actual, role)) {
    if (role === 'admin') throw new ApiError(403, 'Must have admin rights to Repository.')
    throw new ApiError(403, `Must have ${role === 'triage' ? 'triage' : 'push'} access to repository.`)
  }
  return repo
}

/** The repository named by the route's `:owner/:repo`, checked against `need`. */
export function repoParam(ctx: Ctx, req: FastifyRequest, need: RepoNeed = {}): Repo {
  const p = req.params as Record<string, string>
  return repoFor(ctx, req, p.owner, p.repo, need)
}
