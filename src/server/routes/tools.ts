// Tools: an agent's ordered chains of tool steps with templated inputs, their runs and records.
// Workspace keys manage them; an agent key may read and run its own agent's tools.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Engine } from '../../engine/engine.ts'
import { NewToolInput, ToolChangesInput } from '../../engine/tools/tool-input.ts'
import { ToolRunView, ToolView } from '../agent-schemas.ts'
import { requireOwnAgent } from '../authorize.ts'
import { nextCursor, pageQuery } from '../paging.ts'
import { errorResponses } from '../schemas.ts'

export const toolRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    const agentParams = z.object({ id: z.string().min(1).max(200) })
    const toolParams = agentParams.extend({ toolId: z.string().min(1).max(200) })
    app.post(
      '/v1/agents/:id/tools',
      {
        schema: {
          operationId: 'createTool',
          tags: ['tools'],
          summary: 'Create a tool: step ids, connections and templates are checked before it is saved',
          params: agentParams,
          body: NewToolInput,
          response: { 201: ToolView, ...errorResponses },
        },
      },
      async (req, reply) => {
        return reply
          .code(201)
          .send(await engine.tools.create(req.caller.workspaceId, req.params.id, req.body))
      },
    )
    app.get(
      '/v1/agents/:id/tools',
      {
        schema: {
          operationId: 'listTools',
          tags: ['tools'],
          summary: "An agent's tools, oldest first, a page at a time",
          params: agentParams,
          querystring: z.object(pageQuery(200)),
          response: { 200: z.object({ tools: z.array(ToolView), next: nextCursor }), ...errorResponses },
        },
      },
      async (req) => {
        requireOwnAgent(req.caller, req.params.id)
        return engine.tools.page(req.caller.workspaceId, req.params.id, req.query)
      },
    )
    app.get(
      '/v1/agents/:id/tools/:toolId',
      {
        schema: {
          operationId: 'getTool',
          tags: ['tools'],
          summary: 'One tool',
          params: toolParams,
          response: { 200: ToolView, ...errorResponses },
        },
      },
      async (req) => {
        requireOwnAgent(req.caller, req.params.id)
        return engine.tools.get(req.caller.workspaceId, req.params.id, req.params.toolId)
      },
    )
    app.patch(
      '/v1/agents/:id/tools/:toolId',
      {
        schema: {
          operationId: 'updateTool',
          tags: ['tools'],
          summary: 'Change a tool: name, description or steps (steps are replaced whole and checked again)',
          params: toolParams,
          body: ToolChangesInput,
          response: { 200: ToolView, ...errorResponses },
        },
      },
      async (req) => {
        return engine.tools.update(req.caller.workspaceId, req.params.id, req.params.toolId, req.body)
      },
    )
    app.delete(
      '/v1/agents/:id/tools/:toolId',
      {
        schema: {
          operationId: 'deleteTool',
          tags: ['tools'],
          summary: 'Delete a tool',
          params: toolParams,
          response: { 204: z.null(), ...errorResponses },
        },
      },
      async (req, reply) => {
        await engine.tools.delete(req.caller.workspaceId, req.params.id, req.params.toolId)
        return reply.code(204).send(null)
      },
    )
    app.post(
      '/v1/agents/:id/tools/:toolId/run',
      {
        schema: {
          operationId: 'runTool',
          tags: ['tools'],
          summary:
            'Run a tool as its agent (its scope applies): the steps run in order and the first failure ends the run; the answer is the run record, failed or not',
          params: toolParams,
          body: z
            .object({
              input: z
                .record(z.string(), z.unknown())
                .default({})
                .describe("The tool's input, read by {{input.…}} templates."),
            })
            .strict()
            .default({ input: {} }),
          response: { 200: ToolRunView, ...errorResponses },
        },
      },
      async (req) => {
        requireOwnAgent(req.caller, req.params.id)
        return engine.tools.run(req.caller.workspaceId, req.params.id, req.params.toolId, {
          input: req.body.input,
          caller: req.caller,
        })
      },
    )
    app.get(
      '/v1/agents/:id/tool-runs',
      {
        schema: {
          operationId: 'listToolRuns',
          tags: ['tools'],
          summary: "An agent's tool runs, newest first",
          params: agentParams,
          querystring: z.object({
            toolId: z.string().max(200).optional().describe('Only runs of this tool.'),
            ...pageQuery(200),
          }),
          response: {
            200: z.object({ runs: z.array(ToolRunView), next: nextCursor }),
            ...errorResponses,
          },
        },
      },
      async (req) => {
        requireOwnAgent(req.caller, req.params.id)
        const { cursor, limit, toolId } = req.query
        return engine.tools.listRuns(req.caller.workspaceId, req.params.id, { limit, cursor, toolId })
      },
    )
    app.get(
      '/v1/tool-runs/:id',
      {
        schema: {
          operationId: 'getToolRun',
          tags: ['tools'],
          summary: 'One tool run with what each step did (an agent key sees only its own)',
          params: z.object({ id: z.string().min(1).max(200) }),
          response: { 200: ToolRunView, ...errorResponses },
        },
      },
      async (req) => engine.tools.getRun(req.caller, req.params.id),
    )
  }
