// Credits of metered upstreams (contact-data): the ledger of what was charged, per connection and
// per agent, and per-agent budgets that refuse lookups before they are sent.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Caller } from '../../engine/access/caller.ts'
import type { Engine } from '../../engine/engine.ts'
import { PatchbayError } from '../../kit/errors.ts'
import { nextCursor, pageQuery } from '../paging.ts'
import { errorResponses } from '../schemas.ts'

const Entry = z.object({
  id: z.string(),
  connectionId: z.string(),
  connector: z.string(),
  agentId: z.string().nullable().describe('The calling agent; null for workspace (admin) keys.'),
  stepId: z.string(),
  runId: z.string(),
  credits: z.number().describe('Credits the upstream charged.'),
  remaining: z
    .number()
    .nullable()
    .describe("The account's balance after the charge, as the upstream reported it."),
  createdAt: z.string(),
})

const Summary = z.object({
  credits: z.number().describe('Credits charged in all entries matching the filter (every page).'),
  charges: z.number().describe('Entries matching the filter.'),
  byConnection: z.array(
    z.object({
      connectionId: z.string(),
      credits: z.number(),
      charges: z.number(),
      lastRemaining: z.number().nullable().describe("The account's latest reported balance."),
    }),
  ),
  byAgent: z.array(z.object({ agentId: z.string().nullable(), credits: z.number(), charges: z.number() })),
})

const Budget = z.object({
  agentId: z.string(),
  limit: z.number().describe('Most credits the agent may be charged in a period.'),
  period: z.enum(['total', 'month', 'day']),
  periodStart: z.string().nullable().describe('Start of the current period (UTC); null for total.'),
  spent: z.number().describe('Credits charged to the agent in the current period.'),
  remaining: z.number(),
  updatedAt: z.string(),
})

const iso = z
  .string()
  .refine((s) => !Number.isNaN(Date.parse(s)), 'must be an ISO-8601 time')
  .transform((s) => new Date(s).toISOString())

/** An agent key sees its own agent only. */
function agentScope(req: { caller: Caller }, agentId: string | undefined) {
  if (req.caller.kind !== 'agentKey') return agentId
  if (agentId !== undefined && agentId !== req.caller.agentId)
    throw new PatchbayError('AGENT_KEY_FORBIDDEN', 'An agent key can read only its own credits.', {
      hint: 'Leave agentId out, or use a workspace key.',
    })
  // An agent key without an agent (none are made) sees nothing rather than everything.
  return req.caller.agentId ?? '\u0000'
}

export const creditRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      '/v1/credits',
      {
        schema: {
          operationId: 'getCredits',
          tags: ['credits'],
          summary: 'Credits charged by metered upstreams: a summary and the ledger entries, newest first',
          querystring: z.object({
            connectionId: z.string().optional(),
            agentId: z
              .string()
              .optional()
              .describe('Only this agent (an agent key always sees only its own).'),
            stepId: z.string().optional().describe('Only this step, e.g. contactdata.enrich_contacts.'),
            since: iso.optional().describe('From this time (inclusive).'),
            until: iso.optional().describe('Before this time.'),
            ...pageQuery(200),
          }),
          response: {
            200: z.object({ summary: Summary, entries: z.array(Entry), next: nextCursor }),
            ...errorResponses,
          },
        },
      },
      async (req) => {
        const q = req.query
        const filter = {
          connectionId: q.connectionId,
          agentId: agentScope(req, q.agentId),
          stepId: q.stepId,
          since: q.since,
          until: q.until,
        }
        const ledger = engine.credits.ledger
        const [summary, page] = await Promise.all([
          ledger.summary(req.caller.workspaceId, filter),
          ledger.list(req.caller.workspaceId, filter, { limit: q.limit, cursor: q.cursor }),
        ])
        return {
          summary,
          entries: page.entries.map((e) => ({
            id: e.id,
            connectionId: e.connection_id,
            connector: e.connector,
            agentId: e.agent_id,
            stepId: e.step_id,
            runId: e.run_id,
            credits: e.credits,
            remaining: e.remaining,
            createdAt: e.created_at,
          })),
          next: page.next,
        }
      },
    )

    const params = z.object({ agentId: z.string().min(1).max(200) })
    const budgetNotFound = (agentId: string) =>
      new PatchbayError('BUDGET_NOT_FOUND', `Agent ${agentId} has no credit budget.`, {
        hint: `Set one with PUT /v1/credits/budgets/${agentId} {"limit": …}; without one the agent is not limited.`,
      })

    app.get(
      '/v1/credits/budgets',
      {
        schema: {
          operationId: 'listCreditBudgets',
          tags: ['credits'],
          summary: 'Every per-agent credit budget with what is spent, by agent id, a page at a time',
          querystring: z.object(pageQuery(200)),
          response: { 200: z.object({ budgets: z.array(Budget), next: nextCursor }), ...errorResponses },
        },
      },
      async (req) => {
        if (req.caller.kind !== 'agentKey')
          return engine.credits.pageBudgets(req.caller.workspaceId, req.query)
        // An agent key sees its own budget only: one page of one or none.
        const own = await engine.credits.budgetView(req.caller.workspaceId, agentScope(req, undefined)!)
        return { budgets: own ? [own] : [], next: null }
      },
    )
    app.get(
      '/v1/credits/budgets/:agentId',
      {
        schema: {
          operationId: 'getCreditBudget',
          tags: ['credits'],
          summary: "An agent's credit budget with what is spent",
          params,
          response: { 200: Budget, ...errorResponses },
        },
      },
      async (req) => {
        agentScope(req, req.params.agentId)
        const b = await engine.credits.budgetView(req.caller.workspaceId, req.params.agentId)
        if (!b) throw budgetNotFound(req.params.agentId)
        return b
      },
    )
    app.put(
      '/v1/credits/budgets/:agentId',
      {
        schema: {
          operationId: 'setCreditBudget',
          tags: ['credits'],
          summary:
            "Set an agent's credit budget: lookups whose worst-case cost does not fit in what is left are refused before they are sent",
          params,
          body: z.object({
            limit: z
              .number()
              .int()
              .min(0)
              .max(1_000_000_000)
              .describe('Most credits the agent may be charged.'),
            period: z
              .enum(['total', 'month', 'day'])
              .default('total')
              .describe('total (all time), month or day (calendar, UTC).'),
          }),
          response: { 200: Budget, ...errorResponses },
        },
      },
      async (req) => {
        // A budget for an agent that does not exist would limit nobody: refuse it (AGENT_NOT_FOUND).
        await engine.agents.get(req.caller.workspaceId, req.params.agentId)
        return engine.credits.putBudget(req.caller.workspaceId, req.params.agentId, req.body)
      },
    )
    app.delete(
      '/v1/credits/budgets/:agentId',
      {
        schema: {
          operationId: 'deleteCreditBudget',
          tags: ['credits'],
          summary: "Remove an agent's credit budget (the agent is then not limited)",
          params,
          response: { 204: z.null(), ...errorResponses },
        },
      },
      async (req, reply) => {
        if (!(await engine.credits.deleteBudget(req.caller.workspaceId, req.params.agentId)))
          throw budgetNotFound(req.params.agentId)
        return reply.code(204).send(null)
      },
    )
  }
