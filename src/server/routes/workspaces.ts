// Workspaces, their keys and their audit log. A person lists the workspaces they belong to and
// makes new ones (becoming the owner); a workspace key sees its own workspace only.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { ROLES } from '../../engine/access/caller.ts'
import type { Engine } from '../../engine/engine.ts'
import { PatchbayError } from '../../kit/errors.ts'
import type { Role } from '../../store/schema.ts'
import { nextCursor, pageQuery } from '../paging.ts'
import { errorResponses } from '../schemas.ts'

const RoleName = z.enum(ROLES as [Role, ...Role[]]).describe('owner, admin, member or viewer.')

const WorkspaceView = z
  .object({
    id: z.string(),
    name: z.string(),
    role: RoleName.nullable().describe("The caller's role in it."),
    settings: z.record(z.string(), z.unknown()),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Workspace' })

const WorkspaceKeyView = z
  .object({
    id: z.string(),
    name: z.string(),
    role: RoleName,
    prefix: z.string().describe("The key's first characters, to recognise it."),
    createdAt: z.string(),
    createdBy: z
      .string()
      .nullable()
      .describe('The person who made it (null: the first-start key, or made by no one).'),
    expiresAt: z.string().nullable(),
    lastUsedAt: z.string().nullable().describe('Written at most once a minute.'),
    revokedAt: z.string().nullable(),
  })
  .meta({ id: 'WorkspaceKey' })

const AuditEntry = z
  .object({
    id: z.string(),
    at: z.string(),
    actor: z.object({
      kind: z.enum(['person', 'key', 'anonymous', 'system']),
      id: z.string().nullable(),
      label: z.string().nullable().describe("The person's email, or the key's name and prefix."),
    }),
    action: z.string().describe('connection.created, key.revoked, member.role_changed …'),
    object: z.object({ kind: z.string().nullable(), id: z.string().nullable() }),
    outcome: z.enum(['ok', 'refused']),
    detail: z.unknown().describe('What changed, or why it was refused (never a secret).'),
    address: z.string().nullable(),
    userAgent: z.string().nullable(),
  })
  .meta({ id: 'AuditEntry' })

const iso = z
  .string()
  .refine((s) => !Number.isNaN(Date.parse(s)), 'must be an ISO-8601 time')
  .transform((s) => new Date(s).toISOString())

const personRequired = () =>
  new PatchbayError(
    'PERSON_REQUIRED',
    'Only a signed-in person can make a workspace (they become its owner).',
    {
      hint: 'Sign in (POST /v1/auth/sign-in) and call this with the session or a personal key.',
    },
  )

export const workspaceRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    const params = z.object({ id: z.string().min(1).max(200) })

    app.get(
      '/v1/workspaces',
      {
        schema: {
          operationId: 'listWorkspaces',
          tags: ['workspaces'],
          summary:
            'The workspaces you belong to, with your role in each, in the order you joined them, a page at a time (a workspace key: its own)',
          querystring: z.object(pageQuery(200)),
          response: {
            200: z.object({ workspaces: z.array(WorkspaceView), next: nextCursor }),
            ...errorResponses,
          },
        },
      },
      async (req) => {
        if (req.person) return engine.workspaces.pageOfPerson(req.person.personId, req.query)
        return {
          workspaces: [await engine.workspaces.get(req.caller.workspaceId, req.caller.role)],
          next: null,
        }
      },
    )
    app.post(
      '/v1/workspaces',
      {
        schema: {
          operationId: 'createWorkspace',
          tags: ['workspaces'],
          summary: 'Make a workspace; you become its owner',
          body: z.object({ name: z.string().trim().min(1).max(200) }).strict(),
          response: { 201: WorkspaceView, ...errorResponses },
        },
      },
      async (req, reply) => {
        if (!req.person) throw personRequired()
        const made = await engine.workspaces.create(req.body.name, req.person.personId)
        req.audited = { objectId: made.id, workspaceId: made.id, detail: { name: made.name } }
        return reply.code(201).send(made)
      },
    )
    app.post(
      '/v1/workspaces/claim',
      {
        schema: {
          operationId: 'claimWorkspace',
          tags: ['workspaces'],
          summary:
            'Become the owner of a workspace no person owns yet, with the one-time owner-setup token printed at start',
          body: z.object({ token: z.string().min(1).max(500) }).strict(),
          response: { 200: WorkspaceView, ...errorResponses },
        },
      },
      async (req) => {
        if (!req.person) throw personRequired()
        const claimed = await engine.workspaces.claimOwner(req.body.token, req.person.personId)
        req.audited = { objectId: claimed.id, workspaceId: claimed.id }
        return claimed
      },
    )
    app.get(
      '/v1/workspaces/:id',
      {
        schema: {
          operationId: 'getWorkspace',
          tags: ['workspaces'],
          summary: 'One workspace you belong to',
          params,
          response: { 200: WorkspaceView, ...errorResponses },
        },
      },
      async (req) => engine.workspaces.get(req.caller.workspaceId, req.caller.role),
    )
    app.patch(
      '/v1/workspaces/:id',
      {
        schema: {
          operationId: 'updateWorkspace',
          tags: ['workspaces'],
          summary: 'Rename a workspace or change its settings (admins and owners)',
          params,
          body: z
            .object({
              name: z.string().trim().min(1).max(200).optional(),
              settings: z
                .record(z.string(), z.unknown())
                .optional()
                .describe('Merged into the settings; a field set to null is removed.'),
            })
            .strict(),
          response: { 200: WorkspaceView, ...errorResponses },
        },
      },
      async (req) => {
        req.audited = { detail: { name: req.body.name, settings: req.body.settings } }
        return engine.workspaces.update(req.caller.workspaceId, req.caller.role, req.body)
      },
    )
    app.delete(
      '/v1/workspaces/:id',
      {
        schema: {
          operationId: 'deleteWorkspace',
          tags: ['workspaces'],
          summary:
            'Delete a workspace and everything it owns (owners only): upstream webhooks unregistered, credentials and secrets destroyed, keys revoked',
          params,
          response: {
            200: z.object({
              workspaceId: z.string(),
              removed: z.record(z.string(), z.number()).describe('How many of each were removed.'),
              cleanupErrors: z
                .array(z.string())
                .describe('Upstream webhooks that could not be unregistered (all else was removed).'),
            }),
            ...errorResponses,
          },
        },
      },
      async (req) => {
        const removal = await engine.workspaces.delete(req.caller.workspaceId)
        // The workspace's own log went with it: the record of its deletion is kept outside it.
        req.audited = {
          workspaceId: null,
          detail: { workspaceId: removal.workspaceId, removed: removal.removed },
        }
        return removal
      },
    )

    app.get(
      '/v1/keys',
      {
        schema: {
          operationId: 'listKeys',
          tags: ['workspaces'],
          summary:
            "The workspace's keys (never the keys themselves), with who made them and their last use, oldest first, a page at a time",
          querystring: z.object(pageQuery(200)),
          response: {
            200: z.object({ keys: z.array(WorkspaceKeyView), next: nextCursor }),
            ...errorResponses,
          },
        },
      },
      async (req) => engine.workspaceKeys.page(req.caller.workspaceId, req.query),
    )
    app.post(
      '/v1/keys',
      {
        schema: {
          operationId: 'createKey',
          tags: ['workspaces'],
          summary:
            'Make a workspace key with a role (at most yours) and an optional expiry; the key is in this response only',
          body: z
            .object({
              name: z.string().trim().min(1).max(200).describe('A label, e.g. where the key is used.'),
              role: RoleName,
              expiresAt: iso
                .optional()
                .describe('When it stops working (ISO 8601); none: it does not expire.'),
            })
            .strict(),
          response: {
            201: WorkspaceKeyView.extend({
              key: z
                .string()
                .describe('The key in clear, shown once: send it as Authorization: Bearer <key>.'),
            }),
            ...errorResponses,
          },
        },
      },
      async (req, reply) => {
        req.audited = {
          detail: { name: req.body.name, role: req.body.role, expiresAt: req.body.expiresAt ?? null },
        }
        const made = await engine.workspaceKeys.create(req.caller, req.body)
        req.audited.objectId = made.id
        return reply.code(201).send(made)
      },
    )
    app.delete(
      '/v1/keys/:id',
      {
        schema: {
          operationId: 'revokeKey',
          tags: ['workspaces'],
          summary: 'Revoke a workspace key: refused from the next request on, on every instance',
          params,
          response: { 200: WorkspaceKeyView, ...errorResponses },
        },
      },
      async (req) => engine.workspaceKeys.revoke(req.caller.workspaceId, req.params.id),
    )

    app.get(
      '/v1/audit',
      {
        schema: {
          operationId: 'listAudit',
          tags: ['workspaces'],
          summary: 'The audit log: who changed what, when and from where, newest first',
          querystring: z.object({
            actor: z.string().max(200).optional().describe('A person or key id.'),
            object: z.string().max(200).optional().describe('An object id (connection, agent, key …).'),
            action: z
              .string()
              .max(100)
              .optional()
              .describe('An action (key.created), or all of a kind with a trailing dot (key.).'),
            from: iso.optional().describe('From this time on (inclusive).'),
            to: iso.optional().describe('Before this time.'),
            ...pageQuery(200),
          }),
          response: {
            200: z.object({ entries: z.array(AuditEntry), next: nextCursor }),
            ...errorResponses,
          },
        },
      },
      async (req) => {
        return engine.audit.list(req.caller.workspaceId, req.query)
      },
    )
  }
