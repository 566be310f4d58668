// People signing in and out, and what a signed-in person sees of themselves:
//   POST /v1/auth/sign-up, POST /v1/auth/sign-in       → the session cookie + { person, csrfToken, … }
//   POST /v1/auth/sign-out                              → the session ends (on every instance)
//   GET  /v1/auth/sso/start, GET /v1/auth/sso/callback  → single sign-on (OpenID Connect)
//   POST /v1/auth/password-reset, POST /v1/auth/password-reset/confirm → a forgotten password, by mail
//   GET  /v1/me, GET /v1/me/sessions, DELETE /v1/me/sessions/{id}, POST /v1/me/sessions/end-all
//   POST /v1/me/password                                → change it (other sessions end)
import type { FastifyReply } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Engine } from '../../engine/engine.ts'
import { csrfTokenOf, personView, type StartedSession, sessionView } from '../../engine/people/accounts.ts'
import { safeReturnTo } from '../../engine/people/sso.ts'
import { PatchbayError } from '../../kit/errors.ts'
import { publicRoute } from '../authenticate.ts'
import { nextCursor, pageQuery } from '../paging.ts'
import { ErrorBody, errorResponses } from '../schemas.ts'
import { originOf, requirePerson, type Sessions } from '../sessions.ts'

const Role = z.enum(['owner', 'admin', 'member', 'viewer'])

export const PersonView = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    emailVerified: z.boolean().describe('Proven by an accepted invitation or by single sign-on.'),
    createdAt: z.string(),
  })
  .meta({ id: 'Person' })

export const SessionView = z
  .object({
    id: z.string(),
    method: z.enum(['password', 'sso', 'invitation']).describe('How it was signed in.'),
    createdAt: z.string(),
    lastSeenAt: z.string().describe('Updated at most once a minute.'),
    expiresAt: z.string(),
    address: z.string().nullable().describe('Where it was signed in from.'),
    userAgent: z.string().nullable(),
  })
  .meta({ id: 'PersonSession' })

const MembershipView = z.object({
  id: z.string().describe('The workspace id: send it as the Patchbay-Workspace header.'),
  name: z.string(),
  role: Role,
  joinedAt: z.string(),
})

export const SignedIn = z
  .object({
    person: PersonView,
    session: SessionView.describe('This session (current: true in GET /v1/me/sessions).'),
    csrfToken: z
      .string()
      .describe("Send it as X-CSRF-Token with every change made with this session's cookie."),
    workspaces: z.array(MembershipView).describe('The workspaces the person belongs to, with their role.'),
  })
  .meta({ id: 'SignedIn' })

const wantsJson = (accept: string | undefined) => accept?.includes('application/json') === true

const Credentials = z.object({
  email: z.email().max(320),
  password: z.string().min(1).max(1000),
})

export const authRoutes =
  (engine: Engine, cookies: Sessions): FastifyPluginAsyncZod =>
  async (app) => {
    const signedIn = async (reply: FastifyReply, started: StartedSession, status: 200 | 201) => {
      cookies.set(reply, started)
      const person = (await engine.accounts.people.byId(started.person.id)) ?? started.person
      return reply.code(status).send({
        person: personView(person),
        session: sessionView(started.session),
        csrfToken: started.csrfToken,
        workspaces: await workspacesOf(person.id),
      })
    }
    const workspacesOf = async (personId: string) =>
      (await engine.accounts.people.membershipsOf(personId)).map((m) => ({
        id: m.workspaceId,
        name: m.workspaceName,
        role: m.role,
        joinedAt: m.joinedAt,
      }))

    app.post(
      '/v1/auth/sign-up',
      {
        config: publicRoute,
        schema: {
          operationId: 'signUp',
          tags: ['people'],
          summary:
            'Make an account with a password and sign it in (the session cookie is set); PATCHBAY_SIGNUP decides who may',
          security: [],
          body: Credentials.extend({
            name: z.string().max(200).describe('How the person is shown to others.'),
            invitation: z
              .string()
              .max(200)
              .optional()
              .describe(
                "An invitation's token: the account joins its workspace. Required with PATCHBAY_SIGNUP=invite (the default); its email must be the invitation's.",
              ),
          }).strict(),
          response: { 201: SignedIn, ...errorResponses },
        },
      },
      async (req, reply) => signedIn(reply, await engine.accounts.signUp(req.body, originOf(req)), 201),
    )

    app.post(
      '/v1/auth/claim-owner',
      {
        config: publicRoute,
        schema: {
          operationId: 'claimOwner',
          tags: ['people'],
          summary:
            'The first person of a workspace that has no owner (an upgraded database): with the owner-setup link printed at start, makes the account and its owner, and signs it in',
          description:
            'The link (…/#claim-owner=<token>) works while the workspace has no owner, whatever PATCHBAY_SIGNUP says: it proves the operator gave it. A forged token is 400 OWNER_SETUP_INVALID, a claimed workspace 409; nothing is made then.',
          security: [],
          body: Credentials.extend({
            name: z.string().max(200).describe('How the person is shown to others.'),
            token: z.string().min(1).max(500).describe('The token of the owner-setup link.'),
          }).strict(),
          response: { 201: SignedIn, ...errorResponses },
        },
      },
      async (req, reply) => {
        const { token, ...account } = req.body
        await engine.workspaces.ownerSetupWorkspace(token)
        const started = await engine.accounts.signUp(account, originOf(req), true)
        await engine.workspaces.claimOwner(token, started.person.id)
        return signedIn(reply, started, 201)
      },
    )

    app.post(
      '/v1/auth/sign-in',
      {
        config: publicRoute,
        schema: {
          operationId: 'signIn',
          tags: ['people'],
          summary:
            'Sign in with email and password: sets the session cookie (HttpOnly) and answers the CSRF token for changes',
          description:
            'A wrong password and an unknown account get the same 401 SIGN_IN_FAILED. Failures are limited per account (5) and per address (30) in 15 minutes: past that, 429 SIGN_IN_RATE_LIMITED with Retry-After.',
          security: [],
          body: Credentials.strict(),
          response: { 200: SignedIn, ...errorResponses },
        },
      },
      async (req, reply) => signedIn(reply, await engine.accounts.signIn(req.body, originOf(req)), 200),
    )

    app.post(
      '/v1/auth/password-reset',
      {
        config: publicRoute,
        schema: {
          operationId: 'requestPasswordReset',
          tags: ['people'],
          summary:
            'Forgot the password: mails a single-use reset link (30 minutes) to the account with this email',
          description:
            'The answer is the same whether an account has the email or not. Needs SMTP (PATCHBAY_SMTP_URL): without it 409 PASSWORD_RESET_UNAVAILABLE. Limited per email (5) and per address (30) in 15 minutes: 429 PASSWORD_RESET_RATE_LIMITED with Retry-After.',
          security: [],
          body: z.object({ email: z.string().min(3).max(320) }).strict(),
          response: { 202: z.object({ message: z.string() }), ...errorResponses },
        },
      },
      async (req, reply) => {
        await engine.accounts.requestPasswordReset(req.body.email, originOf(req))
        return reply.code(202).send({
          message:
            'If an account has this email, a link to choose a new password is on its way (it works for 30 minutes).',
        })
      },
    )

    app.post(
      '/v1/auth/password-reset/confirm',
      {
        config: publicRoute,
        schema: {
          operationId: 'resetPassword',
          tags: ['people'],
          summary:
            "Choose a new password with the mailed link's token: every session of the account ends, and a new one starts (the session cookie)",
          description:
            'The link works once (it names the password it replaces) and for 30 minutes; otherwise 400 PASSWORD_RESET_INVALID. Opening it proves the mailbox: the email counts as verified.',
          security: [],
          body: z
            .object({
              token: z
                .string()
                .min(1)
                .max(500)
                .describe('The token of the mailed link (…/#/reset-password/<token>).'),
              password: z.string().max(200).describe('The new password.'),
            })
            .strict(),
          response: { 200: SignedIn, ...errorResponses },
        },
      },
      async (req, reply) =>
        signedIn(reply, await engine.accounts.resetPassword(req.body, originOf(req)), 200),
    )

    app.post(
      '/v1/auth/sign-out',
      {
        schema: {
          operationId: 'signOut',
          tags: ['people'],
          summary: 'End this session (on every instance) and clear its cookie',
          response: { 204: z.null(), ...errorResponses },
        },
      },
      async (req, reply) => {
        const { person, session } = requirePerson(req)
        await engine.accounts.endSession(person, session.id, originOf(req), 'auth.sign_out')
        cookies.clear(reply)
        return reply.code(204).send(null)
      },
    )

    app.get(
      '/v1/me',
      {
        schema: {
          operationId: 'getMe',
          tags: ['people'],
          summary: 'The signed-in person, their workspaces and roles, this session and its CSRF token',
          response: { 200: SignedIn, ...errorResponses },
        },
      },
      async (req) => {
        const { person, session } = requirePerson(req)
        return {
          person: personView(person),
          session: sessionView(session),
          csrfToken: csrfTokenOf(req.sessionToken!),
          workspaces: await workspacesOf(person.id),
        }
      },
    )

    app.get(
      '/v1/me/sessions',
      {
        schema: {
          operationId: 'listMySessions',
          tags: ['people'],
          summary: "The signed-in person's live sessions, newest first, a page at a time",
          querystring: z.object(pageQuery(200)),
          response: {
            200: z.object({
              sessions: z.array(SessionView.extend({ current: z.boolean().describe('The session asking.') })),
              next: nextCursor,
            }),
            ...errorResponses,
          },
        },
      },
      async (req) => {
        const { person, session } = requirePerson(req)
        const { sessions, next } = await engine.accounts.pageSessions(person.id, req.query)
        return { sessions: sessions.map((s) => ({ ...s, current: s.id === session.id })), next }
      },
    )

    app.post(
      '/v1/me/password',
      {
        schema: {
          operationId: 'changeMyPassword',
          tags: ['people'],
          summary:
            'Change your password, given the current one: your other sessions end (on every instance), this one stays',
          description:
            'A wrong current password is 400 CURRENT_PASSWORD_WRONG and counts as a failed sign-in; an account of single sign-on only is 409 PASSWORD_NOT_SET.',
          body: z
            .object({
              currentPassword: z.string().max(200),
              newPassword: z.string().max(200),
            })
            .strict(),
          response: {
            200: z.object({
              otherSessionsEnded: z.number().int().describe('How many other sessions ended.'),
            }),
            ...errorResponses,
          },
        },
      },
      async (req) => {
        const identity = requirePerson(req)
        return { otherSessionsEnded: await engine.accounts.changePassword(identity, req.body, originOf(req)) }
      },
    )

    app.delete(
      '/v1/me/sessions/:id',
      {
        schema: {
          operationId: 'endMySession',
          tags: ['people'],
          summary:
            'End one of your sessions (another browser, a lost laptop); it is refused from its next request on',
          params: z.object({ id: z.string().min(1).max(200) }),
          response: { 204: z.null(), ...errorResponses },
        },
      },
      async (req, reply) => {
        const { person, session } = requirePerson(req)
        await engine.accounts.endSession(person, req.params.id, originOf(req))
        if (req.params.id === session.id) cookies.clear(reply)
        return reply.code(204).send(null)
      },
    )

    app.post(
      '/v1/me/sessions/end-all',
      {
        schema: {
          operationId: 'endAllMySessions',
          tags: ['people'],
          summary: 'Sign out everywhere: every session of yours ends, this one included, on every instance',
          response: { 200: z.object({ ended: z.number().int() }), ...errorResponses },
        },
      },
      async (req, reply) => {
        const { person } = requirePerson(req)
        const ended = await engine.accounts.endAllSessions(person, originOf(req))
        cookies.clear(reply)
        return { ended }
      },
    )

    // ---- single sign-on

    const SSO_COOKIE = 'patchbay_sso'
    const ssoOrThrow = () => {
      if (!engine.sso)
        throw new PatchbayError('SSO_NOT_CONFIGURED', 'Single sign-on is not configured on this Patchbay.')
      return engine.sso
    }

    app.get(
      '/v1/auth/sso',
      {
        config: publicRoute,
        schema: {
          operationId: 'getSsoSettings',
          tags: ['people'],
          summary:
            'Whether single sign-on is offered (the sign-in page shows its button) and how sign-up works',
          security: [],
          response: {
            200: z.object({
              sso: z.boolean(),
              issuer: z.string().nullable(),
              signup: z.enum(['open', 'invite', 'off']).describe('PATCHBAY_SIGNUP.'),
              passwordReset: z
                .boolean()
                .describe('Whether a forgotten password can be reset by mail (SMTP configured).'),
            }),
            ...errorResponses,
          },
        },
      },
      async () => ({
        sso: engine.sso !== null,
        issuer: engine.sso?.issuer ?? null,
        signup: engine.accounts.signup,
        passwordReset: engine.accounts.resetsByMail,
      }),
    )

    app.get(
      '/v1/auth/sso/start',
      {
        config: publicRoute,
        schema: {
          operationId: 'startSso',
          tags: ['people'],
          summary: "Single sign-on: redirects the browser to the identity provider's sign-in page",
          security: [],
          querystring: z.object({
            returnTo: z
              .string()
              .max(2048)
              .optional()
              .describe('A path on Patchbay to return to after signing in (default /).'),
          }),
          response: {
            200: z
              .object({ url: z.string().describe("The provider's sign-in page: open it in this browser.") })
              .describe('Asked with Accept: application/json (a script that navigates itself).'),
            302: z.null().describe('To the identity provider.'),
            ...errorResponses,
          },
        },
      },
      async (req, reply) => {
        const { url, state } = await ssoOrThrow().start(safeReturnTo(req.query.returnTo))
        // Binds the sign-in to this browser: the callback must come back with this state.
        reply.setCookie(SSO_COOKIE, state, {
          httpOnly: true,
          // Lax: the cookie comes along on the provider's top-level redirect back to Patchbay.
          sameSite: 'lax',
          secure: cookies.secure,
          path: '/v1/auth/sso',
          maxAge: 600,
        })
        if (wantsJson(req.headers.accept)) return reply.code(200).send({ url })
        return reply.code(302).header('location', url).send(null)
      },
    )

    app.get(
      '/v1/auth/sso/callback',
      {
        config: publicRoute,
        schema: {
          operationId: 'finishSso',
          tags: ['people'],
          summary:
            'Single sign-on: where the identity provider sends the browser back; signs in and redirects to returnTo',
          description:
            'Checked: the state against the cookie of the browser that started, PKCE, the ID token (signature, issuer, audience, nonce, times). A refusal is a 4xx SSO_FAILED or SSO_NO_ACCESS, audited.',
          security: [],
          // What the provider sends back (RFC 6749, RFC 9207); read from the address as a whole.
          querystring: z.looseObject({
            state: z.string().optional().describe('The state GET /v1/auth/sso/start sent.'),
            code: z.string().optional().describe('The authorization code.'),
            iss: z.string().optional().describe("The provider's issuer (RFC 9207)."),
            error: z.string().optional().describe('Why the provider ended the sign-in, e.g. access_denied.'),
            error_description: z.string().optional(),
          }),
          response: {
            200: SignedIn.describe('Signed in, asked with Accept: application/json.'),
            302: z.null().describe('Signed in: to returnTo (the session cookie is set).'),
            400: ErrorBody,
            ...errorResponses,
          },
        },
      },
      async (req, reply) => {
        const sso = ssoOrThrow()
        // The address the provider sent the browser to, as the provider built it.
        const current = new URL(req.url, sso.redirectUri)
        const state = req.cookies[SSO_COOKIE]
        reply.clearCookie(SSO_COOKIE, {
          path: '/v1/auth/sso',
          httpOnly: true,
          sameSite: 'lax',
          secure: cookies.secure,
        })
        const started = await sso.finish(current, state, originOf(req))
        if (wantsJson(req.headers.accept)) return signedIn(reply, started, 200)
        cookies.set(reply, started)
        return reply.code(302).header('location', started.returnTo).send(null)
      },
    )
  }
