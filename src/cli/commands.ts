// The `patchbay` commands. Each talks to a running Patchbay through the SDK (serve and sandbox
// start one); none knows anything about a particular step or trigger — those come from the API.
import { existsSync, readFileSync } from 'node:fs'
import type { JobView, ParkedInboxView, PatchbayClient } from '../sdk/client.ts'
import type { StreamedDelivery } from '../sdk/events.ts'
import { ask, forgetLogin, logIn, logOut, readLogin, writeLogin } from './login.ts'
import { dim, green, type Output, progressBar, table, UsageError, withProgress } from './output.ts'

export type OptionSpec = { type: 'string' | 'boolean'; multiple?: boolean; short?: string }

export interface Context {
  values: Record<string, string | boolean | string[] | undefined>
  positionals: string[]
  o: Output
  /** The API client; refuses when no key was given. */
  client(): PatchbayClient
  url: string
  key: string | undefined
}

export interface Command {
  path: string[]
  args?: string
  summary: string
  options?: Record<string, OptionSpec & { help: string; value?: string }>
  /** Positional arguments after the command words: [least, most]. */
  positionals?: [number, number]
  run(ctx: Context): Promise<number | undefined>
}

const str = (ctx: Context, name: string) => ctx.values[name] as string | undefined
const list = (ctx: Context, name: string) => (ctx.values[name] as string[] | undefined) ?? []
const need = (ctx: Context, name: string) => {
  const v = str(ctx, name)
  if (!v) throw new UsageError(`--${name} is required.`)
  return v
}

/**
 * An agent's scope from `--place <scopeKey>=<id>` and its shorthands `--board` and `--repo`. A
 * scope key is one of the place kinds the server's connectors declare (GET /v1/catalog `places`).
 */
async function scopeFrom(ctx: Context): Promise<Record<string, string[]>> {
  const scope: Record<string, string[]> = { boards: list(ctx, 'board'), repositories: list(ctx, 'repo') }
  const places = list(ctx, 'place')
  if (places.length === 0) return scope
  const catalog = await ctx.client().catalog()
  const known = catalog.connectors.flatMap((c) =>
    ((c.places as Array<{ scopeKey: string }> | undefined) ?? []).map((p) => p.scopeKey),
  )
  for (const place of places) {
    const at = place.indexOf('=')
    const key = place.slice(0, Math.max(at, 0))
    const id = place.slice(at + 1)
    if (at <= 0 || id === '')
      throw new UsageError(
        `--place takes <scopeKey>=<id>, not "${place}"; the scope keys are: ${known.join(', ') || 'none'}.`,
      )
    if (!known.includes(key))
      throw new UsageError(
        `--place ${place}: "${key}" is not a scope key of this Patchbay's connectors; the scope keys are: ${known.join(', ') || 'none'}.`,
      )
    scope[key] = [...(scope[key] ?? []), id]
  }
  return scope
}

/** `--input '{…}'` merged with `--set a.b=value` (strings), into one object. */
function objectFrom(json: string | undefined, sets: string[], what: string): Record<string, unknown> {
  let base: Record<string, unknown> = {}
  if (json !== undefined) {
    try {
      base = JSON.parse(json)
    } catch (err) {
      throw new UsageError(`${what} is not valid JSON: ${(err as Error).message}`)
    }
    if (base === null || typeof base !== 'object' || Array.isArray(base))
      throw new UsageError(`${what} must be a JSON object.`)
  }
  for (const s of sets) {
    const eq = s.indexOf('=')
    if (eq <= 0) throw new UsageError(`--set "${s}" must look like field=value.`)
    const path = s.slice(0, eq).split('.')
    let cur = base
    for (const k of path.slice(0, -1)) {
      if (cur[k] === null || typeof cur[k] !== 'object') cur[k] = {}
      cur = cur[k] as Record<string, unknown>
    }
    cur[path[path.length - 1]] = s.slice(eq + 1)
  }
  return base
}

const print = (ctx: Context, value: unknown, human: () => string) =>
  ctx.o.out(ctx.o.json ? JSON.stringify(value) : human())

const pretty = (v: unknown) => JSON.stringify(v, null, 2)

/** A job's state in words (jobs show, and the end of a followed job). */
function jobText(job: JobView): string {
  const head = `${job.id}  ${job.kind}  ${job.status}  ${job.done} of ${job.total} done${job.errors ? `, ${job.errors} with errors` : ''}`
  const lines = [head]
  const r = job.result as Record<string, unknown> | null
  if (job.kind === 'enrich_contacts' && r)
    lines.push(`matched ${r.matched}, not matched ${r.notMatched}, credits charged ${r.creditsCharged}`)
  if (job.kind === 'replay_deliveries' && r) lines.push(`replayed ${r.replayed}`)
  if (job.error) lines.push(`${job.error.code}: ${job.error.message}`)
  return lines.join('\n')
}

/** Follows a job with a progress bar (unless --no-wait), then prints it; exit 0 when it succeeded. */
async function followJob(ctx: Context, started: JobView, label: string): Promise<number> {
  if (ctx.values['no-wait'] === true) {
    print(
      ctx,
      started,
      () =>
        `${started.id} started (${started.total} items); follow it with patchbay jobs show ${started.id} --wait`,
    )
    return 0
  }
  const bar = progressBar(label, { lines: ctx.values.progress === true })
  const job = await ctx.client().jobs.wait(started.id, {
    intervalMs: 300,
    onProgress: (j) => bar.update(j.done, j.total),
  })
  print(ctx, job, () => jobText(job))
  return job.status === 'succeeded' ? 0 : 1
}

/** Contacts from a file: a JSON array, or CSV whose header names the fields (email, linkedInUrl …). */
function readContacts(file: string): Array<Record<string, string>> {
  let text: string
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8')
  } catch (err) {
    throw new UsageError(`Cannot read ${file}: ${(err as Error).message}`)
  }
  const trimmed = text.trim()
  if (trimmed.startsWith('[')) {
    let parsed: unknown
    try {
      parsed = JSON.parse(trimmed)
    } catch (err) {
      throw new UsageError(`${file} is not valid JSON: ${(err as Error).message}`)
    }
    if (!Array.isArray(parsed)) throw new UsageError(`${file} must hold a JSON array of contacts.`)
    return parsed as Array<Record<string, string>>
  }
  const [header, ...rows] = trimmed.split(/\r?\n/).filter((l) => l.trim() !== '')
  const fields = (header ?? '').split(',').map((f) => f.trim())
  const known = ['email', 'linkedInUrl', 'firstName', 'lastName', 'company']
  const unknown = fields.filter((f) => !known.includes(f))
  if (fields.length === 0 || unknown.length)
    throw new UsageError(
      `${file}: the CSV header names ${unknown.join(', ') || 'nothing'}; use ${known.join(', ')}.`,
    )
  return rows.map((line) => {
    const cells = line.split(',').map((c) => c.trim())
    return Object.fromEntries(fields.flatMap((f, i) => (cells[i] ? [[f, cells[i]]] : [])))
  })
}

/**
 * The service and the sandbox run from a clone of the repository (Node runs their TypeScript);
 * the installed package carries the SDK and the API commands only. The path is built at run time
 * so the package's build leaves the server out.
 */
async function importFromRepository(file: string): Promise<void> {
  const url = new URL(`../../${file}`, import.meta.url)
  if (!existsSync(url))
    throw new UsageError(
      `This command runs Patchbay itself, which the installed package does not carry: run it from a clone of the repository (npm start), or with the container image (docs/operating.md: Deploying).`,
    )
  await import(url.href)
}

/** Eight heights of a bar, for a line of values in one row of text. */
const BARS = '▁▂▃▄▅▆▇█'
export function sparkline(values: Array<number | null>): string {
  const max = Math.max(0, ...values.map((v) => v ?? 0))
  return values
    .map((v) => (v === null ? ' ' : max === 0 ? BARS[0] : BARS[Math.min(7, Math.floor((v / max) * 7.999))]))
    .join('')
}

/** Each series: its summary, then a line per key with its sparkline (the last 60 buckets at most). */
function statsText(answer: import('../sdk/client.ts').StatsView): string {
  const out: string[] = [dim(`${answer.from} → ${answer.to}, per ${answer.step}`)]
  for (const s of answer.series) {
    out.push('', s.summary)
    if (s.empty) continue
    const width = Math.max(...s.lines.map((l) => l.label.length))
    for (const l of s.lines)
      out.push(
        `  ${l.label.padEnd(width)}  ${sparkline(l.values.slice(-60))}  ${l.total ?? '–'}${s.unit === '%' ? ' %' : s.unit === 'ms' ? ' ms' : ''}`,
      )
  }
  return out.join('\n')
}

export const commands: Command[] = [
  {
    path: ['login'],
    summary:
      'Sign in as a person: keeps a personal key for each of your workspaces (your role there), used when no --key is given',
    options: {
      email: { type: 'string', help: 'Your email (PATCHBAY_EMAIL; asked when missing)', value: 'email' },
      password: {
        type: 'string',
        help: 'Your password (PATCHBAY_PASSWORD; asked, hidden, when missing)',
        value: 'password',
      },
    },
    async run(ctx) {
      const email = str(ctx, 'email') ?? process.env.PATCHBAY_EMAIL ?? (await ask('Email: '))
      const password =
        str(ctx, 'password') ?? process.env.PATCHBAY_PASSWORD ?? (await ask('Password: ', true))
      const login = await logIn(ctx.url, email.trim(), password)
      const file = writeLogin(login)
      const current = login.workspaces.find((w) => w.id === login.current)!
      print(
        ctx,
        {
          url: login.url,
          email: login.email,
          current: login.current,
          workspaces: login.workspaces.map(({ key, ...w }) => w),
          file,
        },
        () =>
          `${green('Signed in')} as ${login.email} at ${login.url}: ${login.workspaces.length} workspace(s), using ${current.name} (${current.role}).${login.refused?.length ? `\nLeft out (your role may not make keys there): ${login.refused.join(', ')}.` : ''}
${dim(`Keys kept in ${file}; "patchbay workspace use" switches, "patchbay logout" revokes them.`)}`,
      )
      return 0
    },
  },
  {
    path: ['logout'],
    summary: 'Revoke the personal keys "patchbay login" made and forget them',
    async run(ctx) {
      const login = readLogin()
      if (!login) throw new UsageError('Not logged in: there is nothing to forget.')
      const problems = await logOut(login)
      forgetLogin()
      print(ctx, { loggedOut: true, problems }, () =>
        problems.length === 0
          ? `${green('Logged out')}: ${login.workspaces.length} key(s) revoked.`
          : `Logged out; these keys could not be revoked (revoke them under Keys in the dashboard):\n${problems.join('\n')}`,
      )
      return 0
    },
  },
  {
    path: ['workspace', 'list'],
    summary: 'The workspaces of your login (patchbay login), the current one marked',
    async run(ctx) {
      const login = readLogin()
      if (!login) throw new UsageError('Not logged in.', 'Run "patchbay login" first.')
      const rows = login.workspaces.map((w) => ({
        current: w.id === login.current ? '*' : '',
        id: w.id,
        name: w.name,
        role: w.role,
      }))
      print(ctx, rows, () => table(rows, ['current', 'id', 'name', 'role']))
      return 0
    },
  },
  {
    path: ['workspace', 'use'],
    args: '<id or name>',
    positionals: [1, 1],
    summary: "Make one of your login's workspaces the current one (its key is used from now on)",
    async run(ctx) {
      const login = readLogin()
      if (!login) throw new UsageError('Not logged in.', 'Run "patchbay login" first.')
      const wanted = ctx.positionals[0]
      const found =
        login.workspaces.find((w) => w.id === wanted) ??
        login.workspaces.filter((w) => w.name.toLowerCase() === wanted.toLowerCase())
      const one = Array.isArray(found) ? (found.length === 1 ? found[0] : undefined) : found
      if (!one)
        throw new UsageError(
          Array.isArray(found) && found.length > 1
            ? `"${wanted}" names ${found.length} workspaces; give its id.`
            : `No workspace "${wanted}" in your login.`,
          `Yours: ${login.workspaces.map((w) => `${w.name} (${w.id})`).join(', ')}. A workspace you joined since: run "patchbay login" again.`,
        )
      writeLogin({ ...login, current: one.id })
      print(
        ctx,
        { current: one.id, name: one.name, role: one.role },
        () => `Using ${one.name} (${one.role}).`,
      )
      return 0
    },
  },
  {
    path: ['serve'],
    summary: 'Start Patchbay (as npm start: SQLite in ./data, sandbox upstreams for any not configured)',
    options: {
      port: { type: 'string', help: 'HTTP port (PORT, default 8080)', value: 'n' },
      host: { type: 'string', help: 'Address to listen on (HOST, default 127.0.0.1)', value: 'addr' },
    },
    async run(ctx) {
      if (str(ctx, 'port')) process.env.PORT = str(ctx, 'port')
      if (str(ctx, 'host')) process.env.HOST = str(ctx, 'host')
      await importFromRepository('src/main.ts')
      return await new Promise<number>(() => {}) // runs until Ctrl-C
    },
  },
  {
    path: ['sandbox'],
    summary: 'Start the sandbox upstreams on fixed ports (4101–4103)',
    async run() {
      await importFromRepository('sandbox/main.ts')
      return await new Promise<number>(() => {})
    },
  },

  {
    path: ['backup'],
    summary: 'Copy the embedded SQLite store consistently, even while Patchbay runs (not the master key)',
    options: {
      'data-dir': {
        type: 'string',
        help: 'The data directory (PATCHBAY_DATA_DIR, default ./data)',
        value: 'dir',
      },
      to: { type: 'string', help: 'The copy to write (default patchbay-backup-<time>.db)', value: 'file' },
      progress: {
        type: 'boolean',
        help: 'Report progress as lines on stderr (a terminal shows a bar anyway)',
      },
    },
    async run(ctx) {
      if (process.env.PATCHBAY_DATABASE_URL)
        throw new UsageError(
          'The store is PostgreSQL (PATCHBAY_DATABASE_URL): back it up with pg_dump; this command copies the embedded SQLite store.',
        )
      const { backupStore } = await import('./backup.ts')
      const bar = progressBar('Copying pages', { lines: ctx.values.progress === true })
      const done = await backupStore({
        dataDir: str(ctx, 'data-dir') ?? process.env.PATCHBAY_DATA_DIR ?? './data',
        to: str(ctx, 'to'),
        onProgress: (copied, total) => bar.update(copied, total),
      })
      print(ctx, done, () =>
        [
          `${green('Backed up')} ${done.from} to ${done.to} (${done.pages} pages, integrity checked).`,
          '',
          'The copy does not hold the master key, without which the stored credentials cannot be read:',
          `keep ${process.env.PATCHBAY_MASTER_KEY ? 'PATCHBAY_MASTER_KEY' : done.masterKey} safe too, apart from the backup.`,
        ].join('\n'),
      )
      return 0
    },
  },

  // ---- connections
  {
    path: ['connections', 'list'],
    summary: 'List connections',
    options: {
      connector: { type: 'string', help: 'Only this connector (taskboard, codehost …)', value: 'id' },
    },
    async run(ctx) {
      const rows = await withProgress(
        'Listing connections',
        ctx.client().connections.list(str(ctx, 'connector')),
      )
      print(ctx, rows, () =>
        rows.length
          ? table(rows, ['id', 'connector', 'accountName', 'status', 'authMethod'])
          : 'No connections.',
      )
      return 0
    },
  },
  {
    path: ['connections', 'add'],
    summary: 'Connect an account with credentials (checked upstream, then sealed in the vault)',
    options: {
      connector: { type: 'string', help: 'taskboard, codehost, contactdata …', value: 'id' },
      auth: {
        type: 'string',
        help: 'Auth method id from the catalog (e.g. api_key_token, api_key)',
        value: 'id',
      },
      credential: {
        type: 'string',
        multiple: true,
        help: 'A credential field (key=…)',
        value: 'k=v',
      },
      credentials: { type: 'string', help: 'All credentials as a JSON object', value: 'json' },
    },
    async run(ctx) {
      const connector = need(ctx, 'connector')
      const credentials = objectFrom(
        str(ctx, 'credentials'),
        list(ctx, 'credential').map((c) => c),
        '--credentials',
      )
      let authMethod = str(ctx, 'auth')
      if (!authMethod) {
        const catalog = await ctx.client().catalog()
        const entry = catalog.connectors.find((c) => c.id === connector) as
          | { auth: Array<{ id: string; credentialsSchema: unknown }> }
          | undefined
        const usable = entry?.auth.filter((a) => a.credentialsSchema) ?? []
        if (usable.length !== 1)
          throw new UsageError(
            `--auth is required${usable.length ? `: one of ${usable.map((a) => a.id).join(', ')}` : ''}.`,
          )
        authMethod = usable[0].id
      }
      const made = await withProgress(
        `Checking the credentials with ${connector}`,
        ctx.client().connections.create({ connector, authMethod, credentials }),
      )
      print(ctx, made, () => `${green('✓')} Connected ${made.accountName} (${made.connector}): ${made.id}`)
      return 0
    },
  },
  {
    path: ['connections', 'remove'],
    args: '<connectionId>',
    positionals: [1, 1],
    summary:
      'Disconnect: refused while agents, triggers or tool steps use it (they are listed); --force removes its triggers and detaches them',
    options: {
      force: {
        type: 'boolean',
        help: 'Disconnect even though it is in use: its triggers are removed, its agents and tool steps detached (restorable when the account is connected again)',
      },
    },
    async run(ctx) {
      const [id] = ctx.positionals
      const r = await withProgress(
        `Removing ${id}`,
        ctx.client().connections.remove(id, { force: ctx.values.force === true }),
      )
      print(
        ctx,
        r,
        () =>
          `${green('✓')} Removed ${id}: ${r.removed.triggers.length} trigger(s) removed, ${r.detached.agents.length} agent(s) and ${r.detached.toolSteps.reduce((n, t) => n + t.steps.length, 0)} tool step(s) detached`,
      )
      return 0
    },
  },

  // ---- steps
  {
    path: ['steps', 'search'],
    args: '[words…]',
    positionals: [0, 20],
    summary: 'Find tool steps by connector name ("task-board") or step name',
    async run(ctx) {
      const steps = await ctx.client().searchSteps(ctx.positionals.join(' ') || undefined)
      print(ctx, steps, () =>
        steps.length
          ? table(
              steps.map((s) => ({
                ...s,
                hints: [
                  s.hints.readOnly && 'read-only',
                  s.hints.destructive && 'destructive',
                  s.hints.idempotent && 'idempotent',
                ]
                  .filter(Boolean)
                  .join(', '),
              })),
              ['id', 'name', 'hints'],
            )
          : 'No steps match.',
      )
      return 0
    },
  },
  {
    path: ['steps', 'show'],
    args: '<stepId>',
    positionals: [1, 1],
    summary: "One step's description and input and output JSON Schemas",
    async run(ctx) {
      const step = await ctx.client().step(ctx.positionals[0])
      print(ctx, step, () =>
        [
          `${step.id} — ${step.name}`,
          step.description,
          '',
          'Input:',
          pretty(step.inputSchema),
          '',
          'Output:',
          pretty(step.outputSchema),
        ].join('\n'),
      )
      return 0
    },
  },
  optionsCommand('step'),
  {
    path: ['steps', 'run'],
    args: '<stepId>',
    positionals: [1, 1],
    summary: 'Run a tool step',
    options: {
      connection: { type: 'string', help: 'The connection to run with', value: 'id' },
      input: { type: 'string', help: "The step's input as a JSON object", value: 'json' },
      set: {
        type: 'string',
        multiple: true,
        help: 'An input field (name=…, a.b=…), a string',
        value: 'k=v',
      },
      retry: { type: 'boolean', help: 'Retry RATE_LIMITED with increasing delays' },
    },
    async run(ctx) {
      const [stepId] = ctx.positionals
      const input = objectFrom(str(ctx, 'input'), list(ctx, 'set'), '--input')
      const retry = ctx.values.retry
        ? {
            onRetry: ({ attempt, delayMs }: { attempt: number; delayMs: number }) =>
              ctx.o.err(dim(`rate limited; retry ${attempt} in ${delayMs} ms`)),
          }
        : undefined
      const connectionId = str(ctx, 'connection') ?? (await onlyConnection(ctx, stepId))
      const result = await withProgress(
        `Running ${stepId}`,
        ctx.client().runAnyStep(stepId, input, { connectionId, retry }),
      )
      if (ctx.o.json) ctx.o.out(JSON.stringify(result))
      else {
        ctx.o.out(pretty(result.output))
        ctx.o.err(
          dim(
            `${green('✓')} ${stepId} in ${result.meta.durationMs} ms, ${result.meta.attempts} request(s), ${result.meta.runId}`,
          ),
        )
      }
      return 0
    },
  },

  // ---- agents
  {
    path: ['agents', 'list'],
    summary: 'List agents',
    async run(ctx) {
      const agents = await ctx.client().agents.list()
      // One column per key of the scopes (the connectors' place kinds: boards, repositories …).
      const scopeKeys = [...new Set(agents.flatMap((a) => Object.keys(a.scope)))]
      print(ctx, agents, () =>
        agents.length
          ? table(
              agents.map((a) => ({
                ...a,
                ...Object.fromEntries(
                  scopeKeys.map((k) => [
                    k,
                    ((a.scope as Record<string, string[] | undefined>)[k] ?? []).join(','),
                  ]),
                ),
                connections: a.connectionIds.join(','),
                delivery: a.delivery.type === 'webhook' ? a.delivery.url : a.delivery.type,
              })),
              ['id', 'name', ...scopeKeys, 'connections', 'delivery'],
            )
          : 'No agents.',
      )
      return 0
    },
  },
  {
    path: ['agents', 'show'],
    args: '<agentId>',
    positionals: [1, 1],
    summary: 'One agent',
    async run(ctx) {
      const agent = await ctx.client().agents.get(ctx.positionals[0])
      print(ctx, agent, () => pretty(agent))
      return 0
    },
  },
  {
    path: ['agents', 'create'],
    summary: 'Create an agent (its signing secret is shown this once)',
    options: {
      name: { type: 'string', help: 'Its name', value: 'name' },
      place: {
        type: 'string',
        multiple: true,
        help: "A place in its scope by its kind's scope key (boards=<id>, repositories=owner/repo …; the catalog's places list the keys)",
        value: 'scopeKey=id',
      },
      board: {
        type: 'string',
        multiple: true,
        help: 'A board in its scope (--place boards=id)',
        value: 'id',
      },
      repo: {
        type: 'string',
        multiple: true,
        help: 'A repository in its scope (--place repositories=owner/repo)',
        value: 'owner/repo',
      },
      connection: {
        type: 'string',
        multiple: true,
        help: 'A connection it may use',
        value: 'id',
      },
      webhook: { type: 'string', help: 'Push its events to this URL (signed)', value: 'url' },
      stream: { type: 'boolean', help: 'Its events are pulled from its stream (the default)' },
    },
    async run(ctx) {
      if (ctx.values.webhook && ctx.values.stream)
        throw new UsageError('Give --webhook or --stream, not both.')
      const webhook = str(ctx, 'webhook')
      const made = await ctx.client().agents.create({
        name: need(ctx, 'name'),
        scope: await scopeFrom(ctx),
        connectionIds: list(ctx, 'connection'),
        delivery: webhook ? { type: 'webhook', url: webhook } : { type: 'stream' },
      })
      print(ctx, made, () =>
        [
          `${green('✓')} Agent ${made.name}: ${made.id}`,
          `Signing secret (shown this once; deliveries are signed with it): ${made.signingSecret}`,
        ].join('\n'),
      )
      return 0
    },
  },
  {
    path: ['agents', 'delete'],
    args: '<agentId>',
    positionals: [1, 1],
    summary: 'Delete an agent with its tools and triggers; its keys stop working',
    async run(ctx) {
      await ctx.client().agents.remove(ctx.positionals[0])
      print(ctx, { deleted: ctx.positionals[0] }, () => `${green('✓')} Deleted ${ctx.positionals[0]}`)
      return 0
    },
  },
  {
    path: ['agents', 'keys', 'list'],
    args: '<agentId>',
    positionals: [1, 1],
    summary: "An agent's keys (never the keys themselves)",
    async run(ctx) {
      const keys = await ctx.client().agents.keys.list(ctx.positionals[0])
      print(ctx, keys, () =>
        keys.length
          ? table(keys, ['id', 'name', 'keyPrefix', 'createdAt', 'lastUsedAt', 'revokedAt'])
          : 'No keys.',
      )
      return 0
    },
  },
  {
    path: ['agents', 'keys', 'create'],
    args: '<agentId>',
    positionals: [1, 1],
    summary: 'Make an agent key (shown this once)',
    options: { name: { type: 'string', help: 'A label for the key', value: 'name' } },
    async run(ctx) {
      const made = await ctx.client().agents.keys.create(ctx.positionals[0], str(ctx, 'name'))
      print(ctx, made, () => `${green('✓')} Key ${made.id} (shown this once):\n${made.key}`)
      return 0
    },
  },
  {
    path: ['agents', 'keys', 'revoke'],
    args: '<agentId> <keyId>',
    positionals: [2, 2],
    summary: 'Revoke an agent key; it is refused from the next request on',
    async run(ctx) {
      const [agentId, keyId] = ctx.positionals
      await ctx.client().agents.keys.revoke(agentId, keyId)
      print(ctx, { revoked: keyId }, () => `${green('✓')} Revoked ${keyId}`)
      return 0
    },
  },
  {
    path: ['agents', 'tools'],
    args: '<agentId>',
    positionals: [1, 1],
    summary: "The agent's steps and tools for function calling (tools.json)",
    options: {
      format: { type: 'string', help: 'openai (default), anthropic, gemini or mcp', value: 'format' },
      strict: { type: 'boolean', help: "with openai: schemas for OpenAI's strict mode" },
    },
    async run(ctx) {
      const format = (str(ctx, 'format') ?? 'openai') as 'openai' | 'anthropic' | 'gemini' | 'mcp'
      if (!['openai', 'anthropic', 'gemini', 'mcp'].includes(format))
        throw new UsageError(`--format must be openai, anthropic, gemini or mcp, not "${format}".`)
      const strict = ctx.values.strict === true
      const tools = await ctx.client().agents.functionTools(ctx.positionals[0], format, { strict })
      ctx.o.out(ctx.o.json ? JSON.stringify(tools) : pretty(tools))
      return 0
    },
  },

  // ---- triggers
  {
    path: ['triggers', 'list'],
    summary: "An agent's triggers",
    options: { agent: { type: 'string', help: 'The agent', value: 'id' } },
    async run(ctx) {
      const triggers = await ctx.client().triggers.list(need(ctx, 'agent'))
      print(ctx, triggers, () =>
        triggers.length
          ? table(
              triggers.map((x) => ({
                ...x,
                state: x.webhook?.status ?? (x.poll ? `every ${x.poll.intervalMs} ms` : ''),
              })),
              ['id', 'trigger', 'connectionId', 'config', 'state'],
            )
          : 'No triggers.',
      )
      return 0
    },
  },
  {
    path: ['triggers', 'create'],
    summary: 'Subscribe an agent to an upstream event kind (an instant trigger registers its webhook)',
    options: {
      agent: { type: 'string', help: 'The agent', value: 'id' },
      trigger: { type: 'string', help: 'A trigger id from the catalog (taskboard.new_card …)', value: 'id' },
      connection: { type: 'string', help: "One of the agent's connections", value: 'id' },
      config: { type: 'string', help: "The trigger's configuration as JSON", value: 'json' },
      set: {
        type: 'string',
        multiple: true,
        help: 'A configuration field (idBoard=…), a string',
        value: 'k=v',
      },
      tool: { type: 'string', help: "Run this tool of the agent's with each event", value: 'toolId' },
      'poll-interval': { type: 'string', help: 'Polled triggers: milliseconds between polls', value: 'ms' },
    },
    async run(ctx) {
      const interval = str(ctx, 'poll-interval')
      if (interval !== undefined && !/^\d+$/.test(interval))
        throw new UsageError('--poll-interval must be a whole number of milliseconds.')
      const tool = str(ctx, 'tool')
      const agentId = need(ctx, 'agent')
      const trigger = need(ctx, 'trigger')
      const made = await withProgress(
        'Creating the trigger',
        ctx.client().triggers.create(agentId, {
          trigger,
          connectionId: str(ctx, 'connection') ?? (await agentsOnlyConnection(ctx, agentId, trigger)),
          config: objectFrom(str(ctx, 'config'), list(ctx, 'set'), '--config'),
          ...(tool ? { target: { type: 'tool', toolId: tool } } : {}),
          ...(interval ? { pollIntervalMs: Number(interval) } : {}),
        }),
      )
      print(ctx, made, () => `${green('✓')} Trigger ${made.trigger}: ${made.id}`)
      return 0
    },
  },
  optionsCommand('trigger'),
  {
    path: ['triggers', 'delete'],
    args: '<triggerId>',
    positionals: [1, 1],
    summary: 'Delete a trigger (its upstream webhook goes with the last trigger using it)',
    async run(ctx) {
      const r = await withProgress('Deleting the trigger', ctx.client().triggers.remove(ctx.positionals[0]))
      print(ctx, r, () =>
        r.cleanup.ok
          ? `${green('✓')} Deleted ${ctx.positionals[0]}`
          : `${green('✓')} Deleted ${ctx.positionals[0]} (upstream cleanup failed: ${r.cleanup.error})`,
      )
      return 0
    },
  },
  {
    path: ['triggers', 'diagnose'],
    args: '<triggerId>',
    positionals: [1, 1],
    summary: 'Why a trigger does not fire: connection, board, event type, polling interval',
    async run(ctx) {
      const d = await withProgress('Diagnosing', ctx.client().triggers.diagnose(ctx.positionals[0]))
      print(ctx, d, () =>
        [
          `${d.triggerId}: ${d.healthy ? green('healthy') : 'has problems'}`,
          ...d.checks.map(
            (c) =>
              `${c.status === 'ok' ? '✓' : c.status === 'problem' ? '✗' : '·'} ${c.cause}: ${c.message}${c.fix ? `\n    fix: ${c.fix}` : ''}`,
          ),
        ].join('\n'),
      )
      return d.healthy ? 0 : 1
    },
  },

  // ---- the inbox
  {
    path: ['inbox', 'list'],
    summary: 'Upstream deliveries set aside in the inbox (acknowledged, not processed), with why',
    async run(ctx) {
      const listAll = async () => {
        const all: ParkedInboxView[] = []
        for await (const row of ctx.client().inbox.all({ limit: 200 })) all.push(row)
        return all
      }
      const rows = await withProgress('Listing', listAll())
      print(ctx, rows, () =>
        rows.length === 0
          ? 'Nothing is set aside.'
          : table(
              rows.map((r) => ({ ...r, error: r.error ?? '' })),
              ['seq', 'connector', 'deliveryId', 'receivedAt', 'attempts', 'error'],
            ),
      )
      return 0
    },
  },
  {
    path: ['inbox', 'retry'],
    args: '<seq>',
    positionals: [1, 1],
    summary: 'Process an upstream delivery set aside in the inbox again',
    async run(ctx) {
      const seq = Number(ctx.positionals[0])
      if (!Number.isInteger(seq) || seq <= 0) throw new UsageError('<seq> is the number inbox list shows.')
      await withProgress('Putting it back in line', ctx.client().inbox.retry(seq))
      print(ctx, { seq, status: 'pending' }, () => `${green('✓')} #${seq} is back in line`)
      return 0
    },
  },

  // ---- jobs: long work with progress
  {
    path: ['jobs', 'enrich'],
    summary: 'Enrich many contacts as a job (up to 5,000; 100 a piece) and show its progress',
    options: {
      connection: { type: 'string', help: 'A contact-data connection', value: 'id' },
      file: {
        type: 'string',
        help: 'The contacts: a JSON array, or CSV with a header (email, linkedInUrl, firstName, lastName, company); - for stdin',
        value: 'file',
      },
      'no-wait': { type: 'boolean', help: 'Start it and print the job without waiting' },
      progress: {
        type: 'boolean',
        help: 'Report progress as lines on stderr (a terminal shows a bar anyway)',
      },
    },
    async run(ctx) {
      const contacts = readContacts(need(ctx, 'file'))
      const job = await withProgress(
        'Starting',
        ctx.client().jobs.start({ kind: 'enrich_contacts', connectionId: need(ctx, 'connection'), contacts }),
      )
      return followJob(ctx, job, 'Enriching contacts')
    },
  },
  {
    path: ['jobs', 'replay'],
    summary: 'Send again every delivery a filter matches (the dead ones by default) as a job, with progress',
    options: {
      status: { type: 'string', help: 'pending, delivered, failed or dead (default dead)', value: 'status' },
      agent: { type: 'string', help: 'Only this agent’s deliveries', value: 'id' },
      trigger: { type: 'string', help: 'Only this trigger’s deliveries', value: 'id' },
      event: { type: 'string', help: 'Only this event’s deliveries', value: 'id' },
      'no-wait': { type: 'boolean', help: 'Start it and print the job without waiting' },
      progress: {
        type: 'boolean',
        help: 'Report progress as lines on stderr (a terminal shows a bar anyway)',
      },
    },
    async run(ctx) {
      const status = str(ctx, 'status') ?? 'dead'
      if (!['pending', 'delivered', 'failed', 'dead'].includes(status))
        throw new UsageError('--status is one of pending, delivered, failed, dead.')
      const job = await withProgress(
        'Starting',
        ctx.client().jobs.start({
          kind: 'replay_deliveries',
          status: status as 'dead',
          agentId: str(ctx, 'agent'),
          triggerId: str(ctx, 'trigger'),
          eventId: str(ctx, 'event'),
        }),
      )
      return followJob(ctx, job, 'Replaying deliveries')
    },
  },
  {
    path: ['jobs', 'list'],
    summary: 'The workspace’s jobs, newest first, with their progress',
    options: {
      status: { type: 'string', help: 'queued, running, succeeded, failed or cancelled', value: 'status' },
    },
    async run(ctx) {
      const rows = await withProgress(
        'Listing',
        ctx.client().jobs.list({ status: str(ctx, 'status'), limit: 100 }),
      )
      print(ctx, rows, () =>
        rows.length === 0
          ? 'No jobs.'
          : table(
              rows.map((j) => ({ ...j, progress: `${j.done}/${j.total}`, errors: String(j.errors) })),
              ['id', 'kind', 'status', 'progress', 'errors', 'createdAt'],
            ),
      )
      return 0
    },
  },
  {
    path: ['jobs', 'show'],
    args: '<id>',
    positionals: [1, 1],
    summary: 'One job: its progress and result (--wait: follow it with a progress bar until it ends)',
    options: {
      wait: { type: 'boolean', help: 'Follow it until it ends' },
      progress: {
        type: 'boolean',
        help: 'Report progress as lines on stderr (a terminal shows a bar anyway)',
      },
    },
    async run(ctx) {
      const job = await withProgress('Reading', ctx.client().jobs.get(ctx.positionals[0]))
      if (ctx.values.wait === true) return followJob(ctx, job, 'Working')
      print(ctx, job, () => jobText(job))
      return 0
    },
  },
  {
    path: ['jobs', 'cancel'],
    args: '<id>',
    positionals: [1, 1],
    summary: 'Cancel a job (a running one stops after the piece under way; what was done stays)',
    async run(ctx) {
      const job = await withProgress('Cancelling', ctx.client().jobs.cancel(ctx.positionals[0]))
      print(
        ctx,
        job,
        () =>
          `${green('✓')} ${job.id} ${job.status === 'cancelled' ? 'cancelled' : 'stops after the piece under way'} (${job.done} of ${job.total} done)`,
      )
      return 0
    },
  },

  // ---- events
  {
    path: ['events', 'tail'],
    summary: "Follow an agent's event stream (reconnects and resumes; Ctrl-C to stop)",
    options: {
      agent: { type: 'string', help: 'The agent', value: 'id' },
      since: {
        type: 'string',
        help: 'Resume after this stream position (an earlier line’s #)',
        value: 'seq',
      },
      count: { type: 'string', help: 'Stop after this many events', value: 'n' },
    },
    async run(ctx) {
      const agentId = need(ctx, 'agent')
      const count = str(ctx, 'count')
      if (count !== undefined && !/^[1-9]\d*$/.test(count))
        throw new UsageError('--count must be a positive number.')
      // Say where the agent's events go: a webhook agent's are pushed there, not to this stream.
      const agent = await ctx.client().agents.get(agentId)
      if (agent.delivery.type === 'webhook') {
        ctx.o.err(
          `Agent ${agent.name} (${agentId}) has its events pushed to its webhook ${agent.delivery.url}; its stream carries none, so there is nothing to follow here.\n` +
            `  What was delivered: GET /v1/deliveries?agentId=${agentId}, or the Deliveries view of the dashboard's Events page.\n` +
            `  To follow its events here, make the stream its target: PATCH /v1/agents/${agentId} {"delivery":{"type":"stream"}}, or "Events go to" in the agent's settings.`,
        )
        return 1
      }
      ctx.o.err(dim(`Agent ${agent.name} (${agentId}) receives its events on this stream.`))
      const ctrl = new AbortController()
      const stop = () => ctrl.abort()
      process.on('SIGINT', stop)
      process.on('SIGTERM', stop)
      let n = 0
      const stream = ctx.client().events(agentId, {
        lastEventId: str(ctx, 'since'),
        signal: ctrl.signal,
        onStatus: (s) =>
          ctx.o.err(
            dim(
              s.state === 'connected'
                ? `Following the events of ${agentId}${s.lastEventId ? ` after #${s.lastEventId}` : ''} (Ctrl-C to stop)…`
                : `Connection lost${s.error ? ` (${s.error.message})` : ''}; reconnecting…`,
            ),
          ),
      })
      for await (const d of stream) {
        ctx.o.out(ctx.o.json ? JSON.stringify(d) : eventLine(d))
        if (count && ++n >= Number(count)) break
      }
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      return 0
    },
  },

  // ---- stats
  {
    path: ['stats'],
    summary:
      'What the workspace did: events, deliveries, latency, backlog, runs, upstream requests, credits (the Overview charts as text)',
    options: {
      series: {
        type: 'string',
        multiple: true,
        help: 'A series (repeat or comma-separate): events.received, deliveries.outcome, deliveries.latency, deliveries.backlog, steps.outcome, tools.outcome, upstream.requests, upstream.rate_limited, upstream.headroom, credits.by_connection, credits.by_agent (default all)',
        value: 'name',
      },
      since: { type: 'string', help: 'How far back: 1h, 24h, 7d, 30d … (default 24h)', value: 'time' },
      from: { type: 'string', help: 'Start (ISO 8601) instead of --since', value: 'time' },
      to: { type: 'string', help: 'End (ISO 8601; default now)', value: 'time' },
      step: {
        type: 'string',
        help: 'Bucket: 1m, 5m, 10m, 15m, 30m, 1h, 2h, 3h, 6h, 12h, 1d (chosen when left out)',
        value: 'step',
      },
    },
    async run(ctx) {
      const since = str(ctx, 'since')
      let from = str(ctx, 'from')
      if (since !== undefined) {
        if (from !== undefined) throw new UsageError('Give --since or --from, not both.')
        const m = /^(\d+)\s*(m|h|d)$/.exec(since)
        if (!m) throw new UsageError('--since looks like 30m, 24h or 7d.')
        const unit = { m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'm' | 'h' | 'd']
        const to = str(ctx, 'to') ? Date.parse(str(ctx, 'to')!) : Date.now()
        from = new Date(to - Number(m[1]) * unit).toISOString()
      }
      const series = list(ctx, 'series').flatMap((s) =>
        s
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean),
      )
      const answer = await withProgress(
        'Counting',
        ctx.client().stats({ series, from, to: str(ctx, 'to'), step: str(ctx, 'step') }),
      )
      print(ctx, answer, () => statsText(answer))
      return 0
    },
  },

  // ---- MCP
  {
    path: ['mcp'],
    summary: 'MCP over stdio for one agent (passes messages to a running Patchbay’s /mcp)',
    options: { agent: { type: 'string', help: 'The agent to serve', value: 'id' } },
    async run(ctx) {
      const agentId = need(ctx, 'agent')
      const key = ctx.key
      if (!key)
        throw new UsageError(
          'No API key: give --key or set PATCHBAY_KEY (an agent key, or the workspace key).',
        )
      // Refuse a wrong key or agent here, with an exit status, rather than on the client's first message.
      await ctx.client().agents.functionTools(agentId, 'mcp')
      // Loaded here: the MCP SDK is large, and only this command needs it. The installed package
      // leaves it to the user (an optional peer dependency); the repository has it.
      let bridge: typeof import('./mcp-stdio.ts')
      try {
        bridge = await import('./mcp-stdio.ts')
      } catch (err) {
        if (
          (err as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' &&
          /@modelcontextprotocol\/sdk/.test(String(err))
        )
          throw new UsageError(
            'patchbay mcp needs the MCP SDK, which this installation does not have: npm install @modelcontextprotocol/sdk',
          )
        throw err
      }
      return bridge.serveMcpOverStdio({ url: ctx.url, key, agentId })
    },
  },
]

/** `steps options` and `triggers options`: the choices of a field that names a resource. */
function optionsCommand(kind: 'step' | 'trigger'): Command {
  return {
    path: [kind === 'step' ? 'steps' : 'triggers', 'options'],
    args: kind === 'step' ? '<stepId> <field>' : '<triggerId> <field>',
    positionals: [2, 2],
    summary: `The choices of a ${kind === 'step' ? 'step input' : 'trigger config'} field that names a resource (boards, a board’s lists, branches …)`,
    options: {
      connection: { type: 'string', help: 'The connection to list with', value: 'id' },
      parent: {
        type: 'string',
        multiple: true,
        help: 'A field the choices depend on (idBoard=…, owner=…)',
        value: 'k=v',
      },
    },
    async run(ctx) {
      const [id, field] = ctx.positionals
      const parents: Record<string, string> = {}
      for (const p of list(ctx, 'parent')) {
        const eq = p.indexOf('=')
        if (eq <= 0) throw new UsageError(`--parent "${p}" must look like field=value.`)
        parents[p.slice(0, eq)] = p.slice(eq + 1)
      }
      const connectionId = str(ctx, 'connection') ?? (await onlyConnection(ctx, id))
      const opts = { connectionId, parents }
      const found =
        kind === 'step'
          ? await ctx.client().stepOptions(id, field, opts)
          : await ctx.client().triggerOptions(id, field, opts)
      print(ctx, found, () =>
        found.choices.length
          ? table(
              found.choices.map((c) => ({ ...c, detail: c.detail ?? '' })),
              ['value', 'label', 'detail'],
            )
          : `No ${found.noun} to choose from.`,
      )
      return 0
    },
  }
}

/**
 * Without --connection: the caller's only connection of the step's connector (as MCP does);
 * several are a usage error naming them; none leaves it to the API to say what is needed.
 */
async function onlyConnection(ctx: Context, stepId: string): Promise<string | undefined> {
  const connector = stepId.split('.')[0]
  const mine = await ctx.client().connections.list(connector)
  if (mine.length === 1) return mine[0].id
  if (mine.length > 1)
    throw new UsageError(
      `--connection is required: there are ${mine.length} ${connector} connections (${mine.map((c) => `${c.id} ${c.accountName}`).join(', ')}).`,
    )
  return undefined
}

/** Without --connection: the agent's only connection of the trigger's connector. */
async function agentsOnlyConnection(ctx: Context, agentId: string, triggerId: string): Promise<string> {
  const connector = triggerId.split('.')[0]
  const agent = await ctx.client().agents.get(agentId)
  const mine = (await ctx.client().connections.list(connector)).filter((c) =>
    agent.connectionIds.includes(c.id),
  )
  if (mine.length === 1) return mine[0].id
  throw new UsageError(
    mine.length === 0
      ? `--connection is required: agent ${agentId} has no ${connector} connection.`
      : `--connection is required: agent ${agentId} has ${mine.length} ${connector} connections (${mine.map((c) => `${c.id} ${c.accountName}`).join(', ')}).`,
  )
}

/** One delivery as a line: position, time, trigger, event type, where, and what. */
function eventLine(d: StreamedDelivery): string {
  const e = d.delivery.data.event
  const refs = Object.entries(e.refs ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')
  const data = e.data as { card?: { name?: unknown }; name?: unknown; title?: unknown } | null
  const what = data?.card?.name ?? data?.name ?? data?.title ?? ''
  const time = e.occurredAt?.slice(11, 19) ?? ''
  return [`#${d.seq}`, time, d.delivery.type, e.type, refs, what ? JSON.stringify(what) : '']
    .filter(Boolean)
    .join('  ')
}
