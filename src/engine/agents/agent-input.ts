// What an agent is made of, as the API accepts it: its scope, the connections it may use and its
// delivery target. The routes and the engine validate with these same schemas, so a message
// names the field whichever way the agent was made.
import { z } from 'zod'
import { neverReachable } from '../../kit/egress.ts'
import type { Places, Scope, ScopeSchemas } from '../access/places.ts'

const unique = (values: string[]) => [...new Set(values)]

const webhookUrl = z
  .string()
  .max(2048)
  .superRefine((s, ctx) => {
    let url: URL
    try {
      url = new URL(s)
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be an absolute http:// or https:// URL' })
      return
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      ctx.addIssue({ code: 'custom', message: `must be an http:// or https:// URL, not ${url.protocol}` })
    else if (url.username || url.password)
      ctx.addIssue({
        code: 'custom',
        message: 'must not carry credentials; deliveries are signed, verify the signature instead',
      })
    else if (url.hash) ctx.addIssue({ code: 'custom', message: 'must not have a #fragment' })
    else if (neverReachable(url.hostname))
      ctx.addIssue({ code: 'custom', message: `must not point at ${neverReachable(url.hostname)}` })
  })
  .describe('Where events are POSTed, signed with the Standard Webhooks scheme.')

export const DeliveryTargetInput = z
  .discriminatedUnion('type', [
    z
      .object({ type: z.literal('webhook').describe('Push: each event is POSTed, signed.'), url: webhookUrl })
      .strict(),
    z.object({ type: z.literal('stream').describe('Pull: the agent reads its event stream.') }).strict(),
  ])
  .describe(
    'Where the agent receives its events: {"type":"webhook","url"} (push) or {"type":"stream"} (pull).',
  )

// No default here: in a PATCH an absent list must stay absent, not become an empty one.
export const ConnectionIdsInput = z
  .array(z.string().min(1).max(200))
  .max(200)
  .transform(unique)
  .describe('Connections the agent may use (ids from GET /v1/connections). Empty: none.')

/**
 * Which of its callables an agent lists over MCP and function calling, and how. Null (the
 * default): every step of its connections' connectors and all its tools, each listed.
 */
export const ToolSelectionInput = z
  .object({
    steps: z
      .array(z.string().min(1).max(200))
      .max(1000)
      .transform(unique)
      .optional()
      .describe(
        'Step ids (taskboard.create_card) or connector ids (taskboard: every step of it). Absent: every step of its connections.',
      ),
    tools: z
      .array(z.string().min(1).max(200))
      .max(1000)
      .transform(unique)
      .optional()
      .describe("The agent's own tools it lists, by id or name. Absent: all of them; []: none."),
    discovery: z
      .boolean()
      .default(false)
      .describe(
        'List two tools, find_tools and call_tool, instead of each one: for large selections (a few kB however many steps).',
      ),
  })
  .strict()
  .nullable()
  .describe(
    "What the agent lists over MCP and function calling. null: every step of its connections and all its tools (the default). It shapes the agent's tool surface; what the agent may touch is its scope.",
  )

const name = z.string().trim().min(1, 'must not be empty').max(200).describe('Shown in lists and logs.')

/** The operator's id of an end user (any string up to 256 characters). */
export const EndUserIdInput = z
  .string()
  .min(1, 'must not be empty')
  .max(256, 'must be at most 256 characters')
  .describe("The operator's own id of the end user (any string up to 256 characters).")

/**
 * The schemas of an agent as written, for the place kinds the connectors declare (the scope's
 * keys and formats are theirs: engine/access/places.ts). Made once per list of kinds.
 */
export function agentInputs(places: Places) {
  const scope = places.schemas().input
  let inputs = made.get(scope)
  if (!inputs) {
    inputs = buildInputs(scope, places.empty())
    made.set(scope, inputs)
  }
  return inputs
}

const made = new WeakMap<object, ReturnType<typeof buildInputs>>()

function buildInputs(scope: ScopeSchemas['input'], empty: Scope) {
  const NewAgentInput = z
    .object({
      name,
      scope: scope.default(empty),
      connectionIds: ConnectionIdsInput.default([]),
      delivery: DeliveryTargetInput,
      toolSelection: ToolSelectionInput.default(null),
      endUserId: EndUserIdInput.nullable()
        .optional()
        .describe(
          "Bind the agent to this end user: it may then use only the end user's connections (whatever its scope says). Absent or null: the workspace's own connections.",
        ),
    })
    .strict()

  const AgentChangesInput = z
    .object({
      name: name.optional(),
      scope: scope.optional().describe('Replaces the whole scope.'),
      connectionIds: ConnectionIdsInput.optional().describe('Replaces the list of connections.'),
      delivery: DeliveryTargetInput.optional(),
      toolSelection: ToolSelectionInput.optional().describe(
        'Replaces the selection; null lists everything again.',
      ),
      endUserId: EndUserIdInput.nullable()
        .optional()
        .describe('Bind to this end user (null: unbind); its connectionIds must then be that end user’s.'),
    })
    .strict()
    .refine((v) => Object.values(v).some((x) => x !== undefined), 'name at least one field to change')
  return { AgentScopeInput: scope, NewAgentInput, AgentChangesInput }
}

export type AgentInputs = ReturnType<typeof agentInputs>

export type AgentScope = Scope
export type DeliveryTarget = z.output<typeof DeliveryTargetInput>
export type ToolSelection = z.output<typeof ToolSelectionInput>
export type NewAgent = z.input<AgentInputs['NewAgentInput']>
export type AgentChanges = z.input<AgentInputs['AgentChangesInput']>
