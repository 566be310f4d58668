// `patchbay login`, `logout` and `workspace list|use`: a person signs in once, and the command
// keeps one personal workspace key per workspace they belong to (made through the sign-in, with
// their role there), in a file only they can read. Later commands use the current workspace's key
// when neither --key nor PATCHBAY_KEY is given.
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { homedir, hostname } from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { PatchbayApiError } from '../sdk/errors.ts'
import { UsageError } from './output.ts'

export interface StoredWorkspace {
  id: string
  name: string
  role: string
  keyId: string
  key: string
}

export interface StoredLogin {
  url: string
  email: string
  current: string
  workspaces: StoredWorkspace[]
  /** Workspaces where the person's role may not make a key (left out of the login). */
  refused?: string[]
}

/** Where the login is kept: PATCHBAY_CONFIG, else the user's configuration folder. */
export function loginFile(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PATCHBAY_CONFIG) return env.PATCHBAY_CONFIG
  const base = env.XDG_CONFIG_HOME || path.join(homedir(), '.config')
  return path.join(base, 'patchbay', 'login.json')
}

export function readLogin(env: NodeJS.ProcessEnv = process.env): StoredLogin | null {
  const file = loginFile(env)
  if (!existsSync(file)) return null
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as StoredLogin
  } catch {
    throw new UsageError(
      `${file} is not a login this command wrote; remove it and run "patchbay login" again.`,
    )
  }
}

export function writeLogin(login: StoredLogin, env: NodeJS.ProcessEnv = process.env): string {
  const file = loginFile(env)
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  writeFileSync(file, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600 })
  chmodSync(file, 0o600)
  return file
}

export function forgetLogin(env: NodeJS.ProcessEnv = process.env): void {
  rmSync(loginFile(env), { force: true })
}

/** The current workspace's key of a login made against `url`. */
export function storedKey(url: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const login = readLogin(env)
  if (!login || login.url !== url) return undefined
  return login.workspaces.find((w) => w.id === login.current)?.key
}

/** Asks on the terminal; with `hidden`, what is typed is not shown. */
export function ask(question: string, hidden = false): Promise<string> {
  if (!process.stdin.isTTY)
    throw new UsageError(
      'No terminal to ask on: give --email and --password (or PATCHBAY_EMAIL and PATCHBAY_PASSWORD).',
    )
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true })
    if (hidden) {
      const write = (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput
      ;(rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = (s: string) => {
        if (s.startsWith(question)) write.call(rl, question)
        else if (s.includes('\n')) write.call(rl, '\n')
      }
    }
    rl.question(question, (answer) => {
      rl.close()
      resolve(answer)
    })
  })
}

/** A session of a person: the cookie and CSRF token the sign-in answered. */
interface Session {
  cookie: string
  csrfToken: string
  workspaces: Array<{ id: string; name: string; role: string }>
}

async function call(
  url: string,
  method: string,
  p: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(url + p, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  })
  if (!res.ok) throw await PatchbayApiError.from(res)
  return res
}

/**
 * Signs in, makes a personal key in every workspace of the person (with their role there), signs
 * out, and keeps the keys. The session itself is not kept.
 */
export async function logIn(url: string, email: string, password: string): Promise<StoredLogin> {
  const res = await call(url, 'POST', '/v1/auth/sign-in', { email, password })
  const cookie = (res.headers.getSetCookie?.() ?? [])
    .map((c) => c.split(';')[0])
    .filter(Boolean)
    .join('; ')
  const signed = (await res.json()) as Session
  const session: Session = { ...signed, cookie }
  const auth = (workspaceId: string) => ({
    cookie: session.cookie,
    'x-csrf-token': session.csrfToken,
    'patchbay-workspace': workspaceId,
  })
  try {
    if (session.workspaces.length === 0)
      throw new UsageError(
        `${email} belongs to no workspace yet.`,
        'Create one in the dashboard (or accept an invitation), then run "patchbay login" again.',
      )
    const workspaces: StoredWorkspace[] = []
    const refused: string[] = []
    for (const w of session.workspaces) {
      try {
        const made = (await (
          await call(
            url,
            'POST',
            '/v1/keys',
            { name: `patchbay CLI on ${hostname()}`, role: w.role },
            auth(w.id),
          )
        ).json()) as { id: string; key: string }
        workspaces.push({ id: w.id, name: w.name, role: w.role, keyId: made.id, key: made.key })
      } catch (err) {
        // A role that may not make keys there: that workspace is left out, and said so.
        if (err instanceof PatchbayApiError && err.status === 403) refused.push(`${w.name} (${w.role})`)
        else throw err
      }
    }
    if (workspaces.length === 0)
      throw new UsageError(
        `Your role may not make a key in any of your workspaces: ${refused.join(', ')}.`,
        'Ask an admin of the workspace for a key (Keys in the dashboard), and give it with --key or PATCHBAY_KEY.',
      )
    return { url, email, current: workspaces[0].id, workspaces, refused }
  } finally {
    await call(url, 'POST', '/v1/auth/sign-out', undefined, {
      cookie: session.cookie,
      'x-csrf-token': session.csrfToken,
    }).catch(() => {})
  }
}

/** Revokes the keys a login made (each with itself); what cannot be revoked is reported, not fatal. */
export async function logOut(login: StoredLogin): Promise<string[]> {
  const problems: string[] = []
  for (const w of login.workspaces) {
    await call(login.url, 'DELETE', `/v1/keys/${w.keyId}`, undefined, {
      authorization: `Bearer ${w.key}`,
    }).catch((err: Error) => problems.push(`${w.name}: ${err.message}`))
  }
  return problems
}
