// Sandbox code-host helpers for tests: its control API, calls as a user with a token, and a
// browser's part of the sign-in (the login-and-approve form, followed by hand).
import type { CodehostSandbox } from '../../sandbox/codehost/index.ts'
import { eventually } from './receiver.ts'
import type { TestService } from './service.ts'
import { control } from './taskboard.ts'

export { control }

/** The sandbox's control API (`/_sandbox/act` and friends). */
export const ch = (sb: CodehostSandbox, method: string, path: string, body?: unknown) =>
  control(sb, method, path, body)

/** Acts as a user through the control API: star, open_issue, comment, open_pull, review … */
export const act = (sb: CodehostSandbox, action: string, fields: Record<string, unknown> = {}) =>
  control(sb, 'POST', '/act', { as: 'octo-demo', owner: 'octo-demo', repo: 'hello-world', action, ...fields })

/** A REST call to the code-host as a token's owner. */
export async function api(sb: CodehostSandbox, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${sb.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      accept: 'application/vnd.codehost+json',
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  })
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null }
}

/** A fresh token: classic (scopes), or fine-grained for selected repositories. */
export async function mintToken(
  sb: CodehostSandbox,
  opts:
    | { kind: 'classic'; login?: string; scopes: string[] }
    | {
        kind: 'fine_grained'
        login?: string
        owner?: string
        repositories: string[]
        permissions?: Record<string, string>
      },
): Promise<string> {
  const made = await control(sb, 'POST', '/tokens', { login: 'octo-demo', owner: 'octo-demo', ...opts })
  return made.token
}

/** Connects the code-host sandbox's demo account (its token) to the Patchbay that started it; returns the connection id. */
export async function connectDemoCodehost(t: TestService): Promise<string> {
  const res = await t.api('POST', '/v1/connections', {
    connector: 'codehost',
    authMethod: 'token',
    credentials: { token: t.codehost!.demo.token },
  })
  if (res.status !== 201) throw new Error(`connect: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body.id
}

/**
 * Connects a code-host account with a token as a connection of its own (`second`: tests compare
 * tokens of one account side by side); returns the connection id.
 */
export async function connectWithToken(t: TestService, token: string): Promise<string> {
  const res = await t.api('POST', '/v1/connections', {
    connector: 'codehost',
    authMethod: 'token',
    credentials: { token },
    second: true,
  })
  if (res.status !== 201) throw new Error(`connect: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body.id
}

function hiddenInputs(html: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    out[m[1]] = m[2].replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)))
  return out
}

/**
 * What a browser does in the pop-up: opens the authorize address, signs in and approves (or
 * declines), and follows the redirect to Patchbay's callback. Returns the callback's answer.
 */
export async function signInLikeABrowser(
  sb: CodehostSandbox,
  authorizeUrl: string,
  opts: { login?: string; password?: string; approve?: boolean } = {},
): Promise<{
  callbackUrl: string
  status: number
  contentType: string
  html: string
  location: string | null
}> {
  const page = await fetch(authorizeUrl)
  const html = await page.text()
  if (page.status !== 200) throw new Error(`authorize page: ${page.status} ${html.slice(0, 200)}`)
  const form = hiddenInputs(html)
  const posted = await fetch(`${sb.webUrl}/login/oauth/authorize`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      ...form,
      login: opts.login ?? sb.demo.login,
      password: opts.password ?? sb.demo.password,
      authorize: opts.approve === false ? '0' : '1',
    }).toString(),
  })
  const callbackUrl = posted.headers.get('location')
  if (posted.status !== 302 || !callbackUrl)
    throw new Error(`sign-in form: ${posted.status} ${(await posted.text()).slice(0, 300)}`)
  const cb = await fetch(callbackUrl, { redirect: 'manual' })
  return {
    callbackUrl,
    status: cb.status,
    contentType: cb.headers.get('content-type') ?? '',
    html: await cb.text(),
    location: cb.headers.get('location'),
  }
}

/**
 * Waits until the code-host sandbox the Patchbay started has sent every webhook and Patchbay has
 * pushed every delivery and finished its background work.
 */
export async function settle(t: TestService): Promise<void> {
  await eventually(
    () => ch(t.codehost!, 'GET', '/webhooks/deliveries?outcome=pending'),
    (r) => r.deliveries.length === 0,
  )
  await eventually(
    async () => (await t.api('GET', '/v1/deliveries?status=pending&limit=500')).body.deliveries.length,
    (n) => n === 0,
  )
  await t.service.engine.events.jobs.idle()
}
