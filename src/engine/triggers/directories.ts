// What the trigger and event code needs to know about agents and tools, as narrow interfaces:
// the agents module provides them, and nothing here depends on how agents are stored.

export type DeliveryTarget = { type: 'webhook'; url: string } | { type: 'stream' }

export interface AgentInfo {
  id: string
  name: string
  scope: { boards: string[]; repositories: string[] }
  connectionIds: string[]
  delivery: DeliveryTarget
}

export interface AgentDirectory {
  get(workspaceId: string, agentId: string): Promise<AgentInfo>
  /** The current signing secret, and the previous one while a rotation's overlap lasts. */
  signingSecrets(agentId: string): Promise<{
    current: string
    previous: { secret: string; until: number } | null
  }>
}

export interface ToolRunner {
  exists(workspaceId: string, agentId: string, toolId: string): Promise<boolean>
  /** Refuses a trigger whose events lack what the tool's {{event.…}} templates read. */
  checkStartingTrigger(
    workspaceId: string,
    agentId: string,
    toolId: string,
    triggerKey: string,
  ): Promise<void>
  run(
    workspaceId: string,
    agentId: string,
    toolId: string,
    opts: {
      input: unknown
      event?: unknown
      triggerId?: string
      eventId?: string
      causationDepth?: number
    },
  ): Promise<{ id: string; status: string; errorCode?: string | null; errorMessage?: string | null }>
  /** How many of the agent's tool runs are under way (those started since `since`, an ISO time, when given). */
  running(workspaceId: string, agentId: string, since?: string): Promise<number>
}
