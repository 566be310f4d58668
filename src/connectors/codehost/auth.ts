// How a code-host account is connected: a sign-in through the code-host's pages in a pop-up
// (the OAuth web flow, asking for repositories, issues and pull requests, workflows, snippets and
// projects), or an access token — fine-grained tokens (`codehost_pat_…`) reach only the
// repositories they were made for, so a connection made with one reaches nothing else.
import { z } from 'zod'
import type { AuthMethod, Credentials, OutgoingRequest } from '../../kit/define.ts'
import { oauth2WebFlow } from '../../kit/oauth2.ts'

export const CODEHOST_MEDIA_TYPE = 'application/vnd.codehost+json'

/** What the sign-in asks for: read and write repositories (with issues and pull requests), workflows, snippets, projects. */
export const CODEHOST_SCOPES = 'repo workflow gist project admin:org_hook'

export type TokenKind = 'oauth' | 'classic' | 'fine_grained' | 'unknown'

export function tokenKind(token: string): TokenKind {
  if (token.startsWith('codehost_pat_')) return 'fine_grained'
  if (token.startsWith('cho_')) return 'oauth'
  if (token.startsWith('chp_')) return 'classic'
  return 'unknown'
}

export const codehostSignIn: AuthMethod = {
  id: 'oauth2',
  name: 'Sign in with Code-Host (pop-up)',
  description:
    'The user signs in at the code-host in a pop-up and grants access to read and write repositories, manage issues and pull requests, and use workflows, and watch its organizations’ repositories and projects (scopes: repo workflow gist project admin:org_hook). Start with POST /v1/connections/oauth/start {"connector":"codehost","mode":"popup"}; the account then appears as a connection under its login.',
  oauth: oauth2WebFlow({
    authorizePath: '/login/oauth/authorize',
    tokenPath: '/login/oauth/access_token',
    scopes: CODEHOST_SCOPES,
    credentials: (t) => ({ token: t.access_token, tokenKind: 'oauth', scope: t.scope ?? '' }),
  }),
}

export const codehostToken: AuthMethod = {
  id: 'token',
  name: 'Access token',
  description:
    'A code-host access token. A fine-grained token (codehost_pat_…) is made for one owner and selected repositories: the connection — and every agent using it — reaches only those (others answer 404). A classic token (chp_…) reaches what its scopes allow (repo, workflow, gist, project, admin:repo_hook for repository triggers, admin:org_hook for an organization’s).',
  credentials: z.object({
    token: z
      .string()
      .min(1)
      .regex(/^\S+$/, 'must be a token without spaces')
      .describe('The access token: codehost_pat_… (fine-grained), chp_… (classic) or cho_… (OAuth).'),
  }),
}

export function authorizeCodehost(req: OutgoingRequest, credentials: Credentials): void {
  // Token exchanges of the sign-in carry no token (and ask for plain JSON themselves).
  if (!credentials.token) return
  req.headers.authorization = `Bearer ${credentials.token}`
  if (!req.headers.accept || req.headers.accept === 'application/json')
    req.headers.accept = CODEHOST_MEDIA_TYPE
  req.headers['x-codehost-api-version'] ??= '2022-11-28'
}

const TOKEN_KINDS: Record<TokenKind, string> = {
  oauth: 'sign-in (OAuth)',
  classic: 'classic token',
  fine_grained: 'fine-grained token',
  unknown: 'token of an unknown kind',
}

/** The token's kind and what it reaches, to tell connections of one account apart. */
export function describeCodehostCredentials(credentials: Credentials): Record<string, string> {
  const kind = (credentials.tokenKind as TokenKind | undefined) ?? tokenKind(credentials.token ?? '')
  return {
    tokenKind: TOKEN_KINDS[kind] ?? kind,
    repositories:
      kind === 'fine_grained'
        ? credentials.repositories
          ? `only ${credentials.repositories}`
          : 'only the repositories the token was made for'
        : `every repository the account reaches${credentials.scope ? ` (scopes: ${credentials.scope})` : ''}`,
  }
}
