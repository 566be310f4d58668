/** Who is calling: resolved from the API key on every request. */
export interface Caller {
  workspaceId: string
  keyId: string
  kind: 'admin' | 'agent'
  agentId: string | null
}
