// Starts the three emulated upstreams. Used by `npm run sandbox`, by `npm start` when an
// upstream address is unset, and by the tests. Imports nothing from src/.
import { rmSync } from 'node:fs'
import path from 'node:path'
import { type CodehostSandbox, startCodehostSandbox } from './codehost/index.ts'
import { type ContactdataSandbox, startContactdataSandbox } from './contactdata/index.ts'
import { startTaskboardSandbox, type TaskboardSandbox } from './taskboard/index.ts'

export type { CodehostSandbox, ContactdataSandbox, TaskboardSandbox }

export interface Sandboxes {
  taskboard?: TaskboardSandbox
  codehost?: CodehostSandbox
  contactdata?: ContactdataSandbox
  close(): Promise<void>
}

/** The connectors whose upstream the sandbox emulates, by connector id. */
export const SANDBOXED = ['taskboard', 'codehost', 'contactdata'] as const

/** Each running emulator's address, by connector id. */
export function sandboxUrls(s: Sandboxes): Record<string, string> {
  return Object.fromEntries(SANDBOXED.flatMap((id) => (s[id] ? [[id, s[id].url]] : [])))
}

/**
 * The emulators' demo OAuth apps, by connector id, so sign-ins work offline: the code-host's
 * OAuth app, and the task-board's API key and secret (its OAuth 1.0a app).
 */
export function demoOAuthApps(s: Sandboxes): Record<string, { clientId: string; clientSecret: string }> {
  return {
    ...(s.codehost
      ? {
          codehost: {
            clientId: s.codehost.demo.oauthClientId,
            clientSecret: s.codehost.demo.oauthClientSecret,
          },
        }
      : {}),
    ...(s.taskboard
      ? { taskboard: { clientId: s.taskboard.demo.key, clientSecret: s.taskboard.demo.secret } }
      : {}),
  }
}

export interface SandboxPorts {
  taskboard?: number
  codehost?: number
  contactdata?: number
}

/**
 * Starts the named emulators (all three by default); a port of 0 picks a free one. With
 * `stateDir`, each keeps its state there (`taskboard.state`, `codehost.state`,
 * `contactdata.state`) across restarts; `fresh` discards what is there first.
 */
export async function startSandboxes(
  opts: {
    host?: string
    ports?: SandboxPorts
    /** Connector ids; those it has no emulator for are left out. */
    only?: string[]
    stateDir?: string
    fresh?: boolean
  } = {},
): Promise<Sandboxes> {
  const want = new Set<string>(opts.only ?? SANDBOXED)
  const host = opts.host ?? '127.0.0.1'
  const ports = opts.ports ?? {}
  const stateFile = (name: keyof SandboxPorts) => {
    if (!opts.stateDir) return undefined
    const file = path.join(opts.stateDir, `${name}.state`)
    if (opts.fresh) rmSync(file, { force: true })
    return file
  }
  const [taskboard, codehost, contactdata] = await Promise.all([
    want.has('taskboard')
      ? startTaskboardSandbox({ host, port: ports.taskboard ?? 0, stateFile: stateFile('taskboard') })
      : undefined,
    want.has('codehost')
      ? startCodehostSandbox({ host, port: ports.codehost ?? 0, stateFile: stateFile('codehost') })
      : undefined,
    want.has('contactdata')
      ? startContactdataSandbox({ host, port: ports.contactdata ?? 0, stateFile: stateFile('contactdata') })
      : undefined,
  ])
  return {
    taskboard,
    codehost,
    contactdata,
    close: async () => {
      await Promise.all([taskboard?.close(), codehost?.close(), contactdata?.close()])
    },
  }
}

/** What a person needs to try the sandboxes: addresses and demo credentials. */
export function describeSandboxes(s: Sandboxes): string {
  const lines: string[] = []
  if (s.taskboard) {
    const d = s.taskboard.demo
    lines.push(
      `task-board sandbox   ${s.taskboard.url}`,
      `  demo account ${d.username} (password ${d.password}); API key ${d.key}; token ${d.token}`,
      `  API secret (verifies webhooks, for instant triggers) ${d.secret}`,
      `  demo board ${d.boardId}; lists ${d.listIds.join(', ')}`,
      `  make another API key: ${s.taskboard.adminUrl}; then a token: ${s.taskboard.authUrl}/1/authorize?key=<API key>&scope=read,write&expiration=never&response_type=token&name=<label>`,
    )
  }
  if (s.codehost) {
    const d = s.codehost.demo
    lines.push(
      `code-host sandbox    ${s.codehost.url}`,
      `  demo login ${d.login} (password ${d.password}); token ${d.token}; repo ${d.repo.owner}/${d.repo.name}`,
      `  OAuth app: client id ${d.oauthClientId}; client secret ${d.oauthClientSecret}`,
    )
  }
  if (s.contactdata) {
    const d = s.contactdata.demo
    lines.push(
      `contact-data sandbox ${s.contactdata.url}`,
      `  demo account ${d.accountName}; API key ${d.apiKey}`,
    )
  }
  return lines.join('\n')
}
