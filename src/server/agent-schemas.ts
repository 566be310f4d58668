// Response bodies of the agent, agent key and tool routes; the OpenAPI document is generated from these.
import { z } from 'zod'
import { connectors } from '../connectors/index.ts'
import { Places, type ScopeSchemas } from '../engine/access/places.ts'

// Responses are serialized through their schemas, which cannot run the request schemas'
// transforms backwards; so these are plain shapes of what the engine returns. An agent's scope
// has the keys of the place kinds the connectors declare (engine/access/places.ts).

const DeliveryTarget = z.discriminatedUnion('type', [
  z.object({ type: z.literal('webhook'), url: z.string() }),
  z.object({ type: z.literal('stream') }),
])

/** A connection that was disconnected while an agent or a tool step used it. */
export const ConnectionNeeded = z
  .object({
    connectionId: z.string().describe('The disconnected connection.'),
    connector: z.string(),
    accountName: z.string(),
    accountId: z.string(),
    disconnectedAt: z.string(),
  })
  .describe(
    'Connection needed: this connection was disconnected. Connecting the same account again offers to restore it (POST /v1/connections/{id}/restore).',
  )
  .meta({ id: 'ConnectionNeeded' })

const ToolStep = z.object({
  name: z.string().optional(),
  stepId: z.string(),
  connectionId: z
    .string()
    .nullable()
    .describe('null: its connection was disconnected (connectionNeeded says which); the step cannot run.'),
  connectionNeeded: ConnectionNeeded.optional(),
  input: z.record(z.string(), z.unknown()),
})

const made = new WeakMap<object, ReturnType<typeof buildAgentView>>()

/** An agent as returned, for the connectors' place kinds; one schema per list of kinds. */
export function agentViewSchema(places: Places) {
  const scope = places.schemas().view
  let schema = made.get(scope)
  if (!schema) {
    schema = buildAgentView(scope)
    made.set(scope, schema)
  }
  return schema
}

function buildAgentView(scope: ScopeSchemas['view']) {
  const view = z
    .object({
      id: z.string(),
      name: z.string(),
      scope,
      connectionIds: z.array(z.string()).describe('Connections the agent may use.'),
      connectionsNeeded: z
        .array(ConnectionNeeded)
        .describe(
          'Connections it used that were disconnected: met when the account is restored or the agent is given a connection of that connector.',
        ),
      delivery: DeliveryTarget,
      toolSelection: z
        .object({
          steps: z.array(z.string()).optional().describe('Step ids, or connector ids for every step of one.'),
          tools: z.array(z.string()).optional().describe("The agent's own tools it lists, by id or name."),
          discovery: z.boolean().describe('Listed through find_tools and call_tool.'),
        })
        .nullable()
        .describe(
          'What the agent lists over MCP and function calling; null: every step of its connections and all its tools.',
        ),
      endUserId: z
        .string()
        .nullable()
        .describe("The end user it acts for (it uses only their connections); null: the workspace's own."),
      createdAt: z.string(),
      updatedAt: z.string(),
    })
    .meta({ id: 'Agent' })
  return view
}

// Made as this module loads for the connectors Patchbay ships, as the other components are: the
// document lists its components in the order they were made.
agentViewSchema(new Places(connectors))

export const SigningSecret = z
  .string()
  .describe(
    'The Standard Webhooks secret (whsec_…) deliveries to the agent are signed with. Shown once: keep it.',
  )

export const AgentKeyView = z
  .object({
    id: z.string(),
    agentId: z.string(),
    name: z.string(),
    keyPrefix: z.string().describe('The first characters of the key, to tell keys apart.'),
    createdAt: z.string(),
    lastUsedAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
  })
  .meta({ id: 'AgentKey' })

export const ToolView = z
  .object({
    id: z.string(),
    agentId: z.string(),
    name: z.string(),
    description: z.string(),
    inputs: z
      .record(
        z.string(),
        z.object({
          type: z.string().optional(),
          description: z.string().optional(),
          required: z.boolean().optional(),
        }),
      )
      .nullable()
      .describe('The declared inputs; null when the tool declares none.'),
    steps: z.array(ToolStep),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Tool' })

export const ToolRunView = z
  .object({
    id: z.string(),
    agentId: z.string(),
    toolId: z.string(),
    triggerId: z
      .string()
      .nullable()
      .describe('The trigger that started the run; null when run through the API.'),
    eventId: z.string().nullable(),
    status: z.enum(['running', 'succeeded', 'failed']),
    input: z.unknown().describe("The tool's input."),
    steps: z.array(
      z.object({
        index: z.number(),
        name: z.string().nullable(),
        stepId: z.string(),
        connectionId: z.string().nullable(),
        status: z.enum(['succeeded', 'failed', 'skipped']).describe('Steps after a failed one are skipped.'),
        output: z.unknown().optional(),
        error: z.object({ code: z.string(), message: z.string() }).nullable(),
        runId: z.string().nullable().describe('The step run record (GET /v1/runs).'),
        durationMs: z.number().nullable(),
      }),
    ),
    errorCode: z.string().nullable().describe("The failing step's error code."),
    errorMessage: z.string().nullable(),
    createdAt: z.string(),
    finishedAt: z.string().nullable(),
  })
  .meta({ id: 'ToolRun' })
