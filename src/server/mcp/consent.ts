// The sign-in and consent step of an MCP client's OAuth flow (the authorization server sends the
// browser here, mcp/authorization-server.ts):
//   GET  /oauth/interaction/{uid}          → the page: sign in (the dashboard's session), choose the
//                                            workspace and the agent, see what it may touch, allow
//   GET  /oauth/interaction/{uid}/details  → which client asks (from the interaction's cookie)
//   POST /oauth/interaction/{uid}/grant    → a member of the workspace grants one agent: the grant
//                                            is recorded (audited) and the flow resumes
//   GET  /oauth/interaction/{uid}/end-user → with a connect token (Patchbay-Connect-Token): the end
//                                            user of that connect session and the agents bound to them
//   POST /oauth/interaction/{uid}/grant-as-end-user
//                                          → the end user grants one agent bound to them; the connect
//                                            session is spent (single use), the grant recorded (audited)
//   POST /oauth/interaction/{uid}/deny     → the flow ends with access_denied
// The interaction is oidc-provider's, found by its own signed cookie (bound to this browser) and
// checked against the uid of the address.
//
// An end user has no account in Patchbay: the operator's backend vouches for them with a connect
// session made with allowMcpGrant (POST /v1/connect-sessions). Its token reaches the page after the
// # of the authorization address (browsers keep a fragment across the redirect to this page, and
// never send it to a server), or pasted on the page. Refusals (a forged, expired or used token, a
// link not made for MCP, an agent not bound to that end user) change nothing and are audited as
// `mcp_oauth.refused`.
import { randomBytes } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { Provider } from 'oidc-provider'
import { z } from 'zod'
import type { Engine } from '../../engine/engine.ts'
import { PatchbayError } from '../../kit/errors.ts'
import type { ConnectSessionRow } from '../../store/end-users.ts'
import { agentViewSchema } from '../agent-schemas.ts'
import { html } from '../routes/html-page.ts'
import { requirePerson } from '../sessions.ts'
import type { McpAuthorizationServer } from './authorization-server.ts'
import { MCP_SCOPE, mcpResource } from './protected-resource.ts'

const consentInvalid = (why: string) =>
  new PatchbayError('MCP_CONSENT_INVALID', `This sign-in cannot be finished: ${why}.`)

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>

/** The interaction this browser is in, for the uid of the address. */
async function interactionOf(
  provider: Provider,
  req: FastifyRequest<{ Params: { uid: string } }>,
  reply: FastifyReply,
): Promise<Interaction> {
  let interaction: Interaction
  try {
    interaction = await provider.interactionDetails(req.raw, reply.raw)
  } catch {
    throw consentInvalid('the authorization request is unknown or expired in this browser')
  }
  if (interaction.uid !== req.params.uid)
    throw consentInvalid('this page belongs to another authorization request of this browser')
  return interaction
}

const Params = z.object({ uid: z.string().min(1).max(100) })
const Redirect = z.object({ redirectTo: z.string().describe('Where the browser goes next.') })
const TOKEN_HEADER = 'patchbay-connect-token'
const ConnectToken = z.string().max(200).describe('The connect session token (made with allowMcpGrant).')
/** What the consent page shows an end user, with agents for the connectors' place kinds. */
const endUserConsent = (AgentView: ReturnType<typeof agentViewSchema>) =>
  z.object({
    workspaceName: z.string(),
    endUserId: z.string(),
    displayName: z.string().nullable(),
    expiresAt: z.string(),
    agents: z.array(AgentView).describe('The agents bound to this end user: the only ones they may grant.'),
  })

export const consentRoutes =
  (engine: Engine, server: McpAuthorizationServer): FastifyPluginAsyncZod =>
  async (app) => {
    const EndUserConsent = endUserConsent(agentViewSchema(engine.registry.places))
    app.get(
      '/oauth/interaction/:uid',
      { schema: { hide: true, params: Params }, config: { operation: 'getMcpConsentPage' } },
      async (_req, reply) => consentPage(reply),
    )

    app.get(
      '/oauth/interaction/:uid/details',
      { schema: { hide: true, params: Params }, config: { operation: 'getMcpConsentPage' } },
      async (req, reply) => {
        const provider = await server.provider(req.log)
        const interaction = await interactionOf(provider, req, reply)
        const client = await provider.Client.find(String(interaction.params.client_id))
        if (!client) throw consentInvalid('the client is no longer registered')
        const redirect = URL.parse(String(interaction.params.redirect_uri ?? ''))
        reply.header('cache-control', 'no-store')
        return {
          client: {
            id: client.clientId,
            name: client.clientName ?? null,
            redirectTo: redirect?.origin ?? null,
          },
          resource: mcpResource(engine),
          scope: MCP_SCOPE,
        }
      },
    )

    app.post(
      '/oauth/interaction/:uid/grant',
      {
        schema: {
          hide: true,
          params: Params,
          body: z.object({ agentId: z.string().min(1).max(200) }).strict(),
          response: { 200: Redirect },
        },
        config: { operation: 'grantMcpAccess' },
      },
      async (req, reply) => {
        const session = requirePerson(req)
        const caller = req.caller
        const provider = await server.provider(req.log)
        const interaction = await interactionOf(provider, req, reply)
        const clientId = String(interaction.params.client_id)
        const client = await provider.Client.find(clientId)
        if (!client) throw consentInvalid('the client is no longer registered')
        // The agent is the workspace's (404 otherwise): the person is a member there (the policy's check).
        const agent = await engine.agents.get(caller.workspaceId, req.body.agentId)
        const resource = mcpResource(engine)
        const grant = new provider.Grant({ accountId: session.person.id, clientId })
        // What the request asked for, within what this server offers: /mcp's one scope (a resource
        // scope, also listed among the server's scopes so clients may register with it), and the
        // OpenID ones a client may add. (The first step is the login prompt, which lists no missing
        // scopes yet: the request's own scope parameter says what it asks.)
        grant.addResourceScope(resource, MCP_SCOPE)
        const asked = new Set(String(interaction.params.scope ?? '').split(' '))
        const oidc = ['openid', 'offline_access', MCP_SCOPE].filter((s) => asked.has(s))
        if (oidc.length > 0) grant.addOIDCScope(oidc.join(' '))
        const grantId = await grant.save()
        const view = await engine.mcpGrants.create({
          id: grantId,
          workspaceId: caller.workspaceId,
          agentId: agent.id,
          personId: session.person.id,
          clientId,
          clientName: client.clientName ?? null,
          resource,
          scope: MCP_SCOPE,
        })
        req.audited = {
          objectId: grantId,
          objectKind: 'mcp_grant',
          detail: { agentId: agent.id, clientId, clientName: view.client.name, endUserId: view.endUserId },
        }
        const redirectTo = await provider.interactionResult(
          req.raw,
          reply.raw,
          { login: { accountId: session.person.id }, consent: { grantId } },
          { mergeWithLastSubmission: false },
        )
        return { redirectTo }
      },
    )

    /** Writes a refusal of the end-user consent step to the audit log, then throws it. */
    const refuse = async (
      req: FastifyRequest,
      err: PatchbayError,
      session: ConnectSessionRow | undefined,
      detail: Record<string, unknown> = {},
    ): Promise<never> => {
      await engine.audit
        .record({
          workspaceId: session?.workspace_id ?? null,
          actor: { kind: 'anonymous', id: null },
          action: 'mcp_oauth.refused',
          objectKind: 'connect_session',
          objectId: session?.id ?? null,
          outcome: 'refused',
          detail: {
            endpoint: 'consent',
            error: err.code,
            description: err.message,
            endUserId: session?.end_user_id ?? null,
            ...detail,
          },
          address: req.ip,
          userAgent: typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : null,
        })
        .catch((e) => req.log.warn({ err: e }, 'could not audit a refused MCP consent'))
      throw err
    }
    /** The usable MCP connect session of a token, or the refusal (audited). */
    const sessionOf = async (req: FastifyRequest, token: string | undefined, clientId: string | null) => {
      const { session, refusal } = await engine.endUsers.mcpSession(token)
      if (refusal || !session)
        return refuse(req, refusal ?? consentInvalid('no connect link'), session, { clientId })
      return session
    }

    app.get(
      '/oauth/interaction/:uid/end-user',
      {
        schema: {
          hide: true,
          params: Params,
          headers: z.looseObject({ [TOKEN_HEADER]: ConnectToken.optional() }),
          response: { 200: EndUserConsent },
        },
        config: { operation: 'describeMcpConsentForEndUser' },
      },
      async (req, reply) => {
        // Per link (the token is a header, not part of the address): never answered from a cache,
        // refusals included (a 410 is cacheable by default), or one link's answer would show for another.
        reply.header('cache-control', 'no-store')
        const provider = await server.provider(req.log)
        const interaction = await interactionOf(provider, req, reply)
        const session = await sessionOf(
          req,
          req.headers[TOKEN_HEADER] as string | undefined,
          String(interaction.params.client_id),
        )
        return engine.endUsers.mcpConsent(session)
      },
    )

    app.post(
      '/oauth/interaction/:uid/grant-as-end-user',
      {
        schema: {
          hide: true,
          params: Params,
          body: z.object({ token: ConnectToken, agentId: z.string().min(1).max(200) }).strict(),
          response: { 200: Redirect },
        },
        config: { operation: 'grantMcpAccessAsEndUser' },
      },
      async (req, reply) => {
        const provider = await server.provider(req.log)
        const interaction = await interactionOf(provider, req, reply)
        const clientId = String(interaction.params.client_id)
        const session = await sessionOf(req, req.body.token, clientId)
        const agent = await engine.endUsers.mcpAgent(session, req.body.agentId)
        if (agent instanceof PatchbayError)
          return refuse(req, agent, session, { clientId, agentId: req.body.agentId })
        const client = await provider.Client.find(clientId)
        if (!client) throw consentInvalid('the client is no longer registered')
        // Spent before anything is granted (one grant, even when two requests race).
        if (!(await engine.endUsers.spendOnMcpGrant(session)))
          return refuse(
            req,
            new PatchbayError('CONNECT_SESSION_USED', 'This connect link has already been used.', {
              hint: 'Each link is good once: ask the app that sent you here for a new one.',
            }),
            session,
            { clientId, agentId: agent.id },
          )
        const accountId = `end-user:${session.id}`
        const resource = mcpResource(engine)
        let grantId: string | undefined
        try {
          const grant = new provider.Grant({ accountId, clientId })
          grant.addResourceScope(resource, MCP_SCOPE)
          const asked = new Set(String(interaction.params.scope ?? '').split(' '))
          const oidc = ['openid', 'offline_access', MCP_SCOPE].filter((s) => asked.has(s))
          if (oidc.length > 0) grant.addOIDCScope(oidc.join(' '))
          grantId = await grant.save()
          const view = await engine.mcpGrants.create({
            id: grantId,
            workspaceId: session.workspace_id,
            agentId: agent.id,
            personId: null,
            endUserId: session.end_user_id,
            connectSessionId: session.id,
            clientId,
            clientName: client.clientName ?? null,
            resource,
            scope: MCP_SCOPE,
          })
          await engine.audit.record({
            workspaceId: session.workspace_id,
            actor: { kind: 'anonymous', id: null },
            action: 'mcp_grant.created',
            objectKind: 'mcp_grant',
            objectId: grantId,
            outcome: 'ok',
            detail: {
              agentId: agent.id,
              clientId,
              clientName: view.client.name,
              endUserId: session.end_user_id,
              connectSession: session.id,
            },
            address: req.ip,
            userAgent: typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : null,
          })
        } catch (err) {
          // Nothing granted: the link is given back, the provider's grant (if saved) removed.
          if (grantId) await engine.mcpGrants.records.deleteGrant(grantId).catch(() => 0)
          await engine.endUsers.giveBackMcpSession(session)
          throw err
        }
        const redirectTo = await provider.interactionResult(
          req.raw,
          reply.raw,
          { login: { accountId }, consent: { grantId } },
          { mergeWithLastSubmission: false },
        )
        return { redirectTo }
      },
    )

    app.post(
      '/oauth/interaction/:uid/deny',
      {
        schema: { hide: true, params: Params, response: { 200: Redirect } },
        config: { operation: 'denyMcpAccess' },
      },
      async (req, reply) => {
        const provider = await server.provider(req.log)
        await interactionOf(provider, req, reply)
        const redirectTo = await provider.interactionResult(
          req.raw,
          reply.raw,
          {
            error: 'access_denied',
            error_description: 'The person signed in to Patchbay did not allow access.',
          },
          { mergeWithLastSubmission: false },
        )
        return { redirectTo }
      },
    )
  }

function consentPage(reply: FastifyReply) {
  const nonce = randomBytes(16).toString('base64')
  // Never inside another site's frame: a click on Allow must be the person's own.
  reply
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
  return html(
    reply,
    200,
    nonce,
    'Allow an MCP client',
    `<h1 id="title">Allow an MCP client</h1>
<p id="intro">Loading…</p>
<form id="signin" hidden>
  <p>Sign in to Patchbay to choose what the client may act as.</p>
  <label>Email <input id="email" type="email" autocomplete="username" required></label>
  <label>Password <input id="password" type="password" autocomplete="current-password" required></label>
  <button type="submit">Sign in</button>
</form>
<form id="link" hidden>
  <p>Sent here by an app? Paste the connect link it gave you.</p>
  <label>Connect link <input id="linkInput" type="text" autocomplete="off" spellcheck="false" required></label>
  <button type="submit">Continue</button>
</form>
<section id="choose" hidden>
  <p id="who"></p>
  <label id="wsLabel">Workspace <select id="workspace"></select></label>
  <fieldset id="agents"><legend>The agent it acts as</legend></fieldset>
  <div id="what" aria-live="polite"></div>
  <button id="allow" type="button" disabled>Allow</button>
  <button id="deny" type="button">Deny</button>
</section>
<p id="err" role="alert" style="color:#a00"></p>
<style>label{display:block;margin:.4rem 0}input,select{width:100%;box-sizing:border-box;padding:.3rem}button{margin:.5rem .5rem 0 0;padding:.4rem .9rem}fieldset{margin:1rem 0;border:1px solid #ccc;border-radius:6px}fieldset label{display:flex;gap:.5rem;align-items:baseline}fieldset input{width:auto}#what{background:#f6f6f6;padding:.2rem .8rem;border-radius:6px}</style>
<script nonce="${nonce}">
(function () {
  var base = location.pathname.replace(/\\/$/, '');
  var $ = function (id) { return document.getElementById(id); };
  var csrf = null, workspace = null, agents = [], client = null, connectToken = null;
  // A connect link's token: after the # of the address (the app sent the browser with it), or pasted.
  function tokenOf(text) {
    var t = String(text || '').trim();
    var i = t.indexOf('#');
    if (i >= 0) t = t.slice(i + 1);
    return /^pbcs_[A-Za-z0-9_-]{10,190}$/.test(t) ? t : null;
  }
  function fail(body) {
    var e = (body && body.error) || {};
    $('err').textContent = (e.message || 'Something went wrong.') + (e.hint ? ' ' + e.hint : '');
  }
  function call(method, path, body) {
    var headers = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (csrf && method !== 'GET') headers['x-csrf-token'] = csrf;
    if (connectToken && method === 'GET') headers['patchbay-connect-token'] = connectToken;
    if (workspace) headers['patchbay-workspace'] = workspace;
    return fetch(path, { method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin', cache: 'no-store' })
      .then(function (r) { return r.text().then(function (t) { return { status: r.status, ok: r.ok, body: t ? JSON.parse(t) : null }; }); });
  }
  function el(tag, text) { var e = document.createElement(tag); if (text) e.textContent = text; return e; }
  function signedIn(me) {
    csrf = me.csrfToken;
    $('signin').hidden = true;
    $('choose').hidden = false;
    $('who').textContent = 'Signed in as ' + me.person.email + '.';
    var ws = me.workspaces.filter(function (w) { return w.role !== 'viewer'; });
    var sel = $('workspace');
    sel.textContent = '';
    ws.forEach(function (w) { var o = el('option', w.name + ' (' + w.role + ')'); o.value = w.id; sel.appendChild(o); });
    if (ws.length === 0) { $('err').textContent = 'You are a member of no workspace where you may grant access (a viewer may not).'; return; }
    sel.onchange = function () { loadAgents(sel.value); };
    loadAgents(ws[0].id);
  }
  function listAgents(list) {
    agents = list;
    var box = $('agents');
    while (box.children.length > 1) box.removeChild(box.lastChild);
    agents.forEach(function (a) {
      var label = el('label');
      var input = document.createElement('input');
      input.type = 'radio'; input.name = 'agent'; input.value = a.id;
      input.onchange = function () { show(a); };
      label.appendChild(input);
      label.appendChild(el('span', a.name + (a.endUserId ? ' — acts for end user ' + a.endUserId : '')));
      box.appendChild(label);
    });
  }
  function asEndUser(token) {
    connectToken = token;
    $('err').textContent = '';
    call('GET', base + '/end-user').then(function (res) {
      if (!res.ok) { connectToken = null; return fail(res.body); }
      var me = res.body;
      $('signin').hidden = true;
      $('link').hidden = true;
      $('choose').hidden = false;
      $('wsLabel').hidden = true;
      $('who').textContent = 'You are ' + (me.displayName ? me.displayName + ' (' + me.endUserId + ')' : me.endUserId) + ' of ' + me.workspaceName + ', through a connect link. You may allow the client an agent that acts for you:';
      listAgents(me.agents);
      if (me.agents.length === 0) $('agents').appendChild(el('p', 'No agent acts for you yet: ask ' + me.workspaceName + ' for one.'));
    });
  }
  function loadAgents(id) {
    workspace = id;
    $('allow').disabled = true;
    $('what').textContent = '';
    var box = $('agents');
    while (box.children.length > 1) box.removeChild(box.lastChild);
    // Every agent: page after page, each asked for with the previous page's next.
    function all(cursor, got) {
      return call('GET', '/v1/agents?limit=200' + (cursor ? '&cursor=' + encodeURIComponent(cursor) : '')).then(function (res) {
        if (!res.ok) return res;
        got = got.concat(res.body.agents);
        return res.body.next ? all(res.body.next, got) : { ok: true, body: { agents: got } };
      });
    }
    all(null, []).then(function (res) {
      if (!res.ok) return fail(res.body);
      listAgents(res.body.agents);
      if (agents.length === 0) box.appendChild(el('p', 'This workspace has no agents yet: make one in the dashboard first.'));
    });
  }
  function show(a) {
    var what = $('what');
    what.textContent = '';
    what.appendChild(el('p', (client.name || 'The client') + ' will act as ' + a.name + ', with exactly its access:'));
    var ul = el('ul');
    // One line per list of its scope (one per place kind the connectors declare: Boards, …).
    Object.keys(a.scope || {}).forEach(function (key) {
      var places = a.scope[key] || [];
      ul.appendChild(el('li', key.charAt(0).toUpperCase() + key.slice(1) + ': ' + (places.length ? places.join(', ') : 'none')));
    });
    ul.appendChild(el('li', 'Connections: ' + a.connectionIds.length + (a.endUserId ? ' of end user ' + a.endUserId : '')));
    var sel = a.toolSelection;
    var tools = sel ? [].concat(sel.steps || [], sel.tools || []) : [];
    ul.appendChild(el('li', 'Tools: ' + (sel ? (tools.length ? tools.join(', ') : 'none') : 'every step of its connections and all its tools')));
    what.appendChild(ul);
    $('allow').disabled = false;
  }
  $('allow').onclick = function () {
    var chosen = document.querySelector('input[name=agent]:checked');
    if (!chosen) return;
    $('allow').disabled = true;
    var grant = connectToken
      ? call('POST', base + '/grant-as-end-user', { token: connectToken, agentId: chosen.value })
      : call('POST', base + '/grant', { agentId: chosen.value });
    grant.then(function (res) {
      if (!res.ok) { $('allow').disabled = false; return fail(res.body); }
      location.assign(res.body.redirectTo);
    });
  };
  $('deny').onclick = function () {
    call('POST', base + '/deny').then(function (res) {
      if (!res.ok) return fail(res.body);
      location.assign(res.body.redirectTo);
    });
  };
  $('signin').onsubmit = function (e) {
    e.preventDefault();
    call('POST', '/v1/auth/sign-in', { email: $('email').value, password: $('password').value }).then(function (res) {
      if (!res.ok) return fail(res.body);
      $('err').textContent = '';
      signedIn(res.body);
    });
  };
  $('link').onsubmit = function (e) {
    e.preventDefault();
    var token = tokenOf($('linkInput').value);
    if (!token) { $('err').textContent = 'That is not a connect link: paste the whole link the app gave you (it ends with #pbcs_…).'; return; }
    asEndUser(token);
  };
  // The fragment is read once and taken off the address (it is a credential).
  var fromAddress = tokenOf(location.hash);
  if (location.hash) history.replaceState(null, '', location.pathname + location.search);
  call('GET', base + '/details').then(function (res) {
    if (!res.ok) { $('intro').textContent = ''; return fail(res.body); }
    client = res.body.client;
    $('title').textContent = 'Allow ' + (client.name || 'an MCP client') + ' to use Patchbay';
    $('intro').textContent = (client.name || 'An MCP client') + (client.redirectTo ? ' (returning to ' + client.redirectTo + ')' : '') + ' asks to act as one of your agents through Patchbay’s MCP endpoint. Choose the agent; the client gets exactly its access, until you revoke it (the agent’s page in the dashboard, MCP clients).';
    if (fromAddress) return asEndUser(fromAddress);
    return call('GET', '/v1/me').then(function (me) {
      if (me.ok) return signedIn(me.body);
      $('signin').hidden = false;
      $('link').hidden = false;
    });
  });
})();
</script>`,
  )
}
