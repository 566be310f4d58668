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

const name = z.string().trim().min(1, 'must not be empty').max(200)
const description = z.string().max(4000).describe('What the tool does, for people and LLMs.')
const steps = z.array(ToolStepInput).min(1, 'must hold at least one step').max(50).describe('Run in order.')

export const NewToolInput = z.object({ name, description: description.default(''), steps }).strict()

export const ToolChangesInput = z
  .object({ name: name.optional(), description: description.optional(), steps: steps.optional() })
  .strict()
  .refine((v) => Object.values(v).some((x) => x !== undefined), 'name at least one field to change')

export type ToolStep = z.output<typeof ToolStepInput>
export type NewTool = z.input<typeof NewToolInput>
export type ToolChanges = z.input<typeof ToolChangesInput>
