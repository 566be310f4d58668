// Patchbay's own notices to agents (a connection that lapsed, …): events Patchbay itself
// originates about a connection, recorded and delivered through the same recorder as upstream
// events (recorder.ts), to every agent named. Each is stored as an event of the `patchbay`
// connector, its `type` the notice's (`connection.lapsed`), and pushed, streamed and replayed
// like any delivery; the pushed body's `type` is the notice's type (there is no trigger key), and
// its `data.trigger` is null.
import type { NormalizedEvent } from '../../kit/define.ts'
import type { EventSource } from './recorder.ts'

/** The connector Patchbay's own notices are stored under (no upstream has this id). */
export const NOTICE_CONNECTOR = 'patchbay'

/** A notice: its id must be unique within the workspace (a repeat is recorded once). */
export type Notice = NormalizedEvent

/**
 * The source of a notice about a connection, heard by the agents named: each gets one delivery
 * to its own target (webhook or stream) while it may still use the connection.
 */
export function noticeSource(n: {
  workspaceId: string
  connectionId: string
  /** The notice's type, e.g. `connection.lapsed` (what the events are stored under). */
  type: string
  agentIds: string[]
  receivedAt: string
}): EventSource {
  return {
    workspaceId: n.workspaceId,
    connector: NOTICE_CONNECTOR,
    connectionId: n.connectionId,
    subscriptionId: `notice:${n.type}`,
    model: 'notice',
    receivedAt: n.receivedAt,
    keepUnheard: true,
    listeners: n.agentIds.map((agentId) => ({
      // One delivery per (notice, agent).
      triggerId: `notice:${agentId}`,
      triggerKey: null,
      workspaceId: n.workspaceId,
      agentId,
      connectionId: n.connectionId,
      target: { type: 'agent' },
      // A notice is about the connection, not a place in the agent's scope.
      eventScope: 'account',
    })),
  }
}
