// Sandbox task-board helpers for tests, through the emulator's control API.
import assert from 'node:assert/strict'
import { createHmac, randomBytes } from 'node:crypto'
import type { TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import type { TestService } from './service.ts'

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

/**
 * Connects the demo account (its key, `token`, by default the demo token, and its webhook secret)
 * through a connect link for `endUserId`, as the end user does on the hosted page: no workspace key.
 * Answers the connection made (or reconnected).
 */
export async function endUserConnects(
  t: Pick<TestService, 'api' | 'url'>,
  sandbox: TaskboardSandbox,
  endUserId: string,
  token = sandbox.demo.token,
): Promise<{ connection: { id: string } & Record<string, any>; reconnected: boolean }> {
  const s = await t.api('POST', '/v1/connect-sessions', { endUserId })
  assert.equal(s.status, 201, JSON.stringify(s.body))
  const res = await fetch(`${t.url}/v1/connect/connections`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      token: s.body.token,
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: sandbox.demo.key, token, secret: sandbox.demo.secret },
    }),
  })
  const body = (await res.json()) as any
  assert.equal(res.status, 201, JSON.stringify(body))
  return body
}

/**
 * An agent on the demo board with a New Card trigger, over a connection of the demo account with
 * its webhook secret (so deliveries can be signed as the upstream signs them). Returns the agent
 * (with its signing secret), the trigger's webhook id and the address the upstream posts to.
 */
export async function newCardAgent(
  t: TestService,
  sandbox: TaskboardSandbox,
  agent: { name: string; delivery: { type: 'webhook'; url: string } },
): Promise<{ agent: any; hookId: string; callbackUrl: string }> {
  const conn = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: sandbox.demo.key, token: sandbox.demo.token, secret: sandbox.demo.secret },
  })
  assert.equal(conn.status, 201, JSON.stringify(conn.body))
  const created = await t.api('POST', '/v1/agents', {
    ...agent,
    scope: { boards: [sandbox.demo.boardId] },
    connectionIds: [conn.body.id],
  })
  assert.equal(created.status, 201, JSON.stringify(created.body))
  const trig = await t.api('POST', `/v1/agents/${created.body.id}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId: conn.body.id,
    config: { idBoard: sandbox.demo.boardId },
  })
  assert.equal(trig.status, 201, JSON.stringify(trig.body))
  const hookId = trig.body.webhook.id as string
  return { agent: created.body, hookId, callbackUrl: `${t.url}/hooks/taskboard/${hookId}` }
}

/** A createCard delivery on the demo board, as the upstream sends it (a fresh action id each time). */
export function createCardDelivery(
  sandbox: TaskboardSandbox,
  cardId: string,
  extra: Record<string, unknown> = {},
) {
  return {
    action: {
      id: randomBytes(12).toString('hex'),
      type: 'createCard',
      date: new Date().toISOString(),
      data: {
        board: { id: sandbox.demo.boardId },
        list: { id: sandbox.demo.listIds[0] },
        card: { id: cardId, name: `card ${cardId}` },
      },
      ...extra,
    },
    model: { id: sandbox.demo.boardId },
  }
}

/** POSTs a body to a webhook address signed as the task-board signs it (HMAC-SHA1 of the body and the address). */
export function postSigned(sandbox: TaskboardSandbox, callbackUrl: string, body: string): Promise<Response> {
  const signature = createHmac('sha1', sandbox.demo.secret)
    .update(body + callbackUrl)
    .digest('base64')
  return fetch(callbackUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-taskboard-webhook': signature },
    body,
  })
}
