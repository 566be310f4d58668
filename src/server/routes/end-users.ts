// End users (the operator's own customers), connect sessions and the hosted connect page's API,
// the workspace's end-user settings and its lifecycle notices (engine/end-users/).
//   POST /v1/connect-sessions (workspace key) → { token, url } for one end user
//   GET  /connect#<token>, /connect/:connector#<token> → the hosted page (connect-page.ts); it
//        calls /v1/connect/* with the token (no workspace key)
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { EndUserIdInput } from '../../engine/agents/agent-input.ts'
import { MAX_SESSION_TTL_SECONDS } from '../../engine/end-users/end-user-service.ts'
import { NOTICE_TYPES } from '../../engine/end-users/operator-notices.ts'
import type { Engine } from '../../engine/engine.ts'
import { agentViewSchema } from '../agent-schemas.ts'
import { publicRoute } from '../authenticate.ts'
import { nextCursor, pageQuery } from '../paging.ts'
import { ConnectionView, errorResponses } from '../schemas.ts'
import { connectPage } from './connect-page.ts'

const EndUser = z
  .object({
    id: z.string().describe("The operator's own id of the end user."),
    displayName: z.string().nullable(),
    email: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'EndUser' })

/** The end-user part of the workspace's settings (GET/PATCH /v1/workspace/settings). */
export const EndUserSettingsFields = z.object({
  allowedOrigins: z
    .array(z.string())
    .describe("Origins a connect session's returnTo may be on (https://app.example.com)."),
  notificationUrl: z
    .string()
    .nullable()
    .describe('Where lifecycle notices are POSTed (signed, Standard Webhooks); null: none are.'),
  notificationSecret: z
    .string()
    .optional()
    .describe('The whsec_… secret notices are signed with: shown once, when made or rotated.'),
})
const EndUserSettings = EndUserSettingsFields.meta({ id: 'EndUserSettings' })

/** Changes to the end-user part of the workspace's settings; what is not given stays. */
export const EndUserSettingsInput = z.object({
  allowedOrigins: z
    .array(z.string().max(300))
    .max(50)
    .optional()
    .describe("Origins a connect session's returnTo may be on (https://app.example.com); replaces the list."),
  notificationUrl: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .nullable()
    .optional()
    .describe(
      'Where lifecycle notices are POSTed; null: none are. The first one set makes the signing secret.',
    ),
  rotateNotificationSecret: z
    .boolean()
    .optional()
    .describe('Make a new notification secret (answered this once).'),
})

/**
 * The old path of the end-user settings, answering for one more release: its answers say it is
 * deprecated (RFC 9745) and name its successor, GET/PATCH /v1/workspace/settings.
 */
const DEPRECATED_SINCE = Math.floor(Date.parse('2026-11-25T00:00:00Z') / 1000)
const deprecated = (reply: { header(k: string, v: string): unknown }) => {
  reply.header('deprecation', `@${DEPRECATED_SINCE}`)
  reply.header('link', '</v1/workspace/settings>; rel="successor-version"')
}

const NoticeBody = z
  .object({
    id: z.string(),
    type: z.enum(NOTICE_TYPES),
    timestamp: z.string(),
    data: z.looseObject({
      endUserId: z.string().nullable(),
      endUser: z
        .object({ id: z.string(), displayName: z.string().nullable(), email: z.string().nullable() })
        .nullable(),
      connectionId: z.string(),
      connector: z.string(),
      accountName: z.string(),
      accountId: z.string(),
      status: z.enum(['active', 'lapsed']),
      reason: z.string().nullable(),
      triggerId: z.string().optional(),
      agentId: z.string().optional(),
    }),
  })
  .meta({ id: 'NoticeBody' })

const Notice = z
  .object({
    id: z.string(),
    type: z.string(),
    status: z.enum(['pending', 'delivered', 'failed']),
    attempts: z.number(),
    nextAttemptAt: z.string().nullable(),
    lastStatus: z.number().nullable(),
    lastError: z.string().nullable(),
    createdAt: z.string(),
    deliveredAt: z.string().nullable(),
    body: NoticeBody.describe('What was POSTed (the same on every retry and replay).'),
  })
  .meta({ id: 'Notice' })

const ConnectSessionInfo = z
  .object({
    workspaceName: z.string(),
    endUserId: z.string(),
    expiresAt: z.string(),
    returnTo: z.string().nullable(),
    mcp: z
      .object({ url: z.string().describe('The address to add to an MCP client.') })
      .nullable()
      .describe(
        "Made with allowMcpGrant: the link may instead allow an MCP client an agent bound to the end user, on the client's sign-in page.",
      ),
    connectors: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        methods: z.array(
          z.object({
            id: z.string(),
            name: z.string(),
            description: z.string(),
            kind: z.enum(['credentials', 'signIn']),
            fields: z.array(z.object({ name: z.string(), description: z.string(), secret: z.boolean() })),
          }),
        ),
      }),
    ),
  })
  .meta({ id: 'ConnectSessionInfo' })

const TOKEN_HEADER = 'patchbay-connect-token'
const connectToken = z.string().max(200).describe('The connect session token (from the connect link).')
const idParams = z.object({ id: EndUserIdInput })
const page = pageQuery(200)

export const endUserRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      '/v1/end-users',
      {
        schema: {
          operationId: 'listEndUsers',
          tags: ['end users'],
          summary: 'The end users of the workspace, by id',
          querystring: z.object(page),
          response: {
            200: z.object({ endUsers: z.array(EndUser), next: nextCursor }),
            ...errorResponses,
          },
        },
      },
      async (req) => engine.endUsers.list(req.caller.workspaceId, req.query),
    )
    app.get(
      '/v1/end-users/:id',
      {
        schema: {
          operationId: 'getEndUser',
          tags: ['end users'],
          summary: 'One end user with their connections and the agents bound to them',
          params: idParams,
          response: {
            200: EndUser.extend({
              connections: z.array(ConnectionView),
              agents: z.array(agentViewSchema(engine.registry.places)),
            }),
            ...errorResponses,
          },
        },
      },
      async (req) => engine.endUsers.get(req.caller.workspaceId, req.params.id),
    )
    app.delete(
      '/v1/end-users/:id',
      {
        schema: {
          operationId: 'deleteEndUser',
          tags: ['end users'],
          summary:
            'Remove an end user: their connections (upstream webhooks unregistered, credentials destroyed), their agents’ use of them, their events and connect sessions',
          params: idParams,
          response: {
            200: z.object({
              endUserId: z.string(),
              connections: z.array(
                z.object({ id: z.string(), connector: z.string(), accountName: z.string() }),
              ),
              triggers: z.number().describe('Triggers removed with the connections.'),
              webhookCleanupErrors: z
                .array(z.string())
                .describe('Upstream webhooks that could not be unregistered (the upstream refused).'),
              agentsUnbound: z
                .array(z.string())
                .describe('Agents whose connectionIds lost these connections.'),
              events: z.number(),
              deliveries: z.number(),
              connectSessions: z.number(),
              mcpGrants: z.number().describe('MCP grants the end user gave through connect links, revoked.'),
            }),
            ...errorResponses,
          },
        },
      },
      async (req) => engine.endUsers.delete(req.caller.workspaceId, req.params.id),
    )
    app.post(
      '/v1/connect-sessions',
      {
        schema: {
          operationId: 'createConnectSession',
          tags: ['end users'],
          summary:
            'A single-use connect link for one end user: send them to url, where they connect an account without any workspace key',
          body: z
            .object({
              endUserId: EndUserIdInput,
              displayName: z.string().max(200).optional(),
              email: z.string().max(320).optional(),
              connectors: z
                .array(z.string())
                .min(1)
                .optional()
                .describe('Allowed connectors (default: all).'),
              authMethods: z
                .array(z.string())
                .min(1)
                .optional()
                .describe('Allowed auth methods, e.g. ["oauth1"] (default: all).'),
              returnTo: z
                .string()
                .max(2048)
                .optional()
                .describe(
                  "Where the browser goes afterwards, with ?connectionId=&connector= or ?error=<code>: must be on one of the workspace's allowed origins.",
                ),
              ttlSeconds: z.number().int().min(60).max(MAX_SESSION_TTL_SECONDS).default(1800),
              allowMcpGrant: z
                .boolean()
                .default(false)
                .describe(
                  "The end user may instead spend it on Patchbay's MCP consent page, allowing an MCP client to act as an agent bound to them (the token after # of the authorization address, or pasted there).",
                ),
            })
            .strict(),
          response: {
            201: z.object({
              id: z.string(),
              endUserId: z.string(),
              token: z.string().describe('Single use; shown once.'),
              url: z.string().describe('The hosted connect page (the token is in its #fragment).'),
              expiresAt: z.string(),
            }),
            ...errorResponses,
          },
        },
      },
      async (req, reply) => reply.code(201).send(await engine.endUsers.createSession(req.caller, req.body)),
    )
    app.get(
      '/v1/end-user-settings',
      {
        schema: {
          operationId: 'getEndUserSettings',
          tags: ['end users'],
          deprecated: true,
          summary:
            'Deprecated: GET /v1/workspace/settings has these. Allowed origins of connect links and the notification URL',
          response: { 200: EndUserSettings, ...errorResponses },
        },
      },
      async (req, reply) => {
        deprecated(reply)
        const { allowedOrigins, notificationUrl } = await engine.endUsers.settings.get(req.caller.workspaceId)
        return { allowedOrigins, notificationUrl }
      },
    )
    app.put(
      '/v1/end-user-settings',
      {
        schema: {
          operationId: 'updateEndUserSettings',
          tags: ['end users'],
          deprecated: true,
          summary:
            'Deprecated: PATCH /v1/workspace/settings takes these. Change the allowed origins or the notification URL',
          body: EndUserSettingsInput.strict(),
          response: { 200: EndUserSettings, ...errorResponses },
        },
      },
      async (req, reply) => {
        deprecated(reply)
        return engine.endUsers.settings.update(req.caller.workspaceId, req.body)
      },
    )
    app.get(
      '/v1/notices',
      {
        schema: {
          operationId: 'listNotices',
          tags: ['end users'],
          summary: 'Lifecycle notices sent to the notification URL, newest first',
          querystring: z.object({
            ...page,
            type: z.enum(NOTICE_TYPES).optional(),
            status: z.enum(['pending', 'delivered', 'failed']).optional(),
          }),
          response: {
            200: z.object({ notices: z.array(Notice), next: nextCursor }),
            ...errorResponses,
          },
        },
      },
      async (req) => engine.notices.list(req.caller.workspaceId, req.query),
    )
    app.get(
      '/v1/notices/:id',
      {
        schema: {
          operationId: 'getNotice',
          tags: ['end users'],
          summary: 'One lifecycle notice',
          params: z.object({ id: z.string().max(200) }),
          response: { 200: Notice, ...errorResponses },
        },
      },
      async (req) => engine.notices.get(req.caller.workspaceId, req.params.id),
    )
    app.post(
      '/v1/notices/:id/replay',
      {
        schema: {
          operationId: 'replayNotice',
          tags: ['end users'],
          summary: 'Send a lifecycle notice again (same id and body)',
          params: z.object({ id: z.string().max(200) }),
          response: { 200: Notice, ...errorResponses },
        },
      },
      async (req) => engine.notices.replay(req.caller.workspaceId, req.params.id),
    )

    // The hosted connect page's API: the connect token is the only credential.
    app.get(
      '/v1/connect/session',
      {
        config: publicRoute,
        schema: {
          operationId: 'describeConnectSession',
          tags: ['end users'],
          summary: `What a connect link allows (the token in the ${TOKEN_HEADER} header; no workspace key)`,
          headers: z.looseObject({ [TOKEN_HEADER]: connectToken.optional() }),
          response: { 200: ConnectSessionInfo, ...errorResponses },
        },
      },
      async (req, reply) => {
        // Per link (the token is a header, not part of the address): never answered from a cache,
        // or a browser would show one link's answer for another (a 410 is cacheable by default).
        reply.header('cache-control', 'no-store')
        return engine.endUsers.describeSession(req.headers[TOKEN_HEADER] as string | undefined)
      },
    )
    app.post(
      '/v1/connect/connections',
      {
        config: publicRoute,
        schema: {
          operationId: 'connectAsEndUser',
          tags: ['end users'],
          summary:
            "Connect an account with credentials through a connect link (the connection is the end user's)",
          body: z
            .object({
              token: connectToken,
              connector: z.string().max(100),
              authMethod: z.string().max(100),
              credentials: z.record(z.string(), z.unknown()),
            })
            .strict(),
          response: {
            201: z.object({
              connection: ConnectionView,
              reconnected: z.boolean(),
              returnTo: z
                .string()
                .nullable()
                .describe('Where to send the browser (with connectionId and connector added), if anywhere.'),
            }),
            ...errorResponses,
          },
        },
      },
      async (req, reply) => {
        const { token, ...input } = req.body
        const made = await engine.endUsers.connectWithCredentials(token, input)
        return reply
          .code(201)
          .send({ ...made, returnTo: made.returnTo && withResult(made.returnTo, made.connection) })
      },
    )
    app.post(
      '/v1/connect/oauth/start',
      {
        config: publicRoute,
        schema: {
          operationId: 'startEndUserSignIn',
          tags: ['end users'],
          summary: "Start a sign-in through the upstream's pages through a connect link (redirect or pop-up)",
          body: z
            .object({
              token: connectToken,
              connector: z.string().max(100),
              authMethod: z.string().max(100).optional(),
              mode: z
                .enum(['redirect', 'popup'])
                .default('redirect')
                .describe(
                  "redirect: the browser comes back to the link's returnTo; popup: the result is posted to the hosted page that opened it.",
                ),
            })
            .strict(),
          response: {
            200: z.object({ authorizeUrl: z.string(), state: z.string(), expiresAt: z.string() }),
            ...errorResponses,
          },
        },
      },
      async (req) => {
        const { token, ...input } = req.body
        return engine.endUsers.startSignIn(token, input)
      },
    )
    for (const path of ['/connect', '/connect/:connector'])
      app.get(
        path,
        {
          config: publicRoute,
          schema: { hide: true, params: z.object({ connector: z.string().max(100).optional() }) },
        },
        async (req, reply) => connectPage(reply, req.params.connector ?? null),
      )
  }

function withResult(returnTo: string, connection: { id: string; connector: string }): string {
  const url = new URL(returnTo)
  url.searchParams.set('connectionId', connection.id)
  url.searchParams.set('connector', connection.connector)
  return url.toString()
}
