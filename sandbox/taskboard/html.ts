// The few HTML pages a browser sees: the login-and-approve page shared by the token page and the
// OAuth 1.0a authorize step, the page that shows a token or verifier, and board and card pages.
export function esc(s: string): string {
  return s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  )
}

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${esc(title)}</title></head>
<body>
${body}
</body>
</html>
`
}

const SCOPE_TEXT: Record<string, string> = {
  read: 'Read all of your boards, lists, cards and workspaces',
  write: 'Create and update cards, lists and boards, and make comments for you',
  account: 'Read your email address, update your member information and mark notifications read',
}

const EXPIRATION_TEXT: Record<string, string> = {
  '1hour': 'for 1 hour',
  '1day': 'for 1 day',
  '30days': 'for 30 days',
  never: 'until you revoke it',
}

export function approvePage(opts: {
  appName: string
  scopes: string[]
  expiration: string
  action: string
  hidden: Record<string, string>
  error?: string
}): string {
  const hidden = Object.entries(opts.hidden)
    .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`)
    .join('\n    ')
  const scopes = opts.scopes.map((s) => `<li>${esc(SCOPE_TEXT[s] ?? s)}</li>`).join('')
  return page(
    `Let ${opts.appName} use your account?`,
    `<h1>Let ${esc(opts.appName)} use your account?</h1>
${opts.error ? `<p class="error" role="alert">${esc(opts.error)}</p>` : ''}
<p>The application will be able to:</p>
<ul>${scopes}</ul>
<p>Access lasts ${esc(EXPIRATION_TEXT[opts.expiration] ?? opts.expiration)}.</p>
<form method="POST" action="${esc(opts.action)}">
    ${hidden}
    <label>Username <input name="username" autocomplete="username"></label>
    <label>Password <input name="password" type="password" autocomplete="current-password"></label>
    <button type="submit" name="approve" value="Allow">Allow</button>
    <button type="submit" name="approve" value="Deny">Deny</button>
</form>`,
  )
}

export function tokenPage(token: string, postMessageOrigin?: string): string {
  const script = postMessageOrigin
    ? `<script>if (window.opener) window.opener.postMessage(${JSON.stringify(token)}, ${JSON.stringify(postMessageOrigin)})</script>`
    : ''
  return page(
    'Your token',
    `<h1>You have granted access</h1>
<p>Your token:</p>
<pre id="token">${esc(token)}</pre>
${script}`,
  )
}

export function verifierPage(verifier: string): string {
  return page(
    'Your verification code',
    `<h1>You have granted access</h1>
<p>Enter this verification code in the application:</p>
<pre id="verifier">${esc(verifier)}</pre>`,
  )
}

export function messagePage(title: string, text: string): string {
  return page(title, `<h1>${esc(title)}</h1>\n<p>${esc(text)}</p>`)
}

export function modelPage(kind: 'Board' | 'Card', name: string, jsonUrl: string): string {
  return page(
    `${name} | Taskboard`,
    `<h1>${esc(name)}</h1>
<p>${kind} page. Its data: <a href="${esc(jsonUrl)}">${esc(jsonUrl)}</a> (needs a key and token).</p>`,
  )
}
