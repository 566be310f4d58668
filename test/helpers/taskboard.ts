// Sandbox task-board helpers for tests, through the emulator's control API.
import assert from 'node:assert/strict'
import type { TaskboardSandbox } from '../../sandbox/taskboard/index.ts'

export async function control(
  sandbox: { url: string },
  method: string,
  path: string,
  body?: unknown,
): Promise<any> {
  const res = await fetch(`${sandbox.url}/_sandbox${path}`, {
    method,
    headers: body !== undefined ? { 'content-type': 'application/json' } : {},
    body: body !== undefined ? JSON.stringify(body) : undefined,
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`sandbox control ${method} ${path}: ${res.status} ${text}`)
  return text ? JSON.parse(text) : null
}

/** The task-board's REST API as the demo app, with the demo token or another; an error status throws. */
export async function taskboardRest(
  sandbox: TaskboardSandbox,
  method: string,
  path: string,
  body?: unknown,
  token: string = sandbox.demo.token,
): Promise<any> {
  const res = await fetch(`${sandbox.url}${path}`, {
    method,
    headers: {
      authorization: `OAuth oauth_consumer_key="${sandbox.demo.key}", oauth_token="${token}"`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return text ? JSON.parse(text) : null
}

/** A new member with an app key and a token of its own. */
export async function mintTaskboardToken(
  sandbox: TaskboardSandbox,
  opts: { username?: string; scope?: string; expiration?: string } = {},
): Promise<{ memberId: string; username: string; key: string; token: string }> {
  const member = await control(sandbox, 'POST', '/members', {
    username: opts.username ?? `user${Math.random().toString(36).slice(2, 8)}`,
  })
  const app = await control(sandbox, 'POST', '/apps', { memberId: member.id })
  const token = await control(sandbox, 'POST', '/tokens', {
    memberId: member.id,
    key: app.key,
    scope: opts.scope ?? 'read,write',
    expiration: opts.expiration ?? 'never',
  })
  return { memberId: member.id, username: member.username, key: app.key, token: token.token }
}

/** A fresh token for the demo member under the demo key. */
export async function mintDemoToken(sandbox: TaskboardSandbox, scope = 'read,write'): Promise<string> {
  const token = await control(sandbox, 'POST', '/tokens', {
    memberId: sandbox.demo.memberId,
    key: sandbox.demo.key,
    scope,
    expiration: 'never',
  })
  return token.token
}

const decode = (s: string) =>
  s.replace(
    /&(amp|quot|lt|gt|#39);/g,
    (_m, e) => ({ amp: '&', quot: '"', lt: '<', gt: '>', '#39': "'" })[e as 'amp'],
  )

/**
 * What a browser does on the task-board's login-and-approve page: load it, fill in the form and
 * press Allow or Deny. Answers the form's response without following its redirect.
 */
export async function approve(pageUrl: string, as: { username: string; password: string }, button = 'Allow') {
  const page = await fetch(pageUrl)
  assert.equal(page.status, 200, `the approve page answers (${pageUrl})`)
  const html = await page.text()
  const form = /<form method="POST" action="([^"]+)">([\s\S]*?)<\/form>/.exec(html)
  assert.ok(form, 'the page has a form')
  const fields: Array<[string, string]> = [
    ...form[2].matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g),
  ].map((m) => [decode(m[1]), decode(m[2])])
  fields.push(['username', as.username], ['password', as.password], ['approve', button])
  return fetch(new URL(decode(form[1]), pageUrl), {
    method: 'POST',
    body: new URLSearchParams(fields),
    redirect: 'manual',
  })
}

/**
 * Connects the sandbox's demo account (API key and token) to a Patchbay — or reconnects it, when it
 * is connected already; returns the connection id.
 */
export async function connectDemoTaskboard(
  t: { api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> },
  sandbox: { demo: { key: string; token: string } },
): Promise<string> {
  const res = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: sandbox.demo.key, token: sandbox.demo.token },
  })
  assert.ok(res.status === 201 || res.status === 200, JSON.stringify(res.body))
  return res.body.id
}
