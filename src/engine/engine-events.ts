// What one part of the engine tells the parts that act on it, typed: a reconnect that put new
// credentials in place (webhooks are registered again), a lapse and a reconnect after the commit
// that paused or resumed the connection's triggers (their agents are told), an agent deleted (its
// triggers go with it). A part that listens subscribes in its constructor, given the bus; one that
// tells emits. Handlers run in the order they subscribed, one after another, and the emitter waits
// for them (a failure reaches it), as a direct call would — this is wiring within one instance,
// not news between instances (that is changes/changes.ts).
import type { Credentials } from '../kit/define.ts'
import type { TriggerRow } from '../store/triggers.ts'

export interface EngineEventMap {
  /** New credentials are in place on a connection (a reconnect, by credentials or sign-in). */
  connectionReplaced: { connectionId: string; previous: Credentials }
  /** A connection lapsed (this instance made the change); its triggers were paused in the same commit. */
  connectionLapsed: { connectionId: string; reason: string; at: string; paused: TriggerRow[] }
  /**
   * A lapsed connection works again (after connectionReplaced); its triggers were resumed in the
   * commit that stored the credentials.
   */
  connectionReconnected: { connectionId: string; resumed: TriggerRow[] }
  /** An agent was deleted with its tools and keys. */
  agentDeleted: { workspaceId: string; agentId: string }
}

type Handler<K extends keyof EngineEventMap> = (event: EngineEventMap[K]) => Promise<void> | void

export class EngineEvents {
  /** Each kind's handlers, in the order they subscribed. */
  #handlers = new Map<keyof EngineEventMap, Array<(event: never) => Promise<void> | void>>()

  on<K extends keyof EngineEventMap>(kind: K, handler: Handler<K>): void {
    const list = this.#handlers.get(kind) ?? []
    list.push(handler)
    this.#handlers.set(kind, list)
  }

  async emit<K extends keyof EngineEventMap>(kind: K, event: EngineEventMap[K]): Promise<void> {
    for (const handler of this.#handlers.get(kind) ?? []) await (handler as Handler<K>)(event)
  }
}
