// Function-calling exports: an agent's callables (its allowed tool steps and its tools, the same
// list MCP serves) in the OpenAI and Anthropic tool formats, and one route that runs a function
// call as the model wrote it ({name, arguments}).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { AgentToolbox } from '../../engine/agents/agent-toolbox.ts'
import type { Engine } from '../../engine/engine.ts'
import { PatchbayError } from '../../kit/errors.ts'
import { ToolRunView } from '../agent-schemas.ts'
import { requireOwnAgent } from '../authorize.ts'
import { agentCaller } from '../mcp/routes.ts'
import { errorResponses, JsonSchema, StepResult } from '../schemas.ts'

/** One callable in the format asked for: OpenAI's, Anthropic's, or MCP's tools/list entry. */
const FunctionTool = z
  .union([
    z.object({
      type: z.literal('function'),
      function: z.object({ name: z.string(), description: z.string(), parameters: JsonSchema }),
    }),
    z.object({ name: z.string(), description: z.string(), input_schema: JsonSchema }),
    z.looseObject({ name: z.string(), description: z.string(), inputSchema: JsonSchema }),
  ])
  .meta({ id: 'FunctionTool' })

export const functionToolRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    const toolbox = new AgentToolbox(engine)
    const params = z.object({ id: z.string().min(1).max(200) })
    app.get(
      '/v1/agents/:id/tools.json',
      {
        schema: {
          operationId: 'listFunctionTools',
          tags: ['tools'],
          summary:
            "The agent's tool steps and tools for function calling: OpenAI ([{type:'function',function:{name,description,parameters}}]), Anthropic ([{name,description,input_schema}]) or MCP (tools/list) format",
          params,
          querystring: z.object({
            format: z.enum(['openai', 'anthropic', 'mcp']).default('openai'),
          }),
          response: { 200: z.array(FunctionTool), ...errorResponses },
        },
      },
      async (req) => {
        requireOwnAgent(req.caller, req.params.id)
        const caller = await agentCaller(engine, req.caller, req.params.id)
        const callables = await toolbox.list(caller)
        switch (req.query.format) {
          case 'openai':
            return callables.map((c) => ({
              type: 'function' as const,
              function: { name: c.name, description: c.description, parameters: c.inputSchema },
            }))
          case 'anthropic':
            return callables.map((c) => ({
              name: c.name,
              description: c.description,
              input_schema: c.inputSchema,
            }))
          default:
            return callables.map(({ target: _target, describe: _describe, ...tool }) => tool)
        }
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
                z.object({ output: z.unknown().describe('describe_tool: the tool told in full.') }),
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
        return result.kind === 'describe' ? { output: result.output } : { run: result.run }
      },
    )
  }
