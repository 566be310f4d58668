// Scope at every moment. A trigger's configuration is checked against the agent's scope when the
// trigger is made; this checks each event against the agent's scope and connections as they are
// when the event is matched (webhook deliveries, inbox drains and polls alike), so narrowing a
// scope or taking a connection away stops deliveries at once.
//
// The attribution contract, for connectors: an event names the place it concerns in its refs,
// keyed by its connector's place kind (kit/define.ts PlaceKind; access/places.ts); the
// trigger's `eventScope` says how that is held against the scope: `place` (default) needs the
// place in the scope, `group` also lets in a place whose group the scope holds (a repository of
// an owner the scope holds, made since), `account` is for events about the connection's account
// itself. A thing of an account that lies in no place (a project's draft issue) names its
// place's group instead (`refs.owner`): it is in a scope that holds any place of that group.
// An event that names no place is not delivered by a `place` or `group` trigger, so a connector
// that cannot attribute an event keeps it from scoped agents rather than leaking it. A delivery
// that does not name its place can have it read before matching (WebhookSupport.attribute,
// events/attribution.ts); when that read fails the event carries why (`refs.unattributed`) and
// names no place.
import type { NormalizedEvent, TriggerDefinition } from '../../kit/define.ts'
import type { Places, Scope } from '../access/places.ts'

export interface EventScopeAgent {
  scope: Scope
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
  places: Places,
  agent: EventScopeAgent,
  trigger: { def: Pick<TriggerDefinition, 'eventScope'>; connectionId: string },
  event: Pick<NormalizedEvent, 'refs'>,
): string | null {
  const withdrawn = connectionWithdrawn(agent, trigger.connectionId)
  if (withdrawn) return withdrawn
  const mode = trigger.def.eventScope ?? 'place'
  if (mode === 'account') return null
  const refs = event.refs ?? {}
  // The place it names (of the first kind it names one of), else the group it names.
  for (const kind of places.kinds) {
    const id = refs[kind.kind]
    if (typeof id !== 'string' || !id) continue
    const place = { kind: kind.kind, id }
    const group = mode === 'group' ? places.groupOfPlace(place) : undefined
    const inScope =
      places.contains(agent.scope, place) ||
      (group !== undefined && places.groupContains(agent.scope, group.kind, group.value))
    return inScope ? null : `${kind.kind} ${id} is outside the agent's scope`
  }
  for (const kind of places.kinds) {
    if (!kind.group) continue
    const value = refs[kind.group.kind]
    if (typeof value !== 'string' || !value) continue
    return places.groupContains(agent.scope, kind.group.kind, value)
      ? null
      : `the agent's scope holds no ${kind.kind} of ${value}`
  }
  const { unattributed } = refs
  if (typeof unattributed === 'string' && unattributed)
    return `the event's ${places.names()} could not be read (${unattributed})`
  return `the event names no ${places.names()} the scope could allow`
}
