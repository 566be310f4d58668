// One agent's MCP server: its tools are the agent's callables (engine/agent-toolbox.ts: the
// allowed tool steps, from the registry, and the agent's tools), and its resources are the
// agent's recent events (deliveries). Built per request: the HTTP endpoint is stateless.
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import type { Caller } from '../../engine/access/caller.ts'
import type { AgentView } from '../../engine/agents/agent-service.ts'
import type { AgentToolbox } from '../../engine/agents/agent-toolbox.ts'
import type { Engine } from '../../engine/engine.ts'
import { isErrorCode } from '../../kit/error-codes.ts'
import { PatchbayError } from '../../kit/errors.ts'
import { PATCHBAY_VERSION } from '../../kit/version.ts'
import { deliveries } from '../../store/event-log.ts'

export const RECENT_EVENTS_URI = 'patchbay://events/recent'
const DELIVERY_URI = 'patchbay://deliveries/'
/** Deliveries in the recent-events resource, and listed as resources of their own. */
const RECENT_LIMIT = 50
const LISTED_DELIVERIES = 20

export function buildMcpServer(engine: Engine, toolbox: AgentToolbox, caller: Caller, agent: AgentView) {
  const server = new Server(
    { name: 'patchbay', title: `Patchbay — agent ${agent.name}`, version: PATCHBAY_VERSION },
    {
      capabilities: { tools: { listChanged: false }, resources: {} },
      instructions: [
        `Tools of the Patchbay agent "${agent.name}" (${agent.id}).`,
        "Step tools are named <connector>_<step> (taskboard_create_card); the agent's own tools are tool_<name>.",
        "Each step tool takes an optional connectionId (the agent's only connection of that connector by default).",
        `Resources: ${RECENT_EVENTS_URI} (the agent's recent events, newest first) and ${DELIVERY_URI}{deliveryId} (one event delivery).`,
        'Errors come back as tool errors whose text is {"error":{"code","message","hint"}}; RATE_LIMITED means retry later with increasing delays.',
      ].join('\n'),
    },
  )

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (await toolbox.list(caller)).map((c) => ({
      name: c.name,
      title: c.title,
      description: c.description,
      inputSchema: c.inputSchema,
      ...(c.outputSchema ? { outputSchema: c.outputSchema } : {}),
      annotations: c.annotations,
    })),
  }))

  server.setRequestHandler(CallToolRequestSchema, async (req): Promise<CallToolResult> => {
    try {
      const result = await toolbox.call(caller, req.params.name, req.params.arguments ?? {})
      if (result.kind === 'tool') {
        const run = result.run
        if (run.status === 'failed')
          return toolError(
            new PatchbayError(
              isErrorCode(run.errorCode) ? run.errorCode : 'TOOL_RUN_FAILED',
              run.errorMessage ?? 'The tool run failed.',
              {
                hint: `See the run record: GET /v1/tool-runs/${run.id}.`,
                details: { run },
              },
            ),
          )
        return { content: [text(run)], structuredContent: run as unknown as Record<string, unknown> }
      }
      const output = result.output
      const structured =
        output !== null && typeof output === 'object' && !Array.isArray(output)
          ? (output as Record<string, unknown>)
          : undefined
      return { content: [text(output)], ...(structured ? { structuredContent: structured } : {}) }
    } catch (err) {
      if (err instanceof PatchbayError && err.code === 'TOOL_NOT_FOUND')
        throw new McpError(ErrorCode.InvalidParams, err.message)
      if (err instanceof PatchbayError) return toolError(err)
      engine.log.error({ err, tool: req.params.name }, 'MCP tool call failed unexpectedly')
      return toolError(
        new PatchbayError('INTERNAL', 'An unexpected error occurred; it has been logged.', {
          hint: 'Try again; if it persists, report it with the time of the call.',
        }),
      )
    }
  })

  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    const rows = await deliveries.list(engine.store.db, caller.workspaceId, {
      agentId: agent.id,
      limit: LISTED_DELIVERIES,
    })
    return {
      resources: [
        {
          uri: RECENT_EVENTS_URI,
          name: 'recent-events',
          title: 'Recent events',
          description: `The agent's ${RECENT_LIMIT} most recent event deliveries, newest first, each with its payload.`,
          mimeType: 'application/json',
        },
        ...rows.map((r) => ({
          uri: DELIVERY_URI + r.id,
          name: r.id,
          title: `Delivery ${r.id} (${r.status})`,
          description: `Event ${r.event_id} for trigger ${r.trigger_id}, created ${r.created_at}.`,
          mimeType: 'application/json',
        })),
      ],
    }
  })

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: `${DELIVERY_URI}{deliveryId}`,
        name: 'delivery',
        title: 'One event delivery',
        description: 'An event delivered to this agent: its status and the payload the agent receives.',
        mimeType: 'application/json',
      },
    ],
  }))

  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    const uri = req.params.uri
    let body: unknown
    if (uri === RECENT_EVENTS_URI) {
      const rows = await deliveries.list(engine.store.db, caller.workspaceId, {
        agentId: agent.id,
        limit: RECENT_LIMIT,
      })
      body = { deliveries: await deliveryViews(engine, rows) }
    } else if (uri.startsWith(DELIVERY_URI)) {
      const id = uri.slice(DELIVERY_URI.length)
      const row = await deliveries.get(engine.store.db, caller.workspaceId, id)
      if (!row || row.agent_id !== agent.id)
        throw new McpError(ErrorCode.InvalidParams, `This agent has no delivery "${id}".`, { uri })
      ;[body] = await deliveryViews(engine, [row])
    } else {
      throw new McpError(ErrorCode.InvalidParams, `There is no resource "${uri}".`, { uri })
    }
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(body) }] }
  })

  return server
}

type DeliveryRows = Awaited<ReturnType<typeof deliveries.list>>

async function deliveryViews(engine: Engine, rows: DeliveryRows) {
  const joined = new Map((await engine.events.deliverer.joined(rows.map((r) => r.id))).map((j) => [j.id, j]))
  return rows.map((r) => {
    const j = joined.get(r.id)
    return {
      id: r.id,
      seq: Number(r.seq),
      status: r.status,
      target: JSON.parse(r.target).type,
      createdAt: r.created_at,
      payload: j ? JSON.parse(engine.events.deliverer.body(j)) : null,
    }
  })
}

const text = (value: unknown) => ({ type: 'text' as const, text: JSON.stringify(value ?? null) })

/** A tool error: the API's error body as text, so the code and hint reach the model. */
function toolError(err: PatchbayError): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(err.toBody()) }] }
}
