// The workspace's settings, one resource: what agent keys may do with credentials
// (engine/access/workspace-settings.ts) and, for end users, the origins connect links may return
// to and the notification URL lifecycle notices go to (engine/end-users/end-user-settings.ts). Both
// live in the workspace's one settings document. Who may read and change them is the policy
// table's (engine/access/policy.ts).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { WorkspaceSettingsInput } from '../../engine/access/workspace-settings.ts'
import type { Engine } from '../../engine/engine.ts'
import { errorResponses } from '../schemas.ts'
import { EndUserSettingsFields, EndUserSettingsInput } from './end-users.ts'

const WorkspaceSettingsView = z
  .object({
    allowInlineAuth: z
      .boolean()
      .describe(
        "Agent keys may give credentials inline in API Call steps (auth: api_key_token) instead of the agent's connections; only then is the auth field offered to models.",
      ),
    ...EndUserSettingsFields.shape,
  })
  .meta({ id: 'WorkspaceSettings' })

const WorkspaceSettingsChanges = WorkspaceSettingsInput.extend(EndUserSettingsInput.shape).strict()

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
        const workspaceId = req.caller.workspaceId
        const { allowedOrigins, notificationUrl } = await engine.endUsers.settings.get(workspaceId)
        return { ...(await engine.settings.get(workspaceId)), allowedOrigins, notificationUrl }
      },
    )
    app.patch(
      '/v1/workspace/settings',
      {
        schema: {
          operationId: 'updateWorkspaceSettings',
          tags: ['workspace'],
          summary:
            'Change the given settings of the workspace; the others stay (a notification URL set the first time, or rotateNotificationSecret, answers the signing secret once)',
          body: WorkspaceSettingsChanges,
          response: { 200: WorkspaceSettingsView, ...errorResponses },
        },
      },
      async (req) => {
        const workspaceId = req.caller.workspaceId
        const { allowInlineAuth, ...endUser } = req.body
        // The end users' part first: it is the part that can still be refused (an origin, an
        // address the egress guard refuses), and nothing is changed when it is.
        const endUsers = Object.values(endUser).some((v) => v !== undefined)
          ? await engine.endUsers.settings.update(workspaceId, endUser)
          : await engine.endUsers.settings.get(workspaceId).then(({ allowedOrigins, notificationUrl }) => ({
              allowedOrigins,
              notificationUrl,
            }))
        const own =
          allowInlineAuth === undefined
            ? await engine.settings.get(workspaceId)
            : await engine.settings.update(workspaceId, { allowInlineAuth })
        return { ...own, ...endUsers }
      },
    )
  }
