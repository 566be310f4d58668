// The workspace's MCP grants as the agent and end-user pages show them: every page of
// GET /v1/mcp-grants (the route pages, newest first), those `shown` picks, and a revoke that reads
// them again.
import { del, enc, getAll } from './api.ts'
import { useAction, useLoad } from './components.tsx'
import type { McpGrant } from './types.ts'

export function useMcpGrants(shown: (g: McpGrant) => boolean, deps: unknown[]) {
  const grants = useLoad(
    (signal) => getAll<'grants', McpGrant>('/v1/mcp-grants', 'grants', undefined, signal),
    deps,
  )
  const revoke = useAction(async (g: McpGrant) => {
    await del(`/v1/mcp-grants/${enc(g.id)}`)
    await grants.reload()
  })
  return { grants, revoke, shown: grants.data?.grants.filter(shown) ?? [] }
}
