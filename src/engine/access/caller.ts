// Who is calling, resolved once per request (server/authenticate.ts) and handed to the engine:
// which workspace the request acts on, with which role, and through what.
import type { Role } from '../../store/schema.ts'

export type { Role }

/**
 * How a caller proved who it is:
 * - `workspaceKey`: a workspace API key, with a role, acting on its own workspace only;
 * - `agentKey`: an agent's key, acting as that agent (no role: agents have their own, fixed rights);
 * - `person`: a signed-in person (a session, or a personal key), acting on the workspace the request
 *   names (`Patchbay-Workspace`) with the role of their membership there.
 */
export type CallerKind = 'workspaceKey' | 'agentKey' | 'person'

export interface Caller {
  readonly workspaceId: string
  readonly kind: CallerKind
  /** The role in `workspaceId`; null for agent keys. */
  readonly role: Role | null
  /** The API key that authenticated the request; null for a person's session. */
  readonly keyId: string | null
  /** The person: the signed-in one, or the one who made the key (null for keys made by no one). */
  readonly personId: string | null
  /**
   * The agent the caller acts as: an agent key's own, or the one a workspace key or person acts as
   * (MCP with `?agent=`, a tool run; see asAgent). The engine scopes everything a caller with an
   * agent does by that agent's connections and scopes.
   */
  readonly agentId: string | null
}

/** The roles, weakest first: a role may do what any role before it may. */
export const ROLES: readonly Role[] = ['viewer', 'member', 'admin', 'owner']

const RANK: Record<Role, number> = { viewer: 1, member: 2, admin: 3, owner: 4 }

/** True when `role` is `least` or stronger. */
export const roleAtLeast = (role: Role | null, least: Role): boolean =>
  role !== null && RANK[role] >= RANK[least]

/**
 * The id records keep of who called (step runs, credit ledger): the key's id, `person:<id>` for a
 * person signed in without a key, `agent:<id>` for a run Patchbay makes for an agent.
 */
export const callerId = (caller: Caller): string =>
  caller.keyId ?? (caller.personId ? `person:${caller.personId}` : `agent:${caller.agentId}`)

/**
 * The caller acting as an agent (MCP with `?agent=`, a tool run): the engine scopes whatever it
 * does by the agent's connections and scopes, as for the agent's own key. An agent key stays itself.
 */
export const asAgent = (caller: Caller, agentId: string): Caller =>
  caller.kind === 'agentKey' ? caller : { ...caller, agentId }

/** An agent acting with no one calling: the runs Patchbay makes for it (a trigger's tool run). */
export const agentItself = (workspaceId: string, agentId: string): Caller => ({
  workspaceId,
  kind: 'agentKey',
  role: null,
  keyId: null,
  personId: null,
  agentId,
})
