// Where upstream webhooks deliver: /hooks/:connector/:hookId. No API key — each delivery is
// verified by its signature instead. The raw body is kept as sent, since signatures cover it.
import type { FastifyPluginAsync } from 'fastify'
import type { Engine } from '../../engine/engine.ts'
import { publicRoute } from '../authenticate.ts'

export const hookRoutes =
  (engine: Engine): FastifyPluginAsync =>
  async (app) => {
    app.removeAllContentTypeParsers()
    app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 5 * 1024 * 1024 }, (_req, body, done) =>
      done(null, body),
    )

    // The upstream checks the callback address answers before it creates the webhook.
    app.route({
      method: ['HEAD', 'GET'],
      url: '/hooks/:connector/:hookId',
      config: publicRoute,
      schema: { hide: true },
      handler: async (_req, reply) => reply.code(200).send(),
    })

    app.post<{ Params: { connector: string; hookId: string }; Body: string }>(
      '/hooks/:connector/:hookId',
      { config: publicRoute, schema: { hide: true } },
      async (req, reply) => {
        const headers: Record<string, string> = {}
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v
        const result = await engine.events.ingress.receive(
          req.params.connector,
          req.params.hookId,
          headers,
          req.body ?? '',
        )
        return reply.code(200).send(result)
      },
    )
  }
