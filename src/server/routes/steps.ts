import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Engine } from '../../engine/engine.ts'
import { PatchbayError } from '../../kit/errors.ts'
import { errorResponses, StepResult, StepSummary } from '../schemas.ts'

const StepRun = z
  .object({
    id: z.string(),
    stepId: z.string(),
    connectionId: z.string().nullable(),
    status: z.string().describe('ok or error.'),
    errorCode: z.string().nullable(),
    durationMs: z.number(),
    attempts: z.number(),
    createdAt: z.string(),
  })
  .meta({ id: 'StepRun' })

export const stepRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      '/v1/steps/:stepId',
      {
        schema: {
          operationId: 'getStep',
          tags: ['steps'],
          summary: 'One tool step with its input and output JSON Schemas',
          params: z.object({ stepId: z.string() }),
          response: { 200: StepSummary, ...errorResponses },
        },
      },
      async (req) => {
        if (!engine.registry.steps.has(req.params.stepId))
          throw new PatchbayError('STEP_NOT_FOUND', `There is no tool step "${req.params.stepId}".`, {
            hint: 'Find step ids with GET /v1/steps?q=<connector or step name>.',
          })
        return engine.registry.stepSummary(req.params.stepId)
      },
    )
    app.post(
      '/v1/steps/:stepId/run',
      {
        schema: {
          operationId: 'runStep',
          tags: ['steps'],
          summary: 'Run one tool step with a connection',
          params: z.object({ stepId: z.string().describe('Such as taskboard.create_card.') }),
          body: z.object({
            connectionId: z
              .string()
              .optional()
              .describe('The connection to run with (from GET /v1/connections).'),
            input: z
              .record(z.string(), z.unknown())
              .default({})
              .describe("The step's input, per its inputSchema."),
          }),
          response: {
            200: StepResult,
            ...errorResponses,
          },
        },
      },
      async (req) => engine.steps.run(req.caller, req.params.stepId, req.body),
    )
    app.get(
      '/v1/runs',
      {
        schema: {
          operationId: 'listRuns',
          tags: ['steps'],
          summary:
            'Recent step runs, newest first (no inputs or outputs are kept); an agent key sees its own',
          querystring: z.object({
            limit: z.coerce.number().int().min(1).max(200).default(50),
            before: z.string().optional().describe('createdAt of the last run of the previous page.'),
          }),
          response: {
            200: z.object({ runs: z.array(StepRun), next: z.string().nullable() }),
            ...errorResponses,
          },
        },
      },
      async (req) => {
        // An agent key sees the runs it made; a workspace key sees them all.
        const rows = await engine.stepRuns.list(req.caller.workspaceId, {
          ...req.query,
          callerKeyId: req.caller.kind === 'agent' ? req.caller.keyId : undefined,
        })
        return {
          runs: rows.map((r) => ({
            id: r.id,
            stepId: r.step_id,
            connectionId: r.connection_id,
            status: r.status,
            errorCode: r.error_code,
            durationMs: r.duration_ms,
            attempts: r.attempts,
            createdAt: r.created_at,
          })),
          next: rows.length === req.query.limit ? rows[rows.length - 1].created_at : null,
        }
      },
    )
  }
