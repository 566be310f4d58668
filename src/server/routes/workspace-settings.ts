// The workspace's own settings (engine/access/workspace-settings.ts); who may read and change
// them is the policy table's (engine/access/policy.ts).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { WorkspaceSettingsInput } from '../../engine/access/workspace-settings.ts'
import type { Engine } from '../../engine/engine.ts'
import { errorResponses } from '../schemas.ts'

const WorkspaceSettingsView = z
  .object({
    allowInlineAuth: z
      .boolean()
      .describe(
        "Agent keys may give credentials inline in API Call steps (auth: api_key_token) instead of the agent's connections; only then is the auth field offered to models.",
      ),
  })
  .meta({ id: 'WorkspaceSettings' })

export const workspaceSettingsRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      '/v1/workspace/settings',
      {
        schema: {
          operationId: 'getWorkspaceSettings',
          tags: ['workspace'],
          summary: "The workspace's settings",
          response: { 200: WorkspaceSettingsView, ...errorResponses },
        },
      },
      async (req) => {
        return engine.settings.get(req.caller.workspaceId)
      },
    )
    app.patch(
      '/v1/workspace/settings',
      {
        schema: {
          operationId: 'updateWorkspaceSettings',
          tags: ['workspace'],
          summary: 'Change the given settings of the workspace; the others stay',
          body: WorkspaceSettingsInput,
          response: { 200: WorkspaceSettingsView, ...errorResponses },
        },
      },
      async (req) => {
        return engine.settings.update(req.caller.workspaceId, req.body)
      },
    )
  }
