import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Engine } from '../../engine/engine.ts'
import { Connector, errorResponses, StepSummary } from '../schemas.ts'

export const catalogRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    const catalog = engine.registry.catalog()
    app.get(
      '/v1/catalog',
      {
        schema: {
          operationId: 'getCatalog',
          tags: ['catalog'],
          summary: 'Every connector with its auth methods, tool steps (with JSON Schemas) and triggers',
          response: { 200: z.object({ connectors: z.array(Connector) }), ...errorResponses },
        },
      },
      async () => ({ connectors: catalog }),
    )
    app.get(
      '/v1/steps',
      {
        schema: {
          operationId: 'searchSteps',
          tags: ['catalog'],
          summary: 'Tool step search: matches connector names (e.g. "task-board") and step names',
          querystring: z.object({
            q: z.string().max(200).optional().describe('Search words; empty lists every step.'),
          }),
          response: { 200: z.object({ steps: z.array(StepSummary) }), ...errorResponses },
        },
      },
      async (req) => ({ steps: engine.registry.searchSteps(req.query.q) }),
    )
  }
