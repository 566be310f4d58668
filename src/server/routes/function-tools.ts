// Function-calling exports: an agent's callables (its allowed tool steps and its tools, the same
// list MCP serves) in the OpenAI (strict or not), Anthropic and Gemini tool formats, and one route that runs a function
// call as the model wrote it ({name, arguments}).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { AgentCallable } from '../../engine/agents/agent-toolbox.ts'
import {
  FUNCTION_TOOL_FORMATS,
  type FunctionToolFormat,
  geminiSchema,
  openaiStrictSchema,
} from '../../engine/agents/tool-schemas.ts'
import type { Engine } from '../../engine/engine.ts'
import { PatchbayError } from '../../kit/errors.ts'
import { ToolRunView } from '../agent-schemas.ts'
import { requireOwnAgent } from '../authorize.ts'
import { agentCaller } from '../mcp/routes.ts'
import { errorResponses, JsonSchema, StepResult } from '../schemas.ts'

/** One callable in the format asked for: OpenAI's, Anthropic's, Gemini's, or MCP's tools/list entry. */
const FunctionTool = z
  .union([
    z.object({
      type: z.literal('function'),
      function: z.object({
        name: z.string(),
        description: z.string(),
        parameters: JsonSchema,
        strict: z.boolean().optional(),
      }),
    }),
    z.object({ name: z.string(), description: z.string(), input_schema: JsonSchema }),
    z.looseObject({ name: z.string(), description: z.string(), inputSchema: JsonSchema }),
    z.object({ name: z.string(), description: z.string(), parameters: JsonSchema.optional() }),
  ])
  .meta({ id: 'FunctionTool' })

const ExportQuery = z.object({
  format: z
    .enum(FUNCTION_TOOL_FORMATS)
    .default('openai')
    .describe(
      'openai ([{type, function: {name, description, parameters}}]), anthropic ([{name, description, input_schema}]), gemini (functionDeclarations: [{name, description, parameters}]) or mcp (tools/list entries).',
    ),
  strict: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true')
    .describe(
      "format=openai: schemas for OpenAI's strict mode (every property required, the optional ones nullable: null means none) and strict: true on each function.",
    ),
})

/** The agent's callables in one provider's format (tool-schemas.ts makes each schema its dialect's). */
function exportTools(callables: AgentCallable[], format: FunctionToolFormat, strict: boolean) {
  if (strict && format !== 'openai')
    throw new PatchbayError(
      'VALIDATION_FAILED',
      `Invalid query: strict: applies to format=openai only, not ${format}.`,
      {
        hint: 'Leave strict out, or ask for format=openai&strict=true.',
      },
    )
  switch (format) {
    case 'openai':
      return callables.map((c) => ({
        type: 'function' as const,
        function: {
          name: c.name,
          description: c.description,
          parameters: strict ? openaiStrictSchema(c.inputSchema) : c.inputSchema,
          ...(strict ? { strict: true } : {}),
        },
      }))
    case 'anthropic':
      return callables.map((c) => ({ name: c.name, description: c.description, input_schema: c.inputSchema }))
    case 'gemini':
      return callables.map((c) => {
        // Gemini refuses an OBJECT without properties: a callable that takes nothing has no parameters.
        const takes = Object.keys(c.inputSchema.properties ?? {}).length > 0
        return {
          name: c.name,
          description: c.description,
          ...(takes ? { parameters: geminiSchema(c.inputSchema) } : {}),
        }
      })
    default:
      return callables.map(({ target: _target, describe: _describe, ...tool }) => tool)
  }
}

export const functionToolRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    const toolbox = engine.toolbox
    const params = z.object({ id: z.string().min(1).max(200) })
    app.get(
      '/v1/agents/:id/tools.json',
      {
        schema: {
          operationId: 'listFunctionTools',
          tags: ['tools'],
          summary:
            "The agent's tool steps and tools for function calling: OpenAI (strict or not), Anthropic, Gemini or MCP (tools/list) format",
          params,
          querystring: ExportQuery,
          response: { 200: z.array(FunctionTool), ...errorResponses },
        },
      },
      async (req) => {
        requireOwnAgent(req.caller, req.params.id)
        const caller = await agentCaller(engine, req.caller, req.params.id)
        return exportTools(await toolbox.list(caller), req.query.format, req.query.strict)
      },
    )
    app.get(
      '/v1/function-tools',
      {
        schema: {
          operationId: 'listOwnFunctionTools',
          tags: ['tools'],
          summary:
            "The calling agent's tool steps and tools for function calling (as GET /v1/agents/{id}/tools.json): an agent key's own, or with a workspace key the agent named by ?agent=",
          querystring: ExportQuery.extend({
            agent: z
              .string()
              .min(1)
              .max(200)
              .optional()
              .describe('With a workspace key: the agent whose tools to list.'),
          }),
          response: { 200: z.array(FunctionTool), ...errorResponses },
        },
      },
      async (req) => {
        const caller = await agentCaller(engine, req.caller, req.query.agent)
        return exportTools(await toolbox.list(caller), req.query.format, req.query.strict)
      },
    )
    app.post(
      '/v1/agents/:id/function-call',
      {
        schema: {
          operationId: 'callFunction',
          tags: ['tools'],
          summary:
            'Run a function call as the model wrote it: a step ({output, meta}), a tool ({run}) or describe_tool ({output}), as the agent',
          params,
          body: z.object({
            name: z.string().min(1).describe('A name from tools.json, e.g. taskboard_create_card.'),
            arguments: z
              .union([z.record(z.string(), z.unknown()), z.string()])
              .default({})
              .describe('The arguments: an object, or the JSON text OpenAI gives.'),
          }),
          response: {
            200: z
              .union([
                StepResult,
                z.object({ run: ToolRunView }),
                z.object({
                  output: z
                    .unknown()
                    .describe('describe_tool: the tool told in full; find_tools: the tools found.'),
                }),
              ])
              .describe('A step’s result, a tool’s run, or what describe_tool tells.'),
            ...errorResponses,
          },
        },
      },
      async (req) => {
        requireOwnAgent(req.caller, req.params.id)
        const caller = await agentCaller(engine, req.caller, req.params.id)
        let args: unknown = req.body.arguments
        if (typeof args === 'string') {
          try {
            args = args.trim() === '' ? {} : JSON.parse(args)
          } catch {
            throw new PatchbayError('VALIDATION_FAILED', 'Invalid input: arguments: not valid JSON.', {
              hint: 'Send the arguments as a JSON object, or as its JSON text.',
            })
          }
        }
        const result = await toolbox.call(caller, req.body.name, args)
        if (result.kind === 'step') return { output: result.output, meta: result.meta }
        return result.kind === 'tool' ? { run: result.run } : { output: result.output }
      },
    )
  }
