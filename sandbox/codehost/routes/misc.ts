// Small endpoints: rate limit status (free), zen, the API root.
import type { FastifyInstance } from 'fastify'
import type { Ctx } from '../context.ts'
import { type Limits, rateLimitBody } from '../ratelimit.ts'

export function registerMiscRoutes(api: FastifyInstance, ctx: Ctx, limits: Limits): void {
  api.get('/rate_limit', async (req) => rateLimitBody(ctx, limits, req))

  api.get('/zen', async (_req, reply) =>
    reply.header('content-type', 'text/plain; charset=utf-8').send('Design for failure.'),
  )

  api.get('/', async () => ({
    current_user_url: `${ctx.url}/user`,
    authorizations_url: `${ctx.webUrl}/settings/connections/applications{/client_id}`,
    gists_url: `${ctx.url}/gists{/gist_id}`,
    issue_search_url: `${ctx.url}/search/issues?q={query}{&page,per_page,sort,order}`,
    rate_limit_url: `${ctx.url}/rate_limit`,
    repository_url: `${ctx.url}/repos/{owner}/{repo}`,
    user_url: `${ctx.url}/users/{user}`,
    user_repositories_url: `${ctx.url}/users/{user}/repos{?type,page,per_page,sort}`,
  }))
}
