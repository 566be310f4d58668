import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { callerId } from '../../engine/access/caller.ts'
import type { Engine } from '../../engine/engine.ts'
import { PatchbayError } from '../../kit/errors.ts'
import { deprecatedPaging, nextCursor, pageQuery } from '../paging.ts'
import { errorResponses, RunStepBody, StepResult, StepSummary } from '../schemas.ts'

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

const ChoicesQuery = z
  .object({
    connectionId: z
      .string()
      .max(200)
      .optional()
      .describe(
        "The connection to list with; an agent key defaults to the agent's only one of the connector.",
      ),
  })
  .catchall(z.string().max(2000))
  .describe('The values of the fields the choices depend on, by field name (idBoard, owner, repo …).')

const ChoicesView = z
  .object({
    field: z.string(),
    noun: z.string().describe('What is picked: board, list, repository …'),
    parents: z.array(z.string()).describe('The fields the choices depend on.'),
    connectionId: z.string(),
    choices: z.array(z.object({ value: z.string(), label: z.string(), detail: z.string().optional() })),
  })
  .meta({ id: 'FieldChoices' })

export const stepRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    const toolbox = engine.toolbox
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
    // The choices of a step's input field and of a trigger's config field: one route shape each.
    const choicesRoute = (kind: 'step' | 'trigger', url: string, summary: string) =>
      app.get(
        url,
        {
          schema: {
            operationId: kind === 'step' ? 'listStepFieldChoices' : 'listTriggerFieldChoices',
            tags: [kind === 'step' ? 'steps' : 'triggers'],
            summary,
            params: z.object({ id: z.string(), field: z.string().max(100) }),
            querystring: ChoicesQuery,
            response: { 200: ChoicesView, ...errorResponses },
          },
        },
        async (req) => {
          const { connectionId, ...parents } = req.query
          return engine.choices.list(req.caller, {
            of: { kind, id: req.params.id },
            field: req.params.field,
            connectionId,
            parents,
          })
        },
      )
    choicesRoute(
      'step',
      '/v1/steps/:id/options/:field',
      "The choices of a field that names an upstream resource (a board, a list, a repository …), listed with a connection; the fields it depends on are given as query parameters (?idBoard=… for a list). An agent key sees only its scope's",
    )
    choicesRoute(
      'trigger',
      '/v1/catalog/triggers/:id/options/:field',
      "The choices of a trigger config's field (the board to watch …), as for a step's",
    )
    app.post(
      '/v1/steps/:stepId/run',
      {
        schema: {
          operationId: 'runStep',
          tags: ['steps'],
          summary: 'Run one tool step with a connection',
          params: z.object({ stepId: z.string().describe('Such as taskboard.create_card.') }),
          body: RunStepBody,
          response: {
            200: StepResult,
            ...errorResponses,
          },
        },
      },
      async (req) => toolbox.runStep(req.caller, req.params.stepId, req.body),
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
            ...pageQuery(200),
            before: z
              .string()
              .max(64)
              .optional()
              .meta({ deprecated: true })
              .describe(
                'Deprecated (use cursor; runs made in the same millisecond as the last one are skipped): runs made before this createdAt.',
              ),
          }),
          response: {
            200: z.object({ runs: z.array(StepRun), next: nextCursor }),
            ...errorResponses,
          },
        },
      },
      async (req, reply) => {
        // An agent key sees the runs it made; a workspace key sees them all.
        const { items, next } = await engine.stepRuns.list(req.caller.workspaceId, {
          ...req.query,
          callerKeyId: req.caller.kind === 'agentKey' ? callerId(req.caller) : undefined,
        })
        deprecatedPaging(reply, req.query.before !== undefined)
        return {
          runs: items.map((r) => ({
            id: r.id,
            stepId: r.step_id,
            connectionId: r.connection_id,
            status: r.status,
            errorCode: r.error_code,
            durationMs: r.duration_ms,
            attempts: r.attempts,
            createdAt: r.created_at,
          })),
          next,
        }
      },
    )
  }
