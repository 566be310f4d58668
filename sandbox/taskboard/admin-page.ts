// The extension admin page, `{webUrl}/power-ups/admin`: where a member makes a new extension (an
// app) and copies its API key, the first step of getting a key and token (the token page,
// `/1/authorize`, is the second). The sandbox keeps no browser sessions, so "logged in" is the
// member's username and password in the same form, as on the token page.
import type { FastifyInstance, FastifyReply } from 'fastify'
import { esc, page } from './html.ts'
import type { Params } from './params.ts'
import type { Deps } from './routes/helpers.ts'
import type { App } from './store.ts'

export const ADMIN_PATH = '/power-ups/admin'
const MAX_NAME = 100

function formPage(values: { name?: string; username?: string }, error?: string): string {
  return page(
    'Extensions | Admin',
    `<h1>Your extensions</h1>
<p>Make a new extension to get an API key for it.</p>
${error ? `<p class="error" role="alert">${esc(error)}</p>` : ''}
<form method="POST" action="${ADMIN_PATH}">
    <label>Username <input name="username" autocomplete="username" value="${esc(values.username ?? '')}"></label>
    <label>Password <input name="password" type="password" autocomplete="current-password"></label>
    <label>New extension name (required) <input name="name" maxlength="${MAX_NAME}" value="${esc(values.name ?? '')}"></label>
    <button type="submit">Create</button>
</form>`,
  )
}

function createdPage(app: App, authorizeUrl: string): string {
  return page(
    `${app.name} | API key`,
    `<h1>${esc(app.name)}</h1>
<p>Your API key:</p>
<pre id="api-key">${esc(app.key)}</pre>
<p>Its secret (signs OAuth requests and verifies webhooks; keep it like a password):</p>
<pre id="api-secret">${esc(app.secret)}</pre>
<p>Next, get a token with this key: <a id="token-link" href="${esc(authorizeUrl)}">${esc(authorizeUrl)}</a></p>`,
  )
}

export function registerAdminPage(app: FastifyInstance, { store: s }: Deps, baseUrl: () => string): void {
  const html = (reply: FastifyReply, status: number, body: string) =>
    reply.code(status).type('text/html; charset=utf-8').send(body)

  app.get(ADMIN_PATH, async (_req, reply) => html(reply, 200, formPage({})))

  app.post(ADMIN_PATH, async (req, reply) => {
    const p = (req.body && typeof req.body === 'object' ? req.body : {}) as Params
    const text = (k: string) => (typeof p[k] === 'string' ? (p[k] as string) : '')
    const name = text('name').trim()
    const username = text('username')
    const member = username ? s.findMember(username) : undefined
    if (!member || member.password !== text('password'))
      return html(reply, 401, formPage({ name, username }, 'Invalid username or password'))
    if (name === '') return html(reply, 400, formPage({ username }, 'A name is required'))
    if (name.length > MAX_NAME)
      return html(reply, 400, formPage({ username }, `The name is longer than ${MAX_NAME} characters`))
    const made = s.addApp(member.id, name)
    const authorize = new URL('/1/authorize', baseUrl())
    for (const [k, v] of Object.entries({
      expiration: 'never',
      name,
      scope: 'read,write',
      response_type: 'token',
      key: made.key,
    }))
      authorize.searchParams.set(k, v)
    return html(reply, 201, createdPage(made, authorize.toString()))
  })
}
