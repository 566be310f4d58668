// Who is calling: default-deny authentication, resolved once per request into `req.caller` (see
// engine/access/caller.ts). The route's rule (the policy table, engine/access/policy.ts, attached to
// the route by server/authorize.ts) says whether credentials are needed at all: a public route
// answers without; every other needs a workspace key, an agent key, or a signed-in person. The
// decision reads the route the router matched, after it decoded and normalized the path, never
// the raw request line: `/%761/agents` is `/v1/agents` and needs a key exactly like it.
//
// Which workspace a request acts on:
// - a workspace or agent key: its own workspace, always (a Patchbay-Workspace header naming another
//   is answered 404 WORKSPACE_NOT_FOUND, as for a workspace that does not exist);
// - a signed-in person: the workspace the Patchbay-Workspace header names, if they are a member of
//   it (else 404 WORKSPACE_NOT_FOUND), or without the header their first (oldest) membership's.
//
// People are recognised by PersonAuthenticators (sessions, personal keys) given to
// installAuthentication: each tells who the person is; memberships and roles are looked up here.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Caller } from '../engine/access/caller.ts'
import type { PersonWorkspaces } from '../engine/access/memberships.ts'
import { POLICY, type Rule } from '../engine/access/policy.ts'
import type { Engine } from '../engine/engine.ts'
import { PatchbayError } from '../kit/errors.ts'
import { isPublic } from './authorize.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Who is calling and on which workspace. Set before the handler on every route that is not
     * public; on a `signedIn` route it is null for a person who belongs to no workspace yet.
     */
    caller: Caller
    /** The signed-in person (a session or personal key), or null for a workspace or agent key. */
    person: PersonIdentity | null
  }
  interface FastifyContextConfig {
    /** A hidden route that answers without credentials (it checks its callers by other means, or has none). */
    public?: boolean
    /** A hidden route that is not public: the operation whose rule it shares (e.g. `callMcp`). */
    operation?: string
    /** The route's rule from the policy table (set by server/authorize.ts as the route is added). */
    rule?: Rule
  }
}

/** The rule of /mcp (the only route an MCP access token may call). */
const MCP_RULE: Rule = POLICY.callMcp

/** The route config of a hidden route anyone may reach. */
export const publicRoute = { public: true } as const

/** The header a signed-in person names the workspace with. */
export const WORKSPACE_HEADER = 'patchbay-workspace'

/** Who a PersonAuthenticator found. */
export interface PersonIdentity {
  readonly personId: string
  /** The session the request came with (null for a personal key). */
  readonly sessionId: string | null
  /** The personal key the request came with (null for a session). */
  readonly keyId: string | null
}

/**
 * Recognises a person's credentials on a request (a session cookie, a personal key). Returns who
 * it is; undefined when the request carries none of its credentials (the next authenticator, then
 * workspace and agent keys, are tried); throws a PatchbayError (UNAUTHORIZED …) for credentials of
 * its kind that are not valid. Return the identity itself, not a promise, when it is cached: the
 * hot path makes no promise per cached request.
 */
export interface PersonAuthenticator {
  authenticate(
    req: FastifyRequest,
    bearer: string | null,
  ): PersonIdentity | undefined | Promise<PersonIdentity | undefined>
}

/**
 * Recognises an OAuth access token of an MCP client at /mcp (server/mcp/authorization-server.ts):
 * the caller it acts as (its grant's agent), undefined when it is no such token, or a rejection
 * saying why a token of ours is refused.
 */
export interface McpTokenAuthenticator {
  callerOfToken(token: string, log: FastifyRequest['log']): Promise<Caller | undefined>
}

export interface AuthenticationOptions {
  /** Sign-in's authenticators, asked in order before workspace and agent keys. */
  people?: readonly PersonAuthenticator[]
  /** MCP clients' access tokens, asked at /mcp for a bearer that is not a Patchbay key (pb_…). */
  mcpTokens?: McpTokenAuthenticator
}

const unauthorized = (message: string) =>
  new PatchbayError('UNAUTHORIZED', message, {
    hint: 'Send Authorization: Bearer <key> with a workspace or agent key, or sign in.',
  })

const workspaceNotFound = (id: string, why: string) =>
  new PatchbayError('WORKSPACE_NOT_FOUND', `There is no workspace "${id}" ${why}.`)

/** How often a key's "last used" time is written at most (per key and instance). */
const LAST_USED_EVERY_MS = 60_000
const CACHE_MS = 5_000

interface CachedKey {
  caller: Caller
  at: number
  /** Epoch ms after which the key is refused (Infinity: no expiry). */
  expiresAt: number
}

/** The workspace a request names: by its path (/v1/workspaces/{id}…) or the Patchbay-Workspace header. */
function namedWorkspace(req: FastifyRequest): string | undefined {
  const rule = req.routeOptions.config?.rule
  if (rule?.access === 'workspace' && rule.workspaceParam) {
    const id = (req.params as Record<string, string | undefined>)[rule.workspaceParam]
    if (id) return id
  }
  const header = req.headers[WORKSPACE_HEADER]
  return typeof header === 'string' ? header : undefined
}

/** The caller of a person in the workspace the request names (or their first). */
export function personCaller(
  person: PersonIdentity,
  workspaces: PersonWorkspaces,
  named: string | undefined,
) {
  const workspaceId = named ?? workspaces.first
  if (workspaceId === null) return null
  const role = workspaces.roles.get(workspaceId)
  if (!role) throw workspaceNotFound(workspaceId, 'that you belong to')
  const caller: Caller = {
    workspaceId,
    kind: 'person',
    role,
    keyId: person.keyId,
    personId: person.personId,
    agentId: null,
  }
  return caller
}

export function installAuthentication(
  app: FastifyInstance,
  engine: Engine,
  opts: AuthenticationOptions = {},
): void {
  const people = opts.people ?? []
  const mcpTokens = opts.mcpTokens
  app.decorateRequest('caller', null as unknown as Caller)
  app.decorateRequest('person', null)
  const cache = new Map<string, CachedKey>()
  const lastUsedWritten = new Map<string, number>()
  // A revoked key is dropped from the cache at once, so it is refused from the next request on.
  // An empty list means "anything may have changed" (changes were missed while the channel was
  // down): every cached key is looked up again.
  // Revocations heard: a look-up begun before one is not cached after it (it may have read the
  // key before it was revoked).
  let revocations = 0
  engine.keyRevocations.subscribe((keyIds) => {
    revocations++
    if (keyIds.length === 0) {
      cache.clear()
      return
    }
    const revoked = new Set(keyIds)
    for (const [key, hit] of cache) if (hit.caller.keyId && revoked.has(hit.caller.keyId)) cache.delete(key)
  })

  /** Records that a key was used, at most once a minute per key: not a write per request. */
  const markUsed = (req: FastifyRequest, keyId: string, storedAt: string | null) => {
    const now = Date.now()
    const last = lastUsedWritten.get(keyId) ?? (storedAt ? Date.parse(storedAt) : 0)
    if (now - last < LAST_USED_EVERY_MS) return
    if (lastUsedWritten.size > 10_000) lastUsedWritten.clear()
    lastUsedWritten.set(keyId, now)
    engine.apiKeys
      .touch(keyId, new Date(now).toISOString())
      .catch((err) => req.log.warn({ err, keyId }, 'could not record when an API key was last used'))
  }

  /** The caller of a key not in the cache (or cached too long ago), from the store. */
  const lookUp = async (req: FastifyRequest, key: string): Promise<CachedKey> => {
    const heard = revocations
    const row = await engine.apiKeys.findByKey(key)
    if (!row || row.revoked_at) {
      cache.delete(key)
      throw unauthorized(row ? 'This API key has been revoked.' : 'This API key is not known.')
    }
    const hit: CachedKey = {
      caller: {
        workspaceId: row.workspace_id,
        kind: row.kind === 'agent' ? 'agentKey' : 'workspaceKey',
        role: row.kind === 'agent' ? null : row.role,
        keyId: row.id,
        personId: row.created_by,
        agentId: row.agent_id,
      },
      at: Date.now(),
      expiresAt: row.expires_at ? Date.parse(row.expires_at) : Number.POSITIVE_INFINITY,
    }
    if (heard === revocations) {
      if (cache.size > 10_000) cache.clear()
      cache.set(key, hit)
    }
    markUsed(req, row.id, row.last_used_at)
    return hit
  }

  /** Sets the caller of a key (cached or just looked up), or says why it cannot. */
  const callerOfKey = (req: FastifyRequest, hit: CachedKey): Error | undefined => {
    if (Date.now() >= hit.expiresAt)
      return new PatchbayError(
        'KEY_EXPIRED',
        `This workspace key expired at ${new Date(hit.expiresAt).toISOString()}.`,
      )
    const named = namedWorkspace(req)
    if (named !== undefined && named !== hit.caller.workspaceId)
      return workspaceNotFound(named, 'for this key (a key acts only on its own workspace)')
    req.caller = hit.caller
    if (hit.caller.keyId) markUsed(req, hit.caller.keyId, null)
  }

  /** Sets the caller of a signed-in person in the workspace the request names. */
  const callerOfPerson = (req: FastifyRequest, person: PersonIdentity, done: (err?: Error) => void) => {
    req.person = person
    const named = namedWorkspace(req)
    const choose = (workspaces: PersonWorkspaces) => {
      const caller = personCaller(person, workspaces, named)
      if (caller) req.caller = caller
    }
    const workspaces = engine.memberships.of(person.personId)
    if (!(workspaces instanceof Promise)) {
      try {
        choose(workspaces)
      } catch (err) {
        return done(err as Error)
      }
      return done()
    }
    workspaces.then(choose).then(
      () => done(),
      (err: Error) => done(err),
    )
  }

  const callerOfBearer = (req: FastifyRequest, bearer: string | null, done: (err?: Error) => void) => {
    if (bearer === null) return done(unauthorized('This request has no API key.'))
    // A short-lived cache keeps the hash lookup off the hot path; revocation through this
    // process clears it at once, other instances see it within a few seconds.
    const hit = cache.get(bearer)
    if (hit && Date.now() - hit.at < CACHE_MS) return done(callerOfKey(req, hit))
    // An MCP client's access token, read from the store at each request (never cached): a grant
    // revoked on any instance is refused at the next request.
    if (mcpTokens && !bearer.startsWith('pb_') && req.routeOptions.config?.rule === MCP_RULE) {
      mcpTokens.callerOfToken(bearer, req.log).then(
        (caller) => {
          if (!caller)
            return lookUpKey(req, bearer, (err) =>
              done(
                err instanceof PatchbayError && err.code === 'UNAUTHORIZED'
                  ? unauthorized(
                      'This access token (or key) is not known: an access token lasts ten minutes (the MCP client refreshes it) and ends when its grant is revoked.',
                    )
                  : err,
              ),
            )
          const named = namedWorkspace(req)
          if (named !== undefined && named !== caller.workspaceId)
            return done(workspaceNotFound(named, 'for this access token (it acts only as its own agent)'))
          req.caller = caller
          done()
        },
        (err: Error) => done(err),
      )
      return
    }
    lookUpKey(req, bearer, done)
  }

  const lookUpKey = (req: FastifyRequest, bearer: string, done: (err?: Error) => void) => {
    lookUp(req, bearer).then(
      (looked) => done(callerOfKey(req, looked)),
      (err: Error) => done(err),
    )
  }

  /** Asks the person authenticators from `i` on, then workspace and agent keys. */
  const resolve = (req: FastifyRequest, bearer: string | null, i: number, done: (err?: Error) => void) => {
    for (; i < people.length; i++) {
      let found: ReturnType<PersonAuthenticator['authenticate']>
      try {
        found = people[i].authenticate(req, bearer)
      } catch (err) {
        return done(err as Error)
      }
      if (found instanceof Promise) {
        const next = i + 1
        found.then(
          (person) => (person ? callerOfPerson(req, person, done) : resolve(req, bearer, next, done)),
          (err: Error) => done(err),
        )
        return
      }
      if (found) return callerOfPerson(req, found, done)
    }
    callerOfBearer(req, bearer, done)
  }

  // Callback hooks, not async ones: a cached key is answered without a promise per request.
  app.addHook('onRequest', (req: FastifyRequest, _reply, done) => {
    // No route matched: the not-found handler answers, and it needs no caller.
    if (req.is404 || isPublic(req)) return done()
    const header = req.headers.authorization
    let bearer: string | null = null
    if (header) {
      const match = /^Bearer\s+(\S+)$/i.exec(header)
      if (!match) return done(unauthorized('The Authorization header must be "Bearer <key>".'))
      bearer = match[1]
    }
    resolve(req, bearer, 0, done)
  })
}
