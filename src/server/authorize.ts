// Enforces the policy table (engine/access/policy.ts) in one place. As each route is added, its
// rule is looked up by operationId and attached to the route (a route without one fails at once,
// like the API contract's check); on each request, after authentication and before the body is
// read, the caller is checked against it:
//   - a role below the rule's: 403 ROLE_FORBIDDEN naming the role needed;
//   - an agent key on a route agents may not call: 403 AGENT_KEY_FORBIDDEN;
//   - another workspace's objects are never reached: every query is of the caller's workspace, so
//     they answer 404 like objects that do not exist.
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify'
import { type Caller, roleAtLeast } from '../engine/access/caller.ts'
import { type Rule, ruleOf } from '../engine/access/policy.ts'
import { PatchbayError } from '../kit/errors.ts'

const PUBLIC_HIDDEN: Rule = { access: 'public', why: 'a hidden route declared public (config.public)' }

const where = (route: RouteOptions) => `${[route.method].flat().join(',')} ${route.url}`

/**
 * The rule of a route as it is added; throws (failing the start) when the table has none. A hidden
 * route without an operation may be made public by a plugin's own onRoute hook, which runs after
 * this one: undefined, and checked again when the server is ready.
 */
function ruleOfRoute(route: RouteOptions): Rule | undefined {
  const schema = route.schema as { hide?: boolean; operationId?: string } | undefined
  const config = (route.config ?? {}) as { public?: boolean; operation?: string }
  const id = schema?.operationId ?? config.operation
  if (!id) return config.public ? PUBLIC_HIDDEN : undefined
  const rule = ruleOf(id)
  if (!rule)
    throw new Error(
      `Access policy: ${where(route)} (${id}) has no rule; add "${id}" to POLICY in src/engine/access/policy.ts (the least role allowed, and whether agent keys may call it).`,
    )
  if (config.public && rule.access !== 'public')
    throw new Error(
      `Access policy: ${where(route)} (${id}) says config.public but its rule in src/engine/access/policy.ts is "${rule.access}"; the table decides.`,
    )
  return rule
}

/** True for a route that answers without credentials. */
export const isPublic = (req: FastifyRequest): boolean => {
  const config = req.routeOptions.config
  return config?.public === true || config?.rule?.access === 'public'
}

/** Why the caller may not call the route, or undefined when it may. */
export function refusal(req: FastifyRequest): Error | undefined {
  const rule = req.routeOptions.config?.rule
  if (!rule || rule.access === 'public' || isPublic(req)) return
  const c = req.caller as Caller | null
  const operation = req.routeOptions.schema?.operationId ?? req.routeOptions.config?.operation
  if (rule.access === 'signedIn') {
    if (c?.kind === 'agentKey') return agentKeyForbidden(operation)
    if (!c && !req.person) return new PatchbayError('UNAUTHORIZED', 'This request has no credentials.')
    return
  }
  if (!c) {
    if (req.person)
      return new PatchbayError('WORKSPACE_NOT_FOUND', 'You belong to no workspace yet.', {
        hint: 'Create one (POST /v1/workspaces) or accept an invitation.',
      })
    return new PatchbayError('UNAUTHORIZED', 'This request has no credentials.')
  }
  if (c.kind === 'agentKey') return rule.agents ? undefined : agentKeyForbidden(operation)
  if (!roleAtLeast(c.role, rule.role))
    return new PatchbayError(
      'ROLE_FORBIDDEN',
      `${operation ?? 'This action'} needs the role ${rule.role} or above in this workspace; ${c.kind === 'person' ? 'your role' : "this key's role"} is ${c.role}.`,
      {
        hint: `Ask an admin or owner of the workspace for the role ${rule.role}${c.kind === 'person' ? '' : ' (or a key with it)'}, or for them to do it.`,
      },
    )
}

const agentKeyForbidden = (operation: string | undefined) =>
  new PatchbayError(
    'AGENT_KEY_FORBIDDEN',
    `${operation ?? 'This action'} is not open to agent keys; it needs a workspace key or a signed-in member.`,
  )

/**
 * An agent key acts only on its own agent: the handlers of routes about one agent call this with
 * that agent's id. Workspace keys and people pass (the policy table already checked their role).
 */
export function requireOwnAgent(caller: Caller, agentId: string): void {
  if (caller.kind !== 'agentKey' || caller.agentId === agentId) return
  throw new PatchbayError(
    'AGENT_KEY_FORBIDDEN',
    `This agent key acts only as its own agent (${caller.agentId}); the request is about agent ${agentId}.`,
    { hint: 'Use the agent’s own id, or a workspace key.' },
  )
}

/** Attaches each route's rule as it is added (call before any route is). */
export function attachRules(app: FastifyInstance): void {
  const undeclared: RouteOptions[] = []
  app.addHook('onRoute', (route: RouteOptions) => {
    const rule = ruleOfRoute(route)
    if (rule) route.config = { ...route.config, rule }
    else undeclared.push(route)
  })
  app.addHook('onReady', async () => {
    const still = undeclared.filter((r) => !r.config?.public).map(where)
    if (still.length > 0)
      throw new Error(
        `Access policy: ${still.join('; ')} has no operationId and is not public; give it config.operation (the operation whose rule it shares) or config.public. See src/engine/access/policy.ts.`,
      )
  })
}

/** Checks every request against its route's rule (call right after installAuthentication). */
export function enforcePolicy(app: FastifyInstance): void {
  // After authentication (its onRequest hook was added first), before the body is read.
  app.addHook('onRequest', (req, _reply, done) => {
    if (req.is404) return done()
    done(refusal(req))
  })
  // The handler of a route that is not public never runs without its check, whatever hook order a
  // plugin brings.
  app.addHook('preHandler', (req, _reply, done) => {
    const rule = req.routeOptions.config?.rule
    if (req.is404 || isPublic(req)) return done()
    if (!rule) return done(new PatchbayError('INTERNAL', 'This route has no access rule.'))
    if (!req.caller && !req.person)
      return done(new PatchbayError('UNAUTHORIZED', 'This request has no credentials.'))
    done(refusal(req))
  })
}
