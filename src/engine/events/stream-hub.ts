// Live fan-out of pull deliveries to the agents' open event streams (Server-Sent Events).
export interface StreamMessage {
  seq: number
  body: string
}

type Listener = (m: StreamMessage) => void

export class StreamHub {
  #listeners = new Map<string, Set<Listener>>()

  subscribe(agentId: string, listener: Listener): () => void {
    let set = this.#listeners.get(agentId)
    if (!set) {
      set = new Set()
      this.#listeners.set(agentId, set)
    }
    set.add(listener)
    return () => {
      set.delete(listener)
      if (set.size === 0) this.#listeners.delete(agentId)
    }
  }

  publish(agentId: string, message: StreamMessage): void {
    for (const l of this.#listeners.get(agentId) ?? []) l(message)
  }

  listeners(agentId: string): number {
    return this.#listeners.get(agentId)?.size ?? 0
  }
}
