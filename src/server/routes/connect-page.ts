// The hosted connect page: where an end user connects an account through a connect link, without
// any workspace key. The link's token rides in the #fragment (never sent to a server, never in a
// log); the page reads it, asks /v1/connect/session what the link allows, shows the workspace's
// name and the allowed connectors, and runs the same sign-ins as the dashboard: credentials (the
// task-board's key + token, the contact-data API key, a code-host token) or the upstream's own
// sign-in pages (redirect). It ends at the link's returnTo with the connection id (or, for a
// sign-in that failed or a link that expired or was used, the error code), or says in words what
// happened (a forged link, a link without a returnTo or whose returnTo is no longer allowed).
import { randomBytes } from 'node:crypto'
import type { FastifyReply } from 'fastify'
import { html, scriptJson } from './html-page.ts'

export function connectPage(reply: FastifyReply, connector: string | null) {
  const nonce = randomBytes(16).toString('base64')
  reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer')
  return html(
    reply,
    200,
    nonce,
    'Connect an account',
    `<h1 id="title">Connect an account</h1>
<p id="intro"></p>
<p id="mcp" hidden></p>
<div id="connectors"></div>
<p id="out" role="status" aria-live="polite"></p>
<p id="err" role="alert" style="color:#a00"></p>
<style>fieldset{margin:1rem 0;border:1px solid #ccc;border-radius:6px}label{display:block;margin:.4rem 0}input{width:100%;box-sizing:border-box;padding:.3rem}button{margin-top:.5rem;padding:.4rem .9rem}</style>
<script nonce="${nonce}">
(function () {
  var only = ${scriptJson(connector)};
  var token = location.hash.slice(1) || sessionStorage.getItem('patchbay-connect-token') || '';
  if (location.hash) {
    // Out of the address bar (and so out of screenshots and shared links), kept for a reload.
    sessionStorage.setItem('patchbay-connect-token', token);
    history.replaceState(null, '', location.pathname + location.search);
  }
  // Another link opened in this tab: start over with it.
  window.addEventListener('hashchange', function () { location.reload(); });
  var $ = function (id) { return document.getElementById(id); };
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text) e.textContent = text;
    return e;
  }
  function fail(body) {
    var e = (body && body.error) || {};
    $('err').textContent = (e.message || 'Something went wrong.') + (e.hint ? ' ' + e.hint : '');
    // A dead link (expired, used) made with a returnTo on the workspace's allowed origins: back to
    // the app with the error code (the server checked the address; a forged link has none).
    var back = e.details && typeof e.details.returnTo === 'string' ? e.details.returnTo : null;
    if (back && /^https?:/i.test(back)) {
      sessionStorage.removeItem('patchbay-connect-token');
      $('connectors').textContent = '';
      $('out').textContent = 'Taking you back…';
      location.href = back;
    }
  }
  if (!token) {
    $('err').textContent = 'This page needs a connect link. Ask the app that sent you here for one.';
    return;
  }
  fetch('/v1/connect/session', { headers: { 'patchbay-connect-token': token } })
    .then(function (r) { return r.json().then(function (j) { return { ok: r.ok, body: j }; }); })
    .then(function (res) {
      if (!res.ok) return fail(res.body);
      var s = res.body;
      returnTo = s.returnTo;
      $('title').textContent = 'Connect an account to ' + s.workspaceName;
      $('intro').textContent = s.workspaceName + ' asks you to connect one of these accounts. Your credentials are checked with the service and kept encrypted; ' + s.workspaceName + ' never sees them.';
      if (s.mcp) {
        $('mcp').hidden = false;
        $('mcp').textContent = 'This link may instead let an MCP client (a desktop assistant, an IDE) act for you: add ' + s.mcp.url + ' to it, and when its sign-in page opens, paste the link ' + s.workspaceName + ' gave you there. Each link is good once.';
      }
      var list = s.connectors.filter(function (c) { return !only || c.id === only; });
      if (list.length === 0) $('err').textContent = 'This connect link does not allow ' + (only || 'any connector') + '.';
      list.forEach(function (c) {
        var box = el('section', { 'data-connector': c.id });
        box.appendChild(el('h2', {}, c.name));
        c.methods.forEach(function (m) {
          var f = el('form', { 'data-method': m.id });
          var fs = el('fieldset', {});
          fs.appendChild(el('legend', {}, m.name));
          fs.appendChild(el('p', {}, m.description));
          m.fields.forEach(function (field) {
            var label = el('label', {}, field.name + (field.description ? ' — ' + field.description : ''));
            label.appendChild(el('input', { name: field.name, type: field.secret ? 'password' : 'text', autocomplete: 'off', 'aria-label': field.name }));
            fs.appendChild(label);
          });
          fs.appendChild(el('button', { type: 'submit' }, m.kind === 'signIn' ? 'Sign in with ' + c.name : 'Connect ' + c.name));
          f.appendChild(fs);
          f.addEventListener('submit', function (ev) {
            ev.preventDefault();
            $('err').textContent = '';
            $('out').textContent = m.kind === 'signIn' ? 'Opening ' + c.name + '…' : 'Checking with ' + c.name + '…';
            if (m.kind === 'signIn') {
              // The code-host signs in in a pop-up (opened now, while the click counts); others redirect.
              var popup = c.id === 'codehost' ? window.open('about:blank', 'patchbay-oauth', 'width=600,height=720') : null;
              post('/v1/connect/oauth/start', { token: token, connector: c.id, authMethod: m.id, mode: popup ? 'popup' : 'redirect' }, function (j) {
                if (popup) popup.location.href = j.authorizeUrl; else location.href = j.authorizeUrl;
              }, function () { if (popup) popup.close(); });
              return;
            }
            var credentials = {};
            m.fields.forEach(function (field) {
              var v = f.elements[field.name].value.trim();
              if (v) credentials[field.name] = v;
            });
            post('/v1/connect/connections', { token: token, connector: c.id, authMethod: m.id, credentials: credentials }, function (j) {
              finish(j.connection.id, j.connection.connector, j.connection.accountName);
            });
          });
          box.appendChild(f);
        });
        $('connectors').appendChild(box);
      });
    })
    .catch(function (err) { $('err').textContent = 'Could not reach Patchbay: ' + err; });
  var returnTo = null;
  function finish(connectionId, connector, accountName) {
    sessionStorage.removeItem('patchbay-connect-token');
    $('connectors').textContent = '';
    $('out').textContent = 'Connected ' + accountName + '.' + (returnTo ? ' Taking you back…' : ' You can close this window.');
    if (returnTo) {
      var u = new URL(returnTo);
      u.searchParams.set('connectionId', connectionId);
      u.searchParams.set('connector', connector);
      location.href = u.toString();
    }
  }
  // A pop-up sign-in reports here (only from Patchbay's own origin).
  window.addEventListener('message', function (e) {
    if (e.origin !== location.origin || !e.data || e.data.type !== 'patchbay:oauth') return;
    if (e.data.error) { $('out').textContent = ''; $('err').textContent = e.data.error; return; }
    finish(e.data.connectionId, e.data.connector, e.data.accountName);
  });
  function post(path, body, done, failed) {
    fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      .then(function (r) { return r.json().then(function (j) { return { ok: r.ok, body: j }; }); })
      .then(function (res) { $('out').textContent = ''; if (!res.ok) { if (failed) failed(); return fail(res.body); } done(res.body); })
      .catch(function (err) { if (failed) failed(); $('out').textContent = ''; $('err').textContent = 'Could not reach Patchbay: ' + err; });
  }
})();
</script>`,
  )
}
