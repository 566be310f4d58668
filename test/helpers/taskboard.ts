// Sandbox task-board helpers for tests, through the emulator's control API.
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
