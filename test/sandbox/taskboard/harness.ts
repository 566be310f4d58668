// The harness shared by the task-board emulator's test files: one sandbox per file, reset before
// each test, and plain-HTTP helpers (API calls, control calls, a webhook receiver, an OAuth 1.0a
// signer written here, independent of the emulator's).
import assert from 'node:assert/strict'
import { createHmac, randomBytes } from 'node:crypto'
import http from 'node:http'
import { after, before, beforeEach } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../../sandbox/taskboard/index.ts'

export let sb: TaskboardSandbox

/** Starts this file's sandbox, closes it after, and resets it before each test. */
export function sandboxForThisFile(): void {
  before(async () => {
    sb = await startTaskboardSandbox()
  })
  after(() => sb.close())
  beforeEach(async () => {
    await control('POST', '/reset')
    await control('POST', '/webhooks/retry-delay-scale', { scale: 0.0001 })
  })
}

export interface Res {
  status: number
  text: string
  json: any
  headers: Headers
}

export async function read(res: Response): Promise<Res> {
  const text = await res.text()
  let json: any
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.status, text, json, headers: res.headers }
}

export interface CallOpts {
  key?: string | null
  token?: string | null
  query?: Record<string, string>
  json?: unknown
  form?: Record<string, string>
  headers?: Record<string, string>
  base?: string
}

export async function api(method: string, path: string, opts: CallOpts = {}): Promise<Res> {
  const u = new URL((opts.base ?? sb.url) + path)
  const key = opts.key === undefined ? sb.demo.key : opts.key
  const token = opts.token === undefined ? sb.demo.token : opts.token
  if (key !== null) u.searchParams.set('key', key)
  if (token !== null) u.searchParams.set('token', token)
  for (const [k, v] of Object.entries(opts.query ?? {})) u.searchParams.set(k, v)
  const headers: Record<string, string> = { ...opts.headers }
  let body: string | undefined
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json)
    headers['content-type'] = 'application/json'
  } else if (opts.form) {
    body = new URLSearchParams(opts.form).toString()
    headers['content-type'] = 'application/x-www-form-urlencoded'
  }
  return read(await fetch(u, { method, headers, body }))
}

export async function control(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${sb.url}/_sandbox${path}`, {
    method,
    headers: body !== undefined ? { 'content-type': 'application/json' } : {},
    body: body !== undefined ? JSON.stringify(body) : undefined,
  })
  const r = await read(res)
  if (res.status >= 400) throw new Error(`control ${method} ${path}: ${res.status} ${r.text}`)
  return r.json
}

export async function controlRaw(method: string, path: string, body?: unknown): Promise<Res> {
  return read(
    await fetch(`${sb.url}/_sandbox${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body ?? {}),
    }),
  )
}

export async function waitFor<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  ms = 20_000,
): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await probe()
    if (v) return v
    if (Date.now() > end) throw new Error('timed out waiting')
    await new Promise((r) => setTimeout(r, 10))
  }
}

export async function demoLists() {
  return (await api('GET', `/1/boards/${sb.demo.boardId}/lists`)).json as any[]
}

export async function demoCards() {
  return (await api('GET', `/1/boards/${sb.demo.boardId}/cards`)).json as any[]
}

export async function cardNamed(name: string) {
  return (await demoCards()).find((c) => c.name === name)
}

export async function newCard(name: string, extra: Record<string, unknown> = {}) {
  const r = await api('POST', '/1/cards', { json: { idList: sb.demo.listIds[0], name, ...extra } })
  assert.equal(r.status, 200, r.text)
  return r.json
}

export async function teammateId(): Promise<string> {
  return (await api('GET', '/1/members/teammate')).json.id
}

export interface Received {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  body: string
}

/** A local webhook receiver; `respond` picks each POST's status (HEAD checks get 200 unless told). */
export async function receiver(
  respond: (r: Received, postIndex: number) => number | 'hang' | Promise<number | 'hang'> = () => 200,
  headStatus = 200,
) {
  const got: Received[] = []
  let posts = 0
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (c) => {
      body += c
    })
    req.on('end', async () => {
      const r: Received = { method: req.method!, url: req.url!, headers: req.headers, body }
      got.push(r)
      const status = req.method === 'HEAD' ? headStatus : await respond(r, posts++)
      if (status === 'hang') return
      res.statusCode = status
      res.end()
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as { port: number }).port
  return {
    url: `http://127.0.0.1:${port}/hook`,
    got,
    posts: () => got.filter((r) => r.method === 'POST'),
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((r) => server.close(() => r()))
    },
  }
}

export async function createWebhook(callbackURL: string, idModel: string, token = sb.demo.token) {
  const r = await api('POST', '/1/webhooks', { token, json: { callbackURL, idModel, description: 'test' } })
  assert.equal(r.status, 200, r.text)
  return r.json
}

export async function deliveries(hookId: string) {
  return (await control('GET', `/webhooks/deliveries?hookId=${hookId}`)).deliveries as any[]
}

// An OAuth 1.0a signer written for these tests, independent of the emulator's.
export const enc = (s: string) =>
  encodeURIComponent(s).replace(/[!*'()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

export function oauthHeader(
  method: string,
  url: string,
  creds: { key: string; secret: string; token?: string; tokenSecret?: string },
  extra: Record<string, string> = {},
  formBody: Record<string, string> = {},
): string {
  const oauth: Record<string, string> = {
    oauth_consumer_key: creds.key,
    oauth_nonce: randomBytes(12).toString('hex'),
    oauth_signature_method: 'HMAC-SHA1',
    oauth_timestamp: String(Math.floor(Date.now() / 1000)),
    oauth_version: '1.0',
    ...(creds.token ? { oauth_token: creds.token } : {}),
    ...extra,
  }
  const u = new URL(url)
  const pairs = [...Object.entries(oauth), ...u.searchParams.entries(), ...Object.entries(formBody)]
    .map(([k, v]) => `${enc(k)}=${enc(v)}`)
    .sort()
  const base = [method, enc(`${u.protocol}//${u.host}${u.pathname}`), enc(pairs.join('&'))].join('&')
  const signature = createHmac('sha1', `${enc(creds.secret)}&${enc(creds.tokenSecret ?? '')}`)
    .update(base)
    .digest('base64')
  return `OAuth ${Object.entries({ ...oauth, oauth_signature: signature })
    .map(([k, v]) => `${k}="${enc(v)}"`)
    .join(', ')}`
}

export const unescapeHtml = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')

/** The hidden fields and action of the login-and-approve form, as a browser would read them. */
export function readForm(html: string): { action: string; fields: Record<string, string> } {
  const action = unescapeHtml(/<form method="POST" action="([^"]+)"/.exec(html)![1]!)
  const fields: Record<string, string> = {}
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[unescapeHtml(m[1]!)] = unescapeHtml(m[2]!)
  }
  return { action, fields }
}

export async function submitForm(action: string, fields: Record<string, string>) {
  const res = await fetch(new URL(action, sb.authUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  })
  return { res, text: await res.text() }
}
