// One agent's MCP server: its tools are the agent's callables (engine/agents/agent-toolbox.ts: the
// allowed tool steps, from the registry, and the agent's tools), and its resources are the
// agent's recent events (deliveries) and each tool told in full (the describe resources, as the
// describe_tool tool tells them). Built per request: the HTTP endpoint is stateless.
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  CallToolRequestSchema,
  type CallToolResult,
  ClientRequestSchema,
  ErrorCode,
  JSONRPCMessageSchema,
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
import type { DeliveryRow } from '../../engine/events/history.ts'
import { isErrorCode } from '../../kit/error-codes.ts'
import { PatchbayError } from '../../kit/errors.ts'
import { PATCHBAY_VERSION } from '../../kit/version.ts'
import { deliveryView } from '../event-views.ts'

export const RECENT_EVENTS_URI = 'patchbay://events/recent'
const DELIVERY_URI = 'patchbay://deliveries/'
/** `patchbay://tools/{name}/describe`: a tool told in full, as describe_tool tells it. */
const TOOLS_URI = 'patchbay://tools/'
const DESCRIBE_SUFFIX = '/describe'
const describeUri = (name: string) => `${TOOLS_URI}${encodeURIComponent(name)}${DESCRIBE_SUFFIX}`
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
        ...(agent.toolSelection?.discovery
          ? [
              'The tools are reached through two: find_tools {"query": "<what it should do>"} finds them (with their input schemas), call_tool {"name", "arguments"} runs one.',
            ]
          : []),
        "Each step tool takes an optional connectionId (the agent's only connection of that connector by default).",
        `Descriptions here are short: describe_tool {"name": "<tool>"} (or the resource ${TOOLS_URI}{name}${DESCRIBE_SUFFIX}) tells a tool in full (where each input comes from, the shape of its result).`,
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
      ...(Object.keys(c.annotations).length ? { annotations: c.annotations } : {}),
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
      if (result.kind === 'describe') return { content: [text(result.output)] }
      if (result.kind === 'found')
        return {
          content: [text(result.output)],
          structuredContent: result.output as unknown as Record<string, unknown>,
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
      // A database gone away or a full disk is said as such (503/507 with a retry time), not as a defect.
      const away = engine.store.health.failure(err)
      if (away) return toolError(away)
      engine.log.error({ err, tool: req.params.name }, 'MCP tool call failed unexpectedly')
      return toolError(
        new PatchbayError('INTERNAL', 'An unexpected error occurred; it has been logged.', {
          hint: 'Try again; if it persists, report it with the time of the call.',
        }),
      )
    }
  })

  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    const { items: rows } = await engine.events.history.listDeliveries(caller.workspaceId, {
      agentId: agent.id,
      limit: LISTED_DELIVERIES,
    })
    const described = await toolbox.descriptions(caller)
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
        ...described.map((d) => ({
          uri: describeUri(d.name),
          name: `${d.name}${DESCRIBE_SUFFIX}`,
          title: `${d.title}, in full`,
          description: `The tool ${d.name} in full: its description, inputs with their guidance, and its result's shape.`,
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
      {
        uriTemplate: `${TOOLS_URI}{name}${DESCRIBE_SUFFIX}`,
        name: 'describe',
        title: 'A tool in full',
        description:
          "One of the agent's tools in full, as describe_tool tells it: the whole description, each input with where its value comes from, and the result's shape.",
        mimeType: 'application/json',
      },
    ],
  }))

  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    const uri = req.params.uri
    let body: unknown
    if (uri === RECENT_EVENTS_URI) {
      const { items: rows } = await engine.events.history.listDeliveries(caller.workspaceId, {
        agentId: agent.id,
        limit: RECENT_LIMIT,
      })
      body = { deliveries: await deliveryViews(engine, rows) }
    } else if (uri.startsWith(DELIVERY_URI)) {
      const id = uri.slice(DELIVERY_URI.length)
      const row = await engine.events.history.findDelivery(caller.workspaceId, id)
      if (!row || row.agent_id !== agent.id)
        throw new McpError(ErrorCode.InvalidParams, `This agent has no delivery "${id}".`, { uri })
      ;[body] = await deliveryViews(engine, [row])
    } else if (uri.startsWith(TOOLS_URI) && uri.endsWith(DESCRIBE_SUFFIX)) {
      let name = uri.slice(TOOLS_URI.length, -DESCRIBE_SUFFIX.length)
      try {
        name = decodeURIComponent(name)
      } catch {
        // Not percent-encoded as a name would be: it names no tool.
      }
      body = (await toolbox.descriptions(caller)).find((d) => d.name === name)
      if (!body) throw new McpError(ErrorCode.InvalidParams, `This agent has no tool "${name}".`, { uri })
    } else {
      throw new McpError(ErrorCode.InvalidParams, `There is no resource "${uri}".`, { uri })
    }
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(body) }] }
  })

  return server
}

/** Deliveries as the API describes them (server/event-views.ts), each with what the agent receives. */
async function deliveryViews(engine: Engine, rows: DeliveryRow[]) {
  const payloads = await engine.events.history.payloadValues(rows)
  return rows.map((r) => ({ ...deliveryView(r), payload: payloads.get(r.id) ?? null }))
}

const text = (value: unknown) => ({ type: 'text' as const, text: JSON.stringify(value ?? null) })

/** A tool error: the API's error body as text, so the code and hint reach the model. */
function toolError(err: PatchbayError): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(err.toBody()) }] }
}

/** The request schema of each MCP method a client may call (initialize, tools/call, …), by method. */
let requestSchemas: Map<string, { safeParse(v: unknown): { success: boolean; error?: { issues: Issue[] } } }>
type Issue = { path: PropertyKey[]; message: string }

/** A JSON-RPC error answer, as the HTTP status and body /mcp sends. */
export function jsonRpcError(status: number, id: unknown, code: number, message: string, data?: unknown) {
  return {
    status,
    body: {
      jsonrpc: '2.0' as const,
      id: typeof id === 'string' || typeof id === 'number' ? id : null,
      error: { code, message, ...(data === undefined ? {} : { data }) },
    },
  }
}

/**
 * What JSON-RPC says of a body that is not a request this server can take, before the transport
 * sees it: -32600 (Invalid Request) for what is no JSON-RPC 2.0 message, -32602 (Invalid params)
 * for a known method whose params do not fit it (naming the field). Undefined when it is fine;
 * unknown methods are the server's to answer (-32601).
 */
export function jsonRpcRefusal(body: unknown) {
  requestSchemas ??= new Map(
    ClientRequestSchema.options.map((s) => [
      s.shape.method.value as string,
      s as typeof requestSchemas extends Map<string, infer V> ? V : never,
    ]),
  )
  const messages = Array.isArray(body) ? body : [body]
  if (messages.length === 0)
    return jsonRpcError(400, null, ErrorCode.InvalidRequest, 'Invalid Request: an empty batch.')
  for (const m of messages) {
    const id = m && typeof m === 'object' ? (m as { id?: unknown }).id : undefined
    if (!JSONRPCMessageSchema.safeParse(m).success)
      return jsonRpcError(
        400,
        id,
        ErrorCode.InvalidRequest,
        'Invalid Request: not a JSON-RPC 2.0 message (an object with "jsonrpc": "2.0", a string "method", and an "id" of string or number for a request).',
      )
    const method = (m as { method?: unknown }).method
    const schema = typeof method === 'string' && id !== undefined ? requestSchemas.get(method) : undefined
    const parsed = schema?.safeParse(m)
    if (parsed && !parsed.success) {
      const issues = (parsed.error?.issues ?? []).map((i) => ({
        field: i.path.map(String).join('.'),
        message: i.message,
      }))
      return jsonRpcError(
        400,
        id,
        ErrorCode.InvalidParams,
        `Invalid params for ${method}: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`,
        { issues },
      )
    }
  }
  return undefined
}
