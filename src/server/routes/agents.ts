// Agents: what each may touch (scope), the connections it may use, and where its events go.
// Managed with a workspace (admin) key; an agent key may read its own agent.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { agentInputs } from '../../engine/agents/agent-input.ts'
import type { Engine } from '../../engine/engine.ts'
import { agentViewSchema, SigningSecret } from '../agent-schemas.ts'
import { requireOwnAgent } from '../authorize.ts'
import { nextCursor, pageQuery } from '../paging.ts'
import { errorResponses } from '../schemas.ts'

export const agentRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    const params = z.object({ id: z.string().min(1).max(200) })
    // The scope's keys are those of the connectors' place kinds.
    const { NewAgentInput, AgentChangesInput } = agentInputs(engine.registry.places)
    const AgentView = agentViewSchema(engine.registry.places)
    app.post(
      '/v1/agents',
      {
        schema: {
          operationId: 'createAgent',
          tags: ['agents'],
          summary: 'Create an agent; its webhook signing secret is in this response only',
          body: NewAgentInput,
          response: { 201: AgentView.extend({ signingSecret: SigningSecret }), ...errorResponses },
        },
      },
      async (req, reply) => {
        const { agent, signingSecret } = await engine.agents.create(req.caller.workspaceId, req.body)
        return reply.code(201).send({ ...agent, signingSecret })
      },
    )
    app.get(
      '/v1/agents',
      {
        schema: {
          operationId: 'listAgents',
          tags: ['agents'],
          summary: 'List agents, oldest first, a page at a time',
          querystring: z.object(pageQuery(200)),
          response: { 200: z.object({ agents: z.array(AgentView), next: nextCursor }), ...errorResponses },
        },
      },
      async (req) => engine.agents.page(req.caller.workspaceId, req.query),
    )
    app.get(
      '/v1/agents/:id',
      {
        schema: {
          operationId: 'getAgent',
          tags: ['agents'],
          summary: 'One agent (an agent key may read its own)',
          params,
          response: { 200: AgentView, ...errorResponses },
        },
      },
      async (req) => {
        requireOwnAgent(req.caller, req.params.id)
        return engine.agents.get(req.caller.workspaceId, req.params.id)
      },
    )
    app.patch(
      '/v1/agents/:id',
      {
        schema: {
          operationId: 'updateAgent',
          tags: ['agents'],
          summary:
            'Change an agent: name, scope, connectionIds or delivery (each given field is replaced whole)',
          params,
          body: AgentChangesInput,
          response: { 200: AgentView, ...errorResponses },
        },
      },
      async (req) => {
        return engine.agents.update(req.caller.workspaceId, req.params.id, req.body)
      },
    )
    app.delete(
      '/v1/agents/:id',
      {
        schema: {
          operationId: 'deleteAgent',
          tags: ['agents'],
          summary: 'Delete an agent with its tools and tool runs; its keys stop working at once',
          params,
          response: { 204: z.null(), ...errorResponses },
        },
      },
      async (req, reply) => {
        await engine.agents.delete(req.caller.workspaceId, req.params.id)
        // MCP clients signed in as it lose their grants with it.
        await engine.mcpGrants.endForAgent(req.caller.workspaceId, req.params.id)
        return reply.code(204).send(null)
      },
    )
    app.post(
      '/v1/agents/:id/webhook-secret/rotate',
      {
        schema: {
          operationId: 'rotateWebhookSecret',
          tags: ['agents'],
          summary:
            'Replace the webhook signing secret (the new one is in this response only); the previous one stays valid for an overlap (default 24 h), during which every push carries a signature of each',
          params,
          body: z
            .object({
              previousValidForSeconds: z
                .number()
                .int()
                .min(0)
                .max(30 * 24 * 3600)
                .optional()
                .describe(
                  'How long the previous secret stays valid: default 86400 (24 h); 0 ends it at once (pushes are signed with the new secret only).',
                ),
            })
            .strict()
            .nullish(),
          response: {
            200: z.object({
              signingSecret: SigningSecret,
              previousSecretValidUntil: z
                .string()
                .nullable()
                .describe(
                  'Until when pushes also carry a signature of the previous secret; null: not at all.',
                ),
            }),
            ...errorResponses,
          },
        },
      },
      async (req) => {
        return engine.agents.rotateSigningSecret(req.caller.workspaceId, req.params.id, {
          previousValidForSeconds: req.body?.previousValidForSeconds,
        })
      },
    )
    app.delete(
      '/v1/agents/:id/webhook-secret/previous',
      {
        schema: {
          operationId: 'endWebhookSecretOverlap',
          tags: ['agents'],
          summary:
            "End a rotation's overlap now: the previous signing secret is no longer valid, and pushes carry the current secret's signature only",
          params,
          response: { 204: z.null(), ...errorResponses },
        },
      },
      async (req, reply) => {
        await engine.agents.endSecretOverlap(req.caller.workspaceId, req.params.id)
        return reply.code(204).send(null)
      },
    )
  }
