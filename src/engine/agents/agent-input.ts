// What an agent is made of, as the API accepts it: its scope, the connections it may use and its
// delivery target. The routes and the engine validate with these same schemas, so a message
// names the field whichever way the agent was made.
import { z } from 'zod'
import { neverReachable } from '../../kit/egress.ts'

const BOARD_ID = /^[0-9a-f]{24}$/
// Code-host owners: letters, digits and single hyphens (at most 39); repositories: letters,
// digits, '.', '_' and '-' (at most 100), never '.' or '..'.
const REPOSITORY = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/(?!\.\.?$)[A-Za-z0-9._-]{1,100}$/

const unique = (values: string[]) => [...new Set(values)]

export const AgentScopeInput = z
  .object({
    boards: z
      .array(
        z
          .string()
          .regex(BOARD_ID, 'must be a task-board board identifier: 24 lowercase hexadecimal characters')
          .describe('A task-board board id.'),
      )
      .max(1000)
      .default([])
      .transform(unique)
      .describe('Task-board boards the agent may touch (24-hex ids). Empty: none.'),
    repositories: z
      .array(
        z
          .string()
          .regex(REPOSITORY, 'must be a code-host repository written owner/repo')
          .describe('A code-host repository, owner/repo.'),
      )
      .max(1000)
      .default([])
      .transform(unique)
      .describe('Code-host repositories the agent may touch, as owner/repo. Empty: none.'),
  })
  .strict()
  .describe(
    'What the agent may touch. An empty list means none: an agent touches only what it is configured for.',
  )

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

export const NewAgentInput = z
  .object({
    name,
    scope: AgentScopeInput.default({ boards: [], repositories: [] }),
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

export const AgentChangesInput = z
  .object({
    name: name.optional(),
    scope: AgentScopeInput.optional().describe('Replaces the whole scope.'),
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

export type AgentScope = z.output<typeof AgentScopeInput>
export type DeliveryTarget = z.output<typeof DeliveryTargetInput>
export type ToolSelection = z.output<typeof ToolSelectionInput>
export type NewAgent = z.input<typeof NewAgentInput>
export type AgentChanges = z.input<typeof AgentChangesInput>
