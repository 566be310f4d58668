import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Engine } from '../../engine/engine.ts'
import { errorResponses } from '../schemas.ts'

export const catalogRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    const catalog = engine.registry.catalog()
    app.get(
      '/v1/catalog',
      {
        schema: {
          tags: ['catalog'],
          summary: 'Every connector with its auth methods, tool steps (with JSON Schemas) and triggers',
          response: { 200: z.object({ connectors: z.array(z.any()) }), ...errorResponses },
        },
      },
      async () => ({ connectors: catalog }),
    )
    app.get(
      '/v1/steps',
      {
        schema: {
          tags: ['catalog'],
          summary: 'Tool step search: matches connector names (e.g. "task-board") and step names',
          querystring: z.object({
            q: z.string().max(200).optional().describe('Search words; empty lists every step.'),
          }),
          response: { 200: z.object({ steps: z.array(z.any()) }), ...errorResponses },
        },
      },
      async (req) => ({ steps: engine.registry.searchSteps(req.query.q) }),
    )
  }
