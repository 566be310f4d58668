// Scope at every moment. A trigger's configuration is checked against the agent's scope when the
// trigger is made; this checks each event against the agent's scope and connections as they are
// when the event is matched (webhook deliveries, inbox drains and polls alike), so narrowing a
// scope or taking a connection away stops deliveries at once.
//
// The attribution contract, for connectors: an event names the board (`refs.board`) or the
// repository (`refs.repository`, `owner/name`) it concerns; the trigger's `eventScope` says how
// that is held against the scope (kit/define.ts): `place` (default) needs the board or
// repository in the scope, `owner` also lets in a repository whose owner the scope holds (New
// Repository), `account` is for events about the connection's account itself (New Board, New
// Snippet). A thing of an account that lies in no repository (a project's draft issue) names
// its owner instead (`refs.owner`): it is in a scope that holds any repository of that owner.
// An event that names no place is not delivered by a `place` or `owner` trigger, so a connector
// that cannot attribute an event keeps it from scoped agents rather than leaking it. A delivery
// that does not name its place can have it read before matching (WebhookSupport.attribute,
// events/attribution.ts, e.g. a project item's content → its repository); when that read fails
// the event carries why (`refs.unattributed`) and names no place.
import type { NormalizedEvent, TriggerDefinition } from '../../kit/define.ts'
import { ownerInScope, placeInScope } from '../access/scope-guard.ts'

export interface EventScopeAgent {
  scope: { boards: string[]; repositories: string[] }
  connectionIds: string[]
}

/** Why the agent may no longer hear through this connection, or null when it may. */
export function connectionWithdrawn(agent: EventScopeAgent, connectionId: string): string | null {
  return agent.connectionIds.includes(connectionId)
    ? null
    : `the agent may no longer use connection ${connectionId} (it was taken out of its connectionIds)`
}

/** Why the event may not reach the agent through this trigger, or null when it may. */
export function eventOutsideScope(
  agent: EventScopeAgent,
  trigger: { def: Pick<TriggerDefinition, 'eventScope'>; connectionId: string },
  event: Pick<NormalizedEvent, 'refs'>,
): string | null {
  const withdrawn = connectionWithdrawn(agent, trigger.connectionId)
  if (withdrawn) return withdrawn
  const mode = trigger.def.eventScope ?? 'place'
  if (mode === 'account') return null
  const { board, repository, owner, unattributed } = event.refs ?? {}
  if (typeof board === 'string' && board) {
    if (!placeInScope(agent.scope, { kind: 'board', id: board }))
      return `board ${board} is outside the agent's scope`
  } else if (typeof repository === 'string' && repository) {
    const inScope =
      placeInScope(agent.scope, { kind: 'repository', id: repository }) ||
      (mode === 'owner' && ownerInScope(agent.scope, repository.split('/')[0]))
    if (!inScope) return `repository ${repository} is outside the agent's scope`
  } else if (typeof owner === 'string' && owner) {
    if (!ownerInScope(agent.scope, owner)) return `the agent's scope holds no repository of ${owner}`
  } else if (typeof unattributed === 'string' && unattributed)
    return `the event's repository could not be read (${unattributed})`
  else return 'the event names no board or repository the scope could allow'
  return null
}
