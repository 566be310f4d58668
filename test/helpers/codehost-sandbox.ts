// The code-host sandbox's own tests share this: one sandbox per test file, reset before each test,
// REST calls as a token's owner, the control API, and a local webhook receiver. `sandboxPerFile()`
// registers the hooks; `sb` is the running sandbox.
import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import { after, afterEach, before, beforeEach } from 'node:test'
import { type CodehostSandbox, startCodehostSandbox } from '../../sandbox/codehost/index.ts'
import { contractProblems } from './codehost-contract.ts'

/** Starts a sandbox for the file, resets it before each test, closes it and the receivers after. */
export function sandboxPerFile(): void {
  before(async () => {
    sb = await startCodehostSandbox()
  })
  after(async () => {
    await sb.close()
    for (const r of receivers) await r.close()
  })
  beforeEach(async () => {
    await ctl('POST', '/_sandbox/reset')
  })
  // Every answer the test got and every webhook it caused, against the published descriptions.
  afterEach(async () => {
    assert.deepEqual(await contractProblems(sb), [], 'answers and webhooks follow the published description')
  })
}

export let sb: CodehostSandbox
export const OWNER = 'octo-demo'
export const REPO = 'hello-world'
export const R = `/repos/${OWNER}/${REPO}`

export interface Res {
  status: number
  headers: Headers
  json: any
  text: string
}

export async function call(
  method: string,
  path: string,
  opts: { token?: string | null; body?: unknown; headers?: Record<string, string>; raw?: string } = {},
): Promise<Res> {
  const headers: Record<string, string> = { accept: 'application/vnd.codehost+json', ...opts.headers }
  const token = opts.token === undefined ? sb.demo.token : opts.token
  if (token) headers.authorization = `Bearer ${token}`
  let payload: string | undefined = opts.raw
  if (opts.body !== undefined) {
    payload = JSON.stringify(opts.body)
    headers['content-type'] ??= 'application/json'
  }
  const res = await fetch(sb.url + path, { method, headers, body: payload, redirect: 'manual' })
  const text = await res.text()
  let json: any
  try {
    json = text ? JSON.parse(text) : undefined
  } catch {
    json = undefined
  }
  return { status: res.status, headers: res.headers, json, text }
}

export const api = call
export const ctl = (method: string, path: string, body?: unknown) => call(method, path, { token: null, body })
export const b64 = (s: string) => Buffer.from(s).toString('base64')

export async function token(body: Record<string, unknown>): Promise<string> {
  const r = await ctl('POST', '/_sandbox/tokens', body)
  assert.equal(r.status, 201, r.text)
  return r.json.token
}

export async function pushBranch(
  branch: string,
  files: Record<string, string | null>,
  message = 'Change',
  as = OWNER,
) {
  const r = await ctl('POST', '/_sandbox/push', {
    owner: OWNER,
    repo: REPO,
    branch,
    as,
    commits: [{ message, files }],
  })
  assert.equal(r.status, 201, r.text)
  return r.json as { before: string | null; after: string; commits: string[] }
}

export async function until<T>(
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 20_000,
): Promise<T> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > end) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 15))
  }
}

export interface Hit {
  headers: IncomingHttpHeaders
  body: string
  json: any
}

const receivers: { close(): Promise<void> }[] = []

/** A local webhook receiver on an ephemeral port. */
export async function receiver(status = 200) {
  const hits: Hit[] = []
  const state = { status }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      let json: any
      try {
        json = JSON.parse(body)
      } catch {
        json = undefined
      }
      hits.push({ headers: req.headers, body, json })
      res.writeHead(state.status).end('ok')
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const addr = server.address() as { port: number }
  const rec = {
    url: `http://127.0.0.1:${addr.port}/hook`,
    hits,
    state,
    events: (name: string) => hits.filter((h) => h.headers['x-codehost-event'] === name),
    wait: (name: string, pred: (j: any) => boolean = () => true) =>
      until(() => hits.find((h) => h.headers['x-codehost-event'] === name && pred(h.json))),
    close: () => new Promise<void>((r) => server.close(() => r())),
  }
  receivers.push(rec)
  return rec
}

export async function repoHook(url: string, events = ['*'], secret = 'topsecret') {
  const r = await api('POST', `${R}/hooks`, {
    body: { name: 'web', config: { url, content_type: 'json', secret }, events, active: true },
  })
  assert.equal(r.status, 201, r.text)
  return r.json
}

export const sign = (secret: string, body: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
