// The HTTP face of Patchbay: Fastify with Zod schemas that validate every input and generate
// the OpenAPI 3.1 document at /openapi.json and the reference page at /docs.
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyServerOptions,
  LogController,
} from 'fastify'
import {
  jsonSchemaTransform,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod'
import type { Redis } from 'ioredis'
import type { Engine } from '../engine/engine.ts'
import { tracingOn } from '../kit/tracing.ts'
import { installAuditLog } from './audit-hook.ts'
import { installAuthentication, type PersonAuthenticator, publicRoute } from './authenticate.ts'
import { attachRules, enforcePolicy } from './authorize.ts'
import { enforceContract, transformObject } from './contract.ts'
import { installErrorHandling } from './error-handler.ts'
import { authorizationServerRoutes, McpAuthorizationServer } from './mcp/authorization-server.ts'
import { consentRoutes } from './mcp/consent.ts'
import { mcpRoutes } from './mcp/routes.ts'
import {
  installMetrics,
  installProbes,
  installReadinessGate,
  installRequestLogging,
  installTracing,
  requestIdMixin,
  requestIdOf,
  Startup,
} from './observability.ts'
import { agentKeyRoutes } from './routes/agent-keys.ts'
import { agentRoutes } from './routes/agents.ts'
import { authRoutes } from './routes/auth.ts'
import { catalogRoutes } from './routes/catalog.ts'
import { connectionRoutes } from './routes/connections.ts'
import { creditRoutes } from './routes/credits.ts'
import { dashboardRoutes } from './routes/dashboard.ts'
import { endUserRoutes } from './routes/end-users.ts'
import { eventRoutes } from './routes/events.ts'
import { functionToolRoutes } from './routes/function-tools.ts'
import { hookRoutes } from './routes/hooks.ts'
import { jobRoutes } from './routes/jobs.ts'
import { mcpGrantRoutes } from './routes/mcp-grants.ts'
import { memberRoutes } from './routes/members.ts'
import { oauthRoutes } from './routes/oauth.ts'
import { rateLimitStatusRoutes } from './routes/rate-limit-status.ts'
import { rateLimitRoutes } from './routes/rate-limits.ts'
import { statsRoutes } from './routes/stats.ts'
import { stepRoutes } from './routes/steps.ts'
import { tokenPageRoutes } from './routes/token-pages.ts'
import { toolRoutes } from './routes/tools.ts'
import { triggerRoutes } from './routes/triggers.ts'
import { workspaceSettingsRoutes } from './routes/workspace-settings.ts'
import { workspaceRoutes } from './routes/workspaces.ts'
import { installSessions } from './sessions.ts'

export const loggerOptions = (level: string): FastifyServerOptions['logger'] => ({
  level,
  // Engine lines written while a request is served carry its id too.
  mixin: requestIdMixin,
  // Credentials never reach a log line, whatever logs a request.
  redact: {
    paths: [
      'req.headers.authorization',
      'req.headers.cookie',
      'headers.authorization',
      '*.credentials',
      '*.token',
      '*.key',
      '*.secret',
    ],
    censor: '[redacted]',
  },
  serializers: {
    // Query strings are left out of request logs: sign-in callbacks carry codes and tokens there.
    req: (req: { method: string; url: string; hostname?: string; ip?: string }) => ({
      method: req.method,
      url: req.url.split('?')[0],
      hostname: req.hostname,
      remoteAddress: req.ip,
    }),
  },
})

export interface AppOptions {
  loggerInstance?: FastifyBaseLogger
  /** Checked by /readyz when configured. */
  redis?: Redis | null
  /** Turns /metrics on, readable with this bearer token. */
  metricsToken?: string | null
  /** Upstream base addresses, to count upstream requests by connector. */
  baseUrls?: Record<string, string | undefined>
  /** Whether the start is done (the service's); an app built over a started engine is ready at once. */
  startup?: Startup
  /** Recognise signed-in people (sessions, personal keys), asked before workspace and agent keys. */
  people?: readonly PersonAuthenticator[]
  /** Session cookies are Secure (and __Host- named): browsers reach Patchbay over https. */
  secureCookies?: boolean
  /** Reverse proxies whose X-Forwarded-For gives the client's address (PATCHBAY_TRUST_PROXY). */
  trustProxy?: string[]
}

export async function buildApp(engine: Engine, opts: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: opts.loggerInstance,
    bodyLimit: 1024 * 1024,
    genReqId: requestIdOf,
    // req.ip is the client's address behind the proxies named, the connecting address otherwise.
    trustProxy: opts.trustProxy?.length ? opts.trustProxy : false,
    // While closing, the readiness gate answers (503 SERVICE_STOPPING with Retry-After), not Fastify's bare 503.
    return503OnClosing: false,
    // One debug line per answered request (installRequestLogging) instead of an info pair.
    logController: new LogController({ disableRequestLogging: true }),
  }).withTypeProvider<ZodTypeProvider>()
  app.setValidatorCompiler(validatorCompiler)
  app.setSerializerCompiler(serializerCompiler)
  const health = engine.store.health
  installErrorHandling(app, (err, { ingress }) => (health.failure(err) ? health.refusal({ ingress }) : null))
  enforceContract(app)
  // Before any route is added: each route gets its rule from the policy table (or fails the start).
  attachRules(app)
  installRequestLogging(app)
  if (tracingOn()) installTracing(app)
  // Before authentication: while starting (the admin key may not be made yet) or while the store is
  // away, a request is answered 503 without a key lookup that would fail or say 401.
  const startup = opts.startup ?? new Startup(null)
  installReadinessGate(app, engine, startup)
  if (opts.metricsToken) {
    const metrics = installMetrics(app, engine, { token: opts.metricsToken, baseUrls: opts.baseUrls ?? {} })
    app.addHook('onClose', async () => metrics.close())
  }

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Patchbay API',
        version: '1',
        description: `Connections, tool steps and triggers for the ${upstreamNames(engine)} connectors. Authenticate with \`Authorization: Bearer <key>\`. Every error is the one \`Error\` body; its \`code\` is one of the listed codes.`,
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      servers: [{ url: '/', description: 'This Patchbay (the address the document was read from)' }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          // A signed-in person (POST /v1/auth/sign-in); changes also send X-CSRF-Token.
          session: { type: 'apiKey', in: 'cookie', name: 'patchbay_session' },
        },
      },
      security: [{ bearer: [] }, { session: [] }],
      // What Patchbay sends: an agent's deliveries (engine/events/payload.ts is their one schema).
      webhooks: {
        delivery: {
          post: {
            operationId: 'receiveDelivery',
            summary: "A delivery pushed to an agent's webhook URL",
            description:
              "Signed per Standard Webhooks with the agent's signing secret (`webhook-id` — the delivery id —, `webhook-timestamp` and `webhook-signature` headers; the SDK's `verifyDelivery` checks them). Answer with a 2xx within the time limit, or it is sent again later with the same `webhook-id`. A stream agent receives the same JSON as the `data` of its Server-Sent Events.",
            security: [],
            requestBody: {
              required: true,
              content: { 'application/json': { schema: { $ref: '#/components/schemas/DeliveryPayload' } } },
            },
            responses: { '200': { description: 'Received (any 2xx status).' } },
          },
        },
      },
    },
    transform: jsonSchemaTransform,
    // Schemas with a Zod registry id (.meta({ id })) become components the operations refer to.
    transformObject,
  })
  // Sign-in plugs its authenticators (sessions, personal keys) in here.
  const sessions = await installSessions(app, engine, { secure: opts.secureCookies ?? false })
  const people: PersonAuthenticator[] = [sessions.authenticator, ...(opts.people ?? [])]
  // MCP clients sign in with OAuth; their access tokens act at /mcp as the agent granted.
  const authorizationServer = new McpAuthorizationServer(engine)
  installAuthentication(app, engine, { people, mcpTokens: authorizationServer })
  enforcePolicy(app)
  installAuditLog(app, engine)
  // The API reference pages are public; every route they register says so.
  await app.register(async (docs) => {
    docs.addHook('onRoute', (route) => {
      route.config = { ...route.config, ...publicRoute }
    })
    await docs.register(swaggerUi, { routePrefix: '/docs' })
  })
  app.get('/openapi.json', { config: publicRoute, schema: { hide: true } }, async () => app.swagger())
  installProbes(app, engine, opts.redis ?? null, startup)

  await app.register(catalogRoutes(engine))
  await app.register(stepRoutes(engine))
  await app.register(connectionRoutes(engine))
  await app.register(agentRoutes(engine))
  await app.register(agentKeyRoutes(engine))
  await app.register(toolRoutes(engine))
  await app.register(triggerRoutes(engine))
  await app.register(eventRoutes(engine))
  await app.register(hookRoutes(engine))
  await app.register(creditRoutes(engine))
  await app.register(workspaceSettingsRoutes(engine))
  await app.register(rateLimitRoutes(engine))
  await app.register(tokenPageRoutes(engine))
  await app.register(oauthRoutes(engine))
  await app.register(endUserRoutes(engine))
  await app.register(rateLimitStatusRoutes(engine))
  await app.register(functionToolRoutes(engine))
  await app.register(workspaceRoutes(engine))
  await app.register(statsRoutes(engine))
  await app.register(jobRoutes(engine))
  await app.register(mcpRoutes(engine))
  await app.register(authorizationServerRoutes(authorizationServer))
  await app.register(consentRoutes(engine, authorizationServer))
  await app.register(mcpGrantRoutes(engine))
  await app.register(authRoutes(engine, sessions))
  await app.register(memberRoutes(engine))
  await app.register(dashboardRoutes())
  return app
}

/** The connectors with an upstream of their own, as the API document names them: `a, b and c`. */
function upstreamNames(engine: Engine): string {
  const names = engine.registry.connectors.filter((c) => !c.baseUrlFrom).map((c) => c.name.toLowerCase())
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`
}
