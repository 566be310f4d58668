// What most pages need: the catalog (connectors, steps, triggers) and the connections.
import { createContext, type ReactNode, useContext, useMemo } from 'react'
import { getAll } from './api.ts'
import { useLoad } from './components.tsx'
import type { Connection, Connector, StepSummary, TriggerSummary } from './types.ts'

export interface Workspace {
  connectors: Connector[]
  connections: Connection[]
  reloadConnections: () => Promise<void>
  connector(id: string): Connector | undefined
  step(id: string): StepSummary | undefined
  trigger(id: string): (TriggerSummary & { connector: string }) | undefined
  connection(id: string): Connection | undefined
  /** "demo (Task-Board)" */
  connectionLabel(id: string): string
}

const Ctx = createContext<Workspace | null>(null)

export function useWorkspace(): Workspace {
  const w = useContext(Ctx)
  if (!w) throw new Error('useWorkspace outside WorkspaceProvider')
  return w
}

export function WorkspaceProvider({
  connectors,
  children,
}: {
  connectors: Connector[]
  children: ReactNode
}) {
  const conns = useLoad(
    (signal) => getAll<'connections', Connection>('/v1/connections', 'connections', undefined, signal),
    [],
  )
  const connections = conns.data?.connections ?? []
  const value = useMemo<Workspace>(() => {
    const steps = new Map(connectors.flatMap((c) => c.steps.map((s) => [s.id, s] as const)))
    const triggers = new Map(
      connectors.flatMap((c) => c.triggers.map((t) => [t.id, { ...t, connector: c.id }] as const)),
    )
    const byId = new Map(connections.map((c) => [c.id, c]))
    return {
      connectors,
      connections,
      reloadConnections: conns.reload,
      connector: (id) => connectors.find((c) => c.id === id),
      step: (id) => steps.get(id),
      trigger: (id) => triggers.get(id),
      connection: (id) => byId.get(id),
      connectionLabel: (id) => {
        const c = byId.get(id)
        if (!c) return id
        const name = connectors.find((x) => x.id === c.connector)?.name ?? c.connector
        return `${c.accountName} (${name})`
      },
    }
  }, [connectors, connections, conns.reload])
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>
}
