// Agents: what each may touch (scope), the connections it may use, and where its events go.
// Managed with a workspace (admin) key; an agent key may read its own agent.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { AgentChangesInput, NewAgentInput } from '../../engine/agents/agent-input.ts'
import type { Engine } from '../../engine/engine.ts'
import { AgentView, SigningSecret } from '../agent-schemas.ts'
import { requireOwnAgent } from '../authorize.ts'
import { errorResponses } from '../schemas.ts'

export const agentRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    const params = z.object({ id: z.string().min(1).max(200) })
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
          summary: 'List agents',
          response: { 200: z.object({ agents: z.array(AgentView) }), ...errorResponses },
        },
      },
      async (req) => {
        return { agents: await engine.agents.list(req.caller.workspaceId) }
      },
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
        return reply.code(204).send(null)
      },
    )
    app.post(
      '/v1/agents/:id/webhook-secret/rotate',
      {
        schema: {
          operationId: 'rotateWebhookSecret',
          tags: ['agents'],
          summary: 'Replace the webhook signing secret; the new one is in this response only',
          params,
          response: { 200: z.object({ signingSecret: SigningSecret }), ...errorResponses },
        },
      },
      async (req) => {
        return {
          signingSecret: await engine.agents.rotateSigningSecret(req.caller.workspaceId, req.params.id),
        }
      },
    )
  }
