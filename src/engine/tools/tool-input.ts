// A tool as the API accepts it: a name, a description and an ordered chain of tool steps whose
// inputs may hold templates. The routes and the engine validate with these same schemas.
import { z } from 'zod'

export const STEP_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/

export const ToolStepInput = z
  .object({
    name: z
      .string()
      .regex(
        STEP_NAME,
        'must start with a letter or _ and hold only letters, digits, _ and - (at most 64), so {{steps.<name>.output}} can name it',
      )
      .optional()
      .describe('Optional; later steps can read this step as {{steps.<name>.output…}}.'),
    stepId: z
      .string()
      .min(1)
      .max(200)
      .describe('A tool step id from GET /v1/steps, e.g. taskboard.create_card.'),
    connectionId: z
      .string()
      .min(1)
      .max(200)
      .describe("One of the agent's connections, of the step's connector."),
    input: z
      .record(z.string(), z.unknown())
      .default({})
      .describe(
        "The step's input. Strings may hold templates: {{input.x}}, {{event.data.card.id}}, {{steps.0.output.id}}, {{steps.<name>.output.id}}. A string that is exactly one {{…}} keeps the value's type.",
      ),
  })
  .strict()

/** What a tool takes: {{input.x}} may read only these when they are declared. */
export const ToolInputs = z
  .record(
    z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'must be a name of letters, digits and _ (at most 64)'),
    z
      .object({
        type: z.enum(['string', 'number', 'integer', 'boolean', 'object', 'array']).optional(),
        description: z.string().max(1000).optional(),
        required: z.boolean().optional().describe('A run without it is refused before any step acts.'),
      })
      .strict(),
  )
  .describe(
    "The inputs the tool takes, by name. When given, every {{input.x}} must read one of them (checked at save), and agents see them as the tool's parameters.",
  )

const name = z.string().trim().min(1, 'must not be empty').max(200)
const description = z.string().max(4000).describe('What the tool does, for people and LLMs.')
const steps = z.array(ToolStepInput).min(1, 'must hold at least one step').max(50).describe('Run in order.')

export const NewToolInput = z
  .object({ name, description: description.default(''), inputs: ToolInputs.optional(), steps })
  .strict()

export const ToolChangesInput = z
  .object({
    name: name.optional(),
    description: description.optional(),
    inputs: ToolInputs.nullable().optional().describe('null removes the declaration.'),
    steps: steps.optional(),
  })
  .strict()
  .refine((v) => Object.values(v).some((x) => x !== undefined), 'name at least one field to change')

export type ToolStep = z.output<typeof ToolStepInput>
export type DeclaredInputs = z.output<typeof ToolInputs>
export type NewTool = z.input<typeof NewToolInput>
export type ToolChanges = z.input<typeof ToolChangesInput>

/** A connection a tool step used until it was disconnected (engine/connections/connection-bindings.ts). */
export interface StepConnectionNeeded {
  connectionId: string
  connector: string
  accountName: string
  accountId: string
  disconnectedAt: string
}

/**
 * A step as stored and shown: a step whose connection was disconnected has no connectionId and
 * says which it needs; it runs again once the account is restored or another connection given.
 */
export type StoredToolStep = Omit<ToolStep, 'connectionId'> & {
  connectionId: string | null
  connectionNeeded?: StepConnectionNeeded
}
