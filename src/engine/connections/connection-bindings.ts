// What uses a connection, and what happens to it when the connection goes and when its account
// comes back. Disconnecting a connection that agents, triggers or tool steps use is refused with
// the list of them (CONNECTION_IN_USE) unless forced; forced, its triggers are removed (with their
// upstream webhooks), its agents and tool steps detached — each shows the connection it needs —
// and all of it is remembered. Connecting the same upstream account again (same connector, same
// account id) offers the remembered bindings (`restorable` on the connection), and restoring puts
// them back on the new connection: the agents use it, the tool steps run through it, and the
// triggers are created again on it.
import { PatchbayError } from '../../kit/errors.ts'
import type { AgentRow, Agents } from '../../store/agents.ts'
import type { DisconnectionBindings, Disconnections } from '../../store/disconnections.ts'
import { nowIso } from '../../store/ids.ts'
import type { Tools } from '../../store/tools.ts'
import type { Triggers } from '../../store/triggers.ts'
import type { Changes } from '../changes/changes.ts'
import type { StepConnectionNeeded, StoredToolStep } from '../tools/tool-input.ts'
import type { TriggerService, TriggerTarget } from '../triggers/trigger-service.ts'
import type { ConnectionService } from './connection-service.ts'

/** A connection an agent or a tool step used until it was disconnected. */
export type ConnectionNeeded = StepConnectionNeeded

/** What used a connection: kept with a disconnection as its bindings, to be restored on reconnecting. */
export type Dependants = DisconnectionBindings

export interface DisconnectResult {
  removed: { connectionId: string; triggers: Array<{ id: string; agentId: string; trigger: string }> }
  detached: {
    agents: Array<{ id: string; name: string }>
    toolSteps: Array<{ agentId: string; toolId: string; name: string; steps: number[] }>
  }
  /** Upstream webhooks that could not be removed (the removal is reported, never blocking). */
  cleanupErrors: string[]
  /** Connecting the same account again offers these bindings back (`restorable`). */
  restorable: boolean
}

export interface RestoreResult {
  connectionId: string
  restoredFrom: string[]
  agents: string[]
  toolSteps: Array<{ agentId: string; toolId: string; steps: number[] }>
  triggers: Array<{ id: string; agentId: string; trigger: string }>
  /** Bindings that could not be restored (an agent or tool deleted since, a trigger refused). */
  failed: Array<{ what: string; code: string; message: string }>
}

export class ConnectionBindings {
  #connections: ConnectionService
  #agents: Agents
  #tools: Tools
  #triggerRows: Triggers
  #triggers: TriggerService
  #disconnections: Disconnections
  #changes: Changes

  constructor(deps: {
    connections: ConnectionService
    agents: Agents
    tools: Tools
    triggerRows: Triggers
    triggers: TriggerService
    disconnections: Disconnections
    changes: Changes
  }) {
    this.#connections = deps.connections
    this.#agents = deps.agents
    this.#tools = deps.tools
    this.#triggerRows = deps.triggerRows
    this.#triggers = deps.triggers
    this.#disconnections = deps.disconnections
    this.#changes = deps.changes
  }

  /** The agents, triggers and tool steps that use the connection. */
  async dependants(workspaceId: string, connectionId: string): Promise<Dependants> {
    // Read by what names the connection, not agent by agent: a workspace may hold thousands.
    const agents = await this.#agents.list(workspaceId, { connectionId })
    const tools = (await this.#tools.usingConnection(workspaceId, connectionId)).map((tool) => ({
      agentId: tool.agent_id,
      toolId: tool.id,
      name: tool.name,
      steps: (tool.steps as StoredToolStep[]).flatMap((s, i) => (s.connectionId === connectionId ? [i] : [])),
    }))
    return {
      agents: agents.map((a) => ({ id: a.id, name: a.name })),
      triggers: (await this.#triggerRows.forConnection(connectionId))
        .filter((r) => r.workspace_id === workspaceId)
        .map((r) => ({
          id: r.id,
          agentId: r.agent_id,
          trigger: r.trigger_key,
          config: r.config,
          target: r.target as TriggerTarget,
          pollIntervalMs: r.poll_interval_ms,
        })),
      tools,
    }
  }

  /**
   * Disconnects: refused with CONNECTION_IN_USE while anything uses the connection, unless
   * forced. What used it is remembered before anything is changed, so nothing is lost half-way.
   */
  async disconnect(
    workspaceId: string,
    connectionId: string,
    opts: { force: boolean },
  ): Promise<DisconnectResult> {
    const connection = await this.#connections.get(workspaceId, connectionId)
    const deps = await this.dependants(workspaceId, connectionId)
    const used = deps.agents.length + deps.triggers.length + deps.tools.length > 0
    if (used && !opts.force) throw inUse(connection.accountName, connectionId, deps)
    const disconnectedAt = nowIso()
    if (used)
      await this.#disconnections.insert({
        id: connectionId,
        workspace_id: workspaceId,
        connector: connection.connector,
        auth_method: connection.authMethod,
        account_id: connection.accountId,
        account_name: connection.accountName,
        end_user_id: connection.endUserId,
        bindings: deps,
        disconnected_at: disconnectedAt,
      })
    const needed: ConnectionNeeded = {
      connectionId,
      connector: connection.connector,
      accountName: connection.accountName,
      accountId: connection.accountId,
      disconnectedAt,
    }
    // Its triggers and upstream webhooks go first, while the credentials can still remove them.
    const { cleanupErrors } = await this.#triggers.removeForConnection(connectionId)
    for (const a of deps.agents) {
      const row = await this.#agents.get(workspaceId, a.id)
      if (!row) continue
      await this.#agents.update(workspaceId, a.id, {
        connection_ids: row.connection_ids.filter((id) => id !== connectionId),
        connections_needed: [...row.connections_needed, needed],
      })
    }
    for (const t of deps.tools) {
      const row = await this.#tools.get(workspaceId, t.agentId, t.toolId)
      if (!row) continue
      const steps = (row.steps as StoredToolStep[]).map((s) =>
        s.connectionId === connectionId ? { ...s, connectionId: null, connectionNeeded: needed } : s,
      )
      await this.#tools.update(workspaceId, t.agentId, t.toolId, { steps: steps as typeof row.steps })
    }
    if (deps.agents.length)
      this.#changes.publish(
        'agents',
        deps.agents.map((a) => a.id),
      )
    await this.#connections.delete(workspaceId, connectionId)
    return {
      removed: {
        connectionId,
        triggers: deps.triggers.map((t) => ({ id: t.id, agentId: t.agentId, trigger: t.trigger })),
      },
      detached: {
        agents: deps.agents,
        toolSteps: deps.tools,
      },
      cleanupErrors,
      restorable: used,
    }
  }

  /**
   * Puts what the account's earlier connections bound (all of them not restored yet, or the one
   * named `from`) on this connection: its agents use it again, the detached tool steps run
   * through it, and the removed triggers are created again on it.
   */
  async restore(
    workspaceId: string,
    connectionId: string,
    opts: { from?: string } = {},
  ): Promise<RestoreResult> {
    const connection = await this.#connections.get(workspaceId, connectionId)
    const open = (
      await this.#disconnections.openFor(workspaceId, [
        { connector: connection.connector, accountId: connection.accountId, endUserId: connection.endUserId },
      ])
    ).filter((d) => !opts.from || d.id === opts.from)
    if (open.length === 0)
      throw new PatchbayError(
        'NOTHING_TO_RESTORE',
        opts.from
          ? `There is nothing of connection ${opts.from} to restore onto ${connectionId}: it was not a disconnected connection of ${connection.accountName}, or it was restored already.`
          : `No earlier connection of ${connection.accountName} (${connection.connector}) left anything to restore.`,
        {
          hint: `The connection's "restorable" list (GET /v1/connections/${connectionId}) names what can be restored.`,
        },
      )
    const result: RestoreResult = {
      connectionId,
      restoredFrom: [],
      agents: [],
      toolSteps: [],
      triggers: [],
      failed: [],
    }
    for (const d of open) {
      // Claimed first: two restores at once do not make each trigger twice.
      if (!(await this.#disconnections.markRestored(d.id, connectionId))) continue
      result.restoredFrom.push(d.id)
      const deps: Dependants = d.bindings
      // An agent uses only connections of whom it acts for: its use of the connection, its tool
      // steps and its triggers are not put on another's (a disconnection made before its owner was
      // kept may name another's agents; so may one of an agent bound to someone else since).
      // Each agent is read once, here; undefined: deleted since.
      const agents = new Map<string, AgentRow | undefined>()
      const foreign = new Set<string>()
      for (const id of new Set([
        ...deps.agents.map((a) => a.id),
        ...deps.tools.map((t) => t.agentId),
        ...deps.triggers.map((t) => t.agentId),
      ])) {
        const row = await this.#agents.get(workspaceId, id)
        agents.set(id, row)
        if (!row || (row.end_user_id ?? null) === connection.endUserId) continue
        foreign.add(id)
        result.failed.push({
          what: `agent ${id} (${row.name})`,
          code: 'CONNECTION_OF_OTHER_OWNER',
          message: `The agent acts for ${row.end_user_id ? `end user "${row.end_user_id}"` : 'the workspace'}, and the connection is ${connection.endUserId ? `end user "${connection.endUserId}"'s` : "the workspace's own"}: its use of the connection, tool steps and triggers were not restored.`,
        })
      }
      for (const a of deps.agents) {
        const row = agents.get(a.id)
        if (!row) {
          result.failed.push({
            what: `agent ${a.id} (${a.name})`,
            code: 'AGENT_NOT_FOUND',
            message: 'The agent was deleted since.',
          })
          continue
        }
        if (foreign.has(a.id)) continue
        const ids = row.connection_ids
        await this.#agents.update(workspaceId, a.id, {
          connection_ids: ids.includes(connectionId) ? ids : [...ids, connectionId],
          connections_needed: row.connections_needed.filter((n) => n.connectionId !== d.id),
        })
        result.agents.push(a.id)
      }
      if (deps.agents.length)
        this.#changes.publish(
          'agents',
          deps.agents.map((a) => a.id),
        )
      for (const t of deps.tools) {
        if (foreign.has(t.agentId)) continue
        const row = await this.#tools.get(workspaceId, t.agentId, t.toolId)
        if (!row) {
          result.failed.push({
            what: `tool ${t.toolId} (${t.name})`,
            code: 'TOOL_NOT_FOUND',
            message: 'The tool was deleted since.',
          })
          continue
        }
        const restored: number[] = []
        const steps = (row.steps as StoredToolStep[]).map((s, i) => {
          if (s.connectionId !== null || s.connectionNeeded?.connectionId !== d.id) return s
          restored.push(i)
          const { connectionNeeded: _, ...rest } = s
          return { ...rest, connectionId }
        })
        if (restored.length) {
          await this.#tools.update(workspaceId, t.agentId, t.toolId, { steps: steps as typeof row.steps })
          result.toolSteps.push({ agentId: t.agentId, toolId: t.toolId, steps: restored })
        }
      }
      for (const t of deps.triggers) {
        if (foreign.has(t.agentId)) continue
        try {
          const made = await this.#triggers.create(workspaceId, t.agentId, {
            trigger: t.trigger,
            connectionId,
            config: t.config as Record<string, unknown>,
            target: t.target,
            pollIntervalMs: t.pollIntervalMs ?? undefined,
          })
          result.triggers.push({ id: made.id, agentId: t.agentId, trigger: t.trigger })
        } catch (err) {
          const e = err as PatchbayError
          result.failed.push({
            what: `trigger ${t.trigger} of agent ${t.agentId}`,
            code: e.code ?? 'INTERNAL',
            message: e.message,
          })
        }
      }
    }
    return result
  }
}

function inUse(accountName: string, connectionId: string, deps: Dependants): PatchbayError {
  const parts = [
    deps.agents.length ? `agents ${deps.agents.map((a) => `${a.name} (${a.id})`).join(', ')}` : '',
    deps.triggers.length
      ? `${deps.triggers.length} trigger${deps.triggers.length === 1 ? '' : 's'} (${deps.triggers.map((t) => t.trigger).join(', ')})`
      : '',
    deps.tools.length
      ? `tools ${deps.tools.map((t) => `${t.name} (${t.toolId}, step ${t.steps.join(', ')})`).join('; ')}`
      : '',
  ].filter(Boolean)
  return new PatchbayError(
    'CONNECTION_IN_USE',
    `Connection ${connectionId} (${accountName}) is used by ${parts.join('; ')}; nothing was removed.`,
    {
      hint: `Disconnect with DELETE /v1/connections/${connectionId}?force=true to remove its triggers and detach the agents and tool steps (they show "connection needed", and connecting ${accountName} again offers to restore them); or change them first.`,
      details: {
        agents: deps.agents,
        triggers: deps.triggers.map((t) => ({ id: t.id, agentId: t.agentId, trigger: t.trigger })),
        tools: deps.tools,
      },
    },
  )
}
