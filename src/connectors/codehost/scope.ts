// How an agent's repository scope applies to the code-host: a repository is its own place
// (owner/repo), so ready-made steps need no lookups; an API Call is attributed to the repository
// its path names (/repos/{owner}/{repo}/…, /user/starred/{owner}/{repo}) or, for an issue search,
// to its repo: qualifiers. Anything else (/user, /gists, /graphql, a search by user: or org:)
// names no repository and is refused to a scoped agent.
import type { ScopeSupport, StepContext } from '../../kit/define.ts'
import { parseEndpointPath } from '../../kit/endpoint-path.ts'
import { PatchbayError } from '../../kit/errors.ts'

/** Search qualifiers that widen a search beyond the repositories it names. */
const WIDENING = /^-?(user|org|owner):/i

/** The qualifiers of a search query, with quoted values kept whole. */
export function searchTerms(q: string): string[] {
  return q.match(/(?:[^\s"]+|"[^"]*")+/g) ?? []
}

export function repoQualifiers(q: string | undefined): string[] {
  if (!q) return []
  return searchTerms(q)
    .filter((t) => /^repo:/i.test(t))
    .map((t) => t.slice(5).replace(/^"|"$/g, ''))
    .filter(Boolean)
}

export function wideningQualifiers(q: string | undefined): string[] {
  return q ? searchTerms(q).filter((t) => WIDENING.test(t)) : []
}

export const codehostScope: ScopeSupport = {
  apiCallHint: "An agent's API Calls must address a resource in its scope, such as /repos/{owner}/{repo}/….",
  resolve: async (_http, kind, value) => {
    if (kind === 'repository') return { kind: 'repository', id: value }
    throw new PatchbayError(
      'SCOPE_KIND_UNSUPPORTED',
      `A code-host ${kind} cannot be placed in a repository.`,
      {
        hint: 'Code-host scope is expressed in repositories (owner/repo).',
      },
    )
  },

  attributeApiCall: (input: { method: string; endpoint: string }) => {
    const parsed = parseEndpointPath(input.endpoint)
    const seg = parsed.segments
    if (seg[0] === 'repos' && seg[1] && seg[2]) return [{ kind: 'repository', value: `${seg[1]}/${seg[2]}` }]
    if (seg[0] === 'user' && seg[1] === 'starred' && seg[2] && seg[3])
      return [{ kind: 'repository', value: `${seg[2]}/${seg[3]}` }]
    if (seg[0] === 'search' && seg[1] === 'issues' && seg.length === 2) {
      const q = parsed.query.q
      const repos = repoQualifiers(q)
      if (repos.length === 0 || wideningQualifiers(q).length > 0) return null
      return repos.map((value) => ({ kind: 'repository' as const, value }))
    }
    return null
  },
}

/**
 * For steps that create something no scope names yet (a repository): a scoped agent may create
 * only a repository its scope lists.
 */
export function requireInScope(ctx: StepContext, fullName: string): void {
  if (!ctx.scope) return
  if (ctx.scope.repositories.some((r) => r.toLowerCase() === fullName.toLowerCase())) return
  throw new PatchbayError(
    'SCOPE_DENIED',
    `This agent may not touch repository ${fullName}: it is outside the agent's scope (repositories: ${ctx.scope.repositories.join(', ') || 'none'}).`,
    {
      hint: 'Add the repository to the agent’s scope (PATCH /v1/agents/{id}) first, or use a workspace key.',
    },
  )
}
