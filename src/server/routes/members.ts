// A workspace's members and invitations:
//   GET/POST /v1/workspaces/{id}/members, PATCH/DELETE /v1/workspaces/{id}/members/{personId}
//   GET/POST /v1/workspaces/{id}/invitations, DELETE /v1/workspaces/{id}/invitations/{invitationId}
//   POST /v1/invitations/{token}/accept (the signed-in person the invitation was sent to)
import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Engine } from '../../engine/engine.ts'
import type { MemberActor } from '../../engine/people/members.ts'
import { PatchbayError } from '../../kit/errors.ts'
import { nextCursor, pageQuery } from '../paging.ts'
import { errorResponses } from '../schemas.ts'
import { originOf, requirePerson } from '../sessions.ts'

const RoleSchema = z
  .enum(['owner', 'admin', 'member', 'viewer'])
  .describe(
    'owner: everything, owners too; admin: members, keys, connections, agents, settings; member: connections, agents, triggers, tools, steps; viewer: reads events, deliveries, runs and usage.',
  )

export const MemberView = z
  .object({
    personId: z.string(),
    email: z.string(),
    name: z.string(),
    role: RoleSchema,
    joinedAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Member' })

export const InvitationView = z
  .object({
    id: z.string(),
    email: z.string(),
    role: RoleSchema,
    status: z.enum(['pending', 'accepted', 'revoked', 'expired']),
    invitedBy: z.string().describe('The person (or key) who invited.'),
    createdAt: z.string(),
    expiresAt: z.string(),
    acceptedAt: z.string().nullable(),
  })
  .meta({ id: 'Invitation' })

/**
 * Who acts on the workspace named in the path, with their role there. The policy table checked
 * the role in the workspace the request acts on (the Patchbay-Workspace header, or a key's own);
 * the path must name that workspace.
 */
export function memberActor(req: FastifyRequest, workspaceId: string): MemberActor {
  const c = req.caller
  if (!c || c.workspaceId !== workspaceId || c.role === null)
    throw new PatchbayError(
      'WORKSPACE_NOT_FOUND',
      `There is no workspace "${workspaceId}" that this request acts on.`,
      {
        hint: `Name it in the Patchbay-Workspace header (Patchbay-Workspace: ${workspaceId}); a key acts only on its own workspace.`,
      },
    )
  const audit: MemberActor['audit'] =
    c.kind === 'person'
      ? { kind: 'person', id: c.personId, label: req.session?.person.email ?? null }
      : { kind: 'key', id: c.keyId, label: null }
  return { role: c.role, personId: c.personId, audit, origin: originOf(req) }
}

export const memberRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    const ws = z.object({ id: z.string().min(1).max(200).describe('The workspace id.') })
    const member = ws.extend({ personId: z.string().min(1).max(200) })

    app.get(
      '/v1/workspaces/:id/members',
      {
        schema: {
          operationId: 'listMembers',
          tags: ['workspaces'],
          summary: "A workspace's members and their roles, in the order they joined, a page at a time",
          params: ws,
          querystring: z.object(pageQuery(200)),
          response: { 200: z.object({ members: z.array(MemberView), next: nextCursor }), ...errorResponses },
        },
      },
      async (req) => {
        memberActor(req, req.params.id)
        const { items, next } = await engine.members.page(req.params.id, req.query)
        return { members: items, next }
      },
    )

    app.post(
      '/v1/workspaces/:id/members',
      {
        schema: {
          operationId: 'addMember',
          tags: ['workspaces'],
          summary:
            'Add a person who has an account, by email, with a role (someone without one: invite them)',
          params: ws,
          body: z.object({ email: z.email().max(320), role: RoleSchema }).strict(),
          response: { 201: MemberView, ...errorResponses },
        },
      },
      async (req, reply) => {
        const actor = memberActor(req, req.params.id)
        return reply.code(201).send(await engine.members.add(actor, req.params.id, req.body))
      },
    )

    app.patch(
      '/v1/workspaces/:id/members/:personId',
      {
        schema: {
          operationId: 'updateMember',
          tags: ['workspaces'],
          summary:
            "Change a member's role; their sessions and the keys they made here stop working at once (they sign in again)",
          params: member,
          body: z.object({ role: RoleSchema }).strict(),
          response: { 200: MemberView, ...errorResponses },
        },
      },
      async (req) => {
        const actor = memberActor(req, req.params.id)
        return engine.members.setRole(actor, req.params.id, req.params.personId, req.body.role)
      },
    )

    app.delete(
      '/v1/workspaces/:id/members/:personId',
      {
        schema: {
          operationId: 'removeMember',
          tags: ['workspaces'],
          summary: 'Remove a member; their sessions and the keys they made here stop working at once',
          params: member,
          response: { 204: z.null(), ...errorResponses },
        },
      },
      async (req, reply) => {
        const actor = memberActor(req, req.params.id)
        await engine.members.remove(actor, req.params.id, req.params.personId)
        return reply.code(204).send(null)
      },
    )

    app.post(
      '/v1/workspaces/:id/invitations',
      {
        schema: {
          operationId: 'createInvitation',
          tags: ['workspaces'],
          summary:
            'Invite an email with a role: a single-use link that expires in 7 days, mailed when SMTP is configured; the token is in this response only',
          params: ws,
          body: z.object({ email: z.email().max(320), role: RoleSchema }).strict(),
          response: {
            201: z.object({
              invitation: InvitationView,
              url: z.string().describe('The link to pass on (the dashboard accepts it).'),
              token: z.string().describe('The link’s token: POST /v1/invitations/{token}/accept.'),
              expiresAt: z.string(),
              mailed: z.boolean().describe('Whether it was mailed (PATCHBAY_SMTP_URL).'),
              mailError: z.string().nullable().describe('Why mailing failed; the invitation stands.'),
            }),
            ...errorResponses,
          },
        },
      },
      async (req, reply) => {
        const actor = memberActor(req, req.params.id)
        return reply.code(201).send(await engine.members.invite(actor, req.params.id, req.body))
      },
    )

    app.get(
      '/v1/workspaces/:id/invitations',
      {
        schema: {
          operationId: 'listInvitations',
          tags: ['workspaces'],
          summary: "A workspace's invitations, newest first (never their tokens), a page at a time",
          params: ws,
          querystring: z.object(pageQuery(200)),
          response: {
            200: z.object({ invitations: z.array(InvitationView), next: nextCursor }),
            ...errorResponses,
          },
        },
      },
      async (req) => {
        memberActor(req, req.params.id)
        return engine.members.pageInvitations(req.params.id, req.query)
      },
    )

    app.delete(
      '/v1/workspaces/:id/invitations/:invitationId',
      {
        schema: {
          operationId: 'revokeInvitation',
          tags: ['workspaces'],
          summary: 'Revoke a pending invitation: its link stops working',
          params: ws.extend({ invitationId: z.string().min(1).max(200) }),
          response: { 204: z.null(), ...errorResponses },
        },
      },
      async (req, reply) => {
        const actor = memberActor(req, req.params.id)
        await engine.members.revokeInvitation(actor, req.params.id, req.params.invitationId)
        return reply.code(204).send(null)
      },
    )

    app.post(
      '/v1/invitations/:token/accept',
      {
        schema: {
          operationId: 'acceptInvitation',
          tags: ['workspaces'],
          summary:
            'Accept an invitation as the signed-in person it was sent to: you join its workspace with its role (once)',
          params: z.object({ token: z.string().min(1).max(200) }),
          response: {
            200: z.object({ workspaceId: z.string(), role: RoleSchema }),
            ...errorResponses,
          },
        },
      },
      async (req) => {
        const { person } = requirePerson(req)
        return engine.members.accept(person, req.params.token, originOf(req))
      },
    )
  }
