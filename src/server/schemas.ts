// Schemas of the REST API's own bodies; the OpenAPI document is generated from these.
import { z } from 'zod'
import { ERROR_CODE_LIST } from '../kit/error-codes.ts'

export const ErrorBody = z
  .object({
    error: z.object({
      code: z
        .enum(ERROR_CODE_LIST)
        .describe('Stable, machine-readable error code (docs/api.md lists what each means).'),
      message: z.string().describe('What was wrong.'),
      hint: z.string().optional().describe('What to do about it.'),
      retryAfterMs: z
        .number()
        .optional()
        .describe('When to retry, for RATE_LIMITED and DELIVERY_BACKLOG_FULL.'),
      upstream: z.object({ status: z.number(), body: z.string().optional() }).optional(),
      details: z.unknown().optional(),
    }),
  })
  .describe('The one error body of the API.')
  .meta({ id: 'Error' })

/**
 * Every refusal (4xx) and failure (5xx) is answered with the one error body; the table in docs/api.md
 * (from the registry) says which code comes with which status.
 */
export const errorResponses = { '4xx': ErrorBody, '5xx': ErrorBody }

/** A JSON Schema (draft 2020-12), as the catalog gives them for inputs, outputs and configs. */
export const JsonSchema = z
  .record(z.string(), z.unknown())
  .describe('A JSON Schema (draft 2020-12).')
  .meta({ id: 'JsonSchema' })

export const ConnectionView = z
  .object({
    id: z.string(),
    connector: z.string(),
    authMethod: z.string(),
    accountName: z.string().describe('The upstream account the connection is shown under.'),
    accountId: z.string(),
    status: z.enum(['active', 'lapsed']),
    statusReason: z.string().nullable(),
    lapsedAt: z
      .string()
      .nullable()
      .describe('When it lapsed (its triggers were paused then); null while active.'),
    checkedAt: z
      .string()
      .nullable()
      .describe(
        'When it was last asked upstream about its account (connections with triggers, about every 25 s).',
      ),
    checkError: z
      .string()
      .nullable()
      .describe(
        'Why the last check could not be made (the upstream unreachable: no lapse, tried again soon).',
      ),
    createdAt: z.string(),
    updatedAt: z.string(),
    details: z
      .record(z.string(), z.string())
      .describe(
        "What tells it apart from the account's other connections: a code-host token's kind and reach.",
      ),
    restorable: z
      .array(
        z.object({
          connectionId: z.string().describe('The disconnected connection.'),
          disconnectedAt: z.string(),
          agents: z.number(),
          triggers: z.number(),
          toolSteps: z.number(),
        }),
      )
      .describe(
        'Earlier connections of the same account that were disconnected while in use: POST /v1/connections/{id}/restore puts their triggers, agents and tool steps on this one.',
      ),
    endUserId: z
      .string()
      .nullable()
      .describe("The end user who made it (through a connect session); null: the workspace's own."),
  })
  .meta({ id: 'Connection' })

/** A field whose choices GET …/options/:field lists (the catalog's `pickers`). */
export const PickerSummary = z
  .object({
    field: z.string(),
    noun: z.string().describe('What is picked: board, list, repository …'),
    parents: z.array(z.string()).describe('The fields the choices depend on.'),
    many: z.boolean().describe('The field takes a list of them.'),
    helper: z
      .boolean()
      .describe('A parent that is no field of the input: it only narrows the choices (a list’s board).'),
  })
  .meta({ id: 'Picker' })

export const StepSummary = z
  .object({
    id: z.string().describe('Such as taskboard.create_card.'),
    connector: z.string(),
    name: z.string(),
    description: z.string(),
    hints: z.object({ readOnly: z.boolean(), destructive: z.boolean(), idempotent: z.boolean() }),
    passThrough: z.boolean().describe('An API Call step: any method and path of the upstream.'),
    inputSchema: JsonSchema,
    outputSchema: JsonSchema,
    pickers: z.array(PickerSummary).describe('Fields whose choices can be listed, parents first.'),
  })
  .meta({ id: 'Step' })

/** How the upstream delivers a trigger: its webhook (instant) or Patchbay's poll, and why. */
export const TriggerMechanism = z
  .object({
    kind: z.enum(['webhook', 'poll']),
    upstream: z.string().describe('The upstream mechanism in its own terms, e.g. organization webhook.'),
    when: z.string().optional().describe('Which configurations use it, for triggers delivered two ways.'),
    reason: z.string().optional().describe('Why it is delivered this way.'),
  })
  .meta({ id: 'TriggerMechanism' })

export const Connector = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    beta: z.boolean().optional(),
    auth: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        description: z.string().optional(),
        credentialsSchema: JsonSchema.nullable().describe(
          'What POST /v1/connections asks for; null for a sign-in.',
        ),
      }),
    ),
    places: z
      .array(
        z.object({
          kind: z.string().describe('What its scoped fields and events call it (board).'),
          scopeKey: z.string().describe("The agent scope's key that lists places of this kind (boards)."),
          description: z.string(),
          idSchema: JsonSchema.describe('One place identifier, as an agent scope accepts it.'),
        }),
      )
      .describe("The kinds of place its resources lie in: the keys of an agent's scope."),
    steps: z.array(StepSummary),
    triggers: z.array(
      z.object({
        id: z.string().describe('Such as taskboard.card_moved.'),
        name: z.string(),
        description: z.string(),
        instant: z
          .boolean()
          .describe('Delivered by a webhook for every configuration (true); polled for some or all (false).'),
        delivery: z.array(TriggerMechanism).describe('Every way the upstream delivers it, and when.'),
        configSchema: JsonSchema,
        sample: z.unknown().describe('An example of the event data.'),
        pickers: z.array(PickerSummary).describe('Config fields whose choices can be listed.'),
      }),
    ),
  })
  .meta({ id: 'Connector' })

/** What running a step answers: its output (per the step's outputSchema) and how the run went. */
/** What POST /v1/steps/{id}/run is sent: the connection, and the step's input. */
export const RunStepBody = z.object({
  connectionId: z
    .string()
    .optional()
    .describe(
      "The connection to run with (from GET /v1/connections). With an agent key it may be left out: the agent's only connection of the step's connector is used.",
    ),
  input: z.record(z.string(), z.unknown()).default({}).describe("The step's input, per its inputSchema."),
})

export const StepResult = z
  .object({
    output: z.unknown().describe("The step's output, per its outputSchema."),
    meta: z.object({ runId: z.string(), durationMs: z.number(), attempts: z.number() }),
  })
  .meta({ id: 'StepResult' })
