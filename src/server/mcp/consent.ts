// The sign-in and consent step of an MCP client's OAuth flow (the authorization server sends the
// browser here, mcp/authorization-server.ts):
//   GET  /oauth/interaction/{uid}          → the page: sign in (the dashboard's session), choose the
//                                            workspace and the agent, see what it may touch, allow
//   GET  /oauth/interaction/{uid}/details  → which client asks (from the interaction's cookie)
//   POST /oauth/interaction/{uid}/grant    → a member of the workspace grants one agent: the grant
//                                            is recorded (audited) and the flow resumes
//   POST /oauth/interaction/{uid}/deny     → the flow ends with access_denied
// The interaction is oidc-provider's, found by its own signed cookie (bound to this browser) and
// checked against the uid of the address.
import { randomBytes } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { Provider } from 'oidc-provider'
import { z } from 'zod'
import type { Engine } from '../../engine/engine.ts'
import { PatchbayError } from '../../kit/errors.ts'
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

export const consentRoutes =
  (engine: Engine, server: McpAuthorizationServer): FastifyPluginAsyncZod =>
  async (app) => {
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
  var csrf = null, workspace = null, agents = [], client = null;
  function fail(body) {
    var e = (body && body.error) || {};
    $('err').textContent = (e.message || 'Something went wrong.') + (e.hint ? ' ' + e.hint : '');
  }
  function call(method, path, body) {
    var headers = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (csrf && method !== 'GET') headers['x-csrf-token'] = csrf;
    if (workspace) headers['patchbay-workspace'] = workspace;
    return fetch(path, { method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' })
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
  function loadAgents(id) {
    workspace = id;
    $('allow').disabled = true;
    $('what').textContent = '';
    var box = $('agents');
    while (box.children.length > 1) box.removeChild(box.lastChild);
    call('GET', '/v1/agents').then(function (res) {
      if (!res.ok) return fail(res.body);
      agents = res.body.agents;
      if (agents.length === 0) box.appendChild(el('p', 'This workspace has no agents yet: make one in the dashboard first.'));
      agents.forEach(function (a) {
        var label = el('label');
        var input = document.createElement('input');
        input.type = 'radio'; input.name = 'agent'; input.value = a.id;
        input.onchange = function () { show(a); };
        label.appendChild(input);
        label.appendChild(el('span', a.name + (a.endUserId ? ' — acts for end user ' + a.endUserId : '')));
        box.appendChild(label);
      });
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
    call('POST', base + '/grant', { agentId: chosen.value }).then(function (res) {
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
  call('GET', base + '/details').then(function (res) {
    if (!res.ok) { $('intro').textContent = ''; return fail(res.body); }
    client = res.body.client;
    $('title').textContent = 'Allow ' + (client.name || 'an MCP client') + ' to use Patchbay';
    $('intro').textContent = (client.name || 'An MCP client') + (client.redirectTo ? ' (returning to ' + client.redirectTo + ')' : '') + ' asks to act as one of your agents through Patchbay’s MCP endpoint. Choose the agent; the client gets exactly its access, until you revoke it (the agent’s page in the dashboard, MCP clients).';
    return call('GET', '/v1/me').then(function (me) {
      if (me.ok) return signedIn(me.body);
      $('signin').hidden = false;
    });
  });
})();
</script>`,
  )
}
