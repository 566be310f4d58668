// What every fault scenario does: Patchbay run as `npm start` runs it (src/main.ts, a process of
// its own, so "the process stays up" means something), an upstream sending signed task-board
// webhooks the way the task-board does (a refused delivery is sent again after Retry-After), an
// agent endpoint that records what it is pushed, and a tally of what clients saw.
import { type ChildProcess, spawn } from 'node:child_process'
import { createHmac, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import type { TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { type Api, adminApi, freePort, untilHealthy } from '../helpers/main-process.ts'
import type { Receiver } from '../helpers/receiver.ts'
import { LOOPBACK_EGRESS } from '../helpers/service.ts'

const root = path.resolve(import.meta.dirname, '../..')
export const ADMIN_KEY = 'pb_admin_faults_test_key'

/** One Patchbay process; `restart()` starts it again on the same port and settings. */
export class Instance {
  readonly port: number
  readonly env: Record<string, string>
  child: ChildProcess | null = null
  /** Its stderr and stdout (JSON log lines), for what it said. */
  readonly log: string

  constructor(port: number, env: Record<string, string>, log: string) {
    this.port = port
    this.env = env
    this.log = log
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`
  }

  /** `env` may depend on the instance's own address (its PATCHBAY_PUBLIC_URL, say). */
  static async start(
    env: Record<string, string> | ((url: string) => Record<string, string>),
    logDir: string,
  ): Promise<Instance> {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    const instance = new Instance(
      port,
      typeof env === 'function' ? env(url) : env,
      path.join(logDir, `patchbay-${port}.log`),
    )
    await instance.restart()
    return instance
  }

  /** Starts the process again and waits until it is ready (`wait: false`: returns once spawned). */
  async restart(opts: { wait?: boolean } = {}): Promise<void> {
    const out = fs.openSync(this.log, 'a')
    this.child = spawn(process.execPath, [path.join(root, 'src/main.ts')], {
      cwd: root,
      env: {
        ...process.env,
        PORT: String(this.port),
        HOST: '127.0.0.1',
        PATCHBAY_ADMIN_KEY: ADMIN_KEY,
        ...LOOPBACK_EGRESS,
        PATCHBAY_DELIVERY_SCAN_MS: '200',
        PATCHBAY_DELIVERY_TIMEOUT_MS: '2000',
        LOG_LEVEL: 'info',
        LOG_FORMAT: 'json',
        ...this.env,
      },
      stdio: ['ignore', out, out],
    })
    fs.closeSync(out)
    if (opts.wait !== false) await untilHealthy(this.url, this.child)
  }

  /** Still running (neither exited nor killed). */
  get alive(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    const child = this.child
    if (!child) return null
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((r) => child.once('exit', () => r()))
      child.kill(signal)
      await exited
    }
    return child.exitCode
  }

  api(): Api {
    return adminApi(() => this.port, ADMIN_KEY)
  }

  /** Its log lines that are JSON, parsed. */
  logLines(): Array<Record<string, any>> {
    return fs
      .readFileSync(this.log, 'utf8')
      .split('\n')
      .flatMap((l) => {
        try {
          return [JSON.parse(l)]
        } catch {
          return []
        }
      })
  }
}

/** A task-board connection, an agent pushed to `receiver`, and its New Card trigger; the trigger's callback path. */
export async function newCardAgent(api: Api, sandbox: TaskboardSandbox, receiver: Receiver): Promise<string> {
  const conn = await api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: sandbox.demo.key, token: sandbox.demo.token, secret: sandbox.demo.secret },
  })
  if (conn.status !== 201) throw new Error(`connection: ${conn.status} ${JSON.stringify(conn.body)}`)
  const agent = await api('POST', '/v1/agents', {
    name: `faults-${randomBytes(3).toString('hex')}`,
    scope: { boards: [sandbox.demo.boardId] },
    connectionIds: [conn.body.id],
    delivery: { type: 'webhook', url: receiver.url },
  })
  receiver.secret = agent.body.signingSecret
  const trig = await api('POST', `/v1/agents/${agent.body.id}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId: conn.body.id,
    config: { idBoard: sandbox.demo.boardId },
  })
  if (trig.status !== 201) throw new Error(`trigger: ${trig.status} ${JSON.stringify(trig.body)}`)
  return `/hooks/taskboard/${trig.body.webhook.id}`
}

/** What the senders saw, by status; and every 503 without Retry-After. */
export interface Tally {
  sent: number
  byStatus: Record<string, number>
  withoutRetryAfter: number
  /** Upstream action ids acknowledged with 200. */
  acked: Set<string>
  /** Refused answers' codes, counted. */
  codes: Record<string, number>
}

export const newTally = (): Tally => ({
  sent: 0,
  byStatus: {},
  withoutRetryAfter: 0,
  acked: new Set(),
  codes: {},
})

/**
 * Sends signed New Card deliveries from `senders` loops until `until()` says stop, to the
 * instances in turn; each delivery is signed for `publicUrl` + `hookPath` as the task-board signs it.
 * A refused one (503) is sent again after its Retry-After (capped at 1 s to keep the run short),
 * as the task-board does; a connection refused counts as status 0 and is sent again too.
 */
export async function sendDeliveries(opts: {
  targets: () => string[]
  publicUrl: string
  hookPath: string
  sandbox: TaskboardSandbox
  senders: number
  until: () => boolean
  tally: Tally
  /** Give up on a delivery after this many refusals (the upstream's patience), so the run is bounded. */
  maxTries?: number
}): Promise<void> {
  const { sandbox, tally } = opts
  const callbackURL = opts.publicUrl + opts.hookPath
  let next = 0
  const one = async (): Promise<void> => {
    const actionId = randomBytes(12).toString('hex')
    const body = JSON.stringify({
      action: {
        id: actionId,
        type: 'createCard',
        date: new Date().toISOString(),
        data: {
          board: { id: sandbox.demo.boardId },
          list: { id: sandbox.demo.listIds[0] },
          card: { id: randomBytes(12).toString('hex'), name: `fault ${actionId}` },
        },
      },
      model: { id: sandbox.demo.boardId },
    })
    const signature = createHmac('sha1', sandbox.demo.secret)
      .update(body + callbackURL)
      .digest('base64')
    for (let attempt = 0; attempt < (opts.maxTries ?? 60); attempt++) {
      const targets = opts.targets()
      const target = targets[next++ % targets.length]
      tally.sent++
      let status = 0
      let retryAfter: string | null = null
      let code = ''
      try {
        const res = await fetch(target + opts.hookPath, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-taskboard-webhook': signature },
          body,
          signal: AbortSignal.timeout(20_000),
        })
        status = res.status
        retryAfter = res.headers.get('retry-after')
        const text = await res.text()
        if (status !== 200)
          code = (JSON.parse(text || '{}') as { error?: { code?: string } }).error?.code ?? ''
      } catch {
        status = 0
      }
      tally.byStatus[status] = (tally.byStatus[status] ?? 0) + 1
      if (code) tally.codes[code] = (tally.codes[code] ?? 0) + 1
      if (status === 200) {
        tally.acked.add(actionId)
        return
      }
      if (status === 503 && !retryAfter) tally.withoutRetryAfter++
      // Refused for good (4xx other than 429): the upstream gives up.
      if (status >= 400 && status < 500 && status !== 429) return
      const wait = Math.min(1000, retryAfter ? Number(retryAfter) * 1000 : 500)
      await new Promise((r) => setTimeout(r, wait))
      if (opts.until()) return
    }
  }
  await Promise.all(
    Array.from({ length: opts.senders }, async () => {
      while (!opts.until()) await one()
    }),
  )
}

/** Polls `/readyz` of `url` every 250 ms while `until()` is false: what it answered, counted. */
export async function watchReadiness(
  url: string,
  until: () => boolean,
): Promise<{ answers: Array<{ at: number; status: number; checks: Record<string, string> }> }> {
  const answers: Array<{ at: number; status: number; checks: Record<string, string> }> = []
  while (!until()) {
    try {
      const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5_000) })
      const body = (await res.json()) as { checks: Record<string, string> }
      answers.push({ at: Date.now(), status: res.status, checks: body.checks })
    } catch {
      answers.push({ at: Date.now(), status: 0, checks: {} })
    }
    await new Promise((r) => setTimeout(r, 250))
  }
  return { answers }
}

/** Each acknowledged action's distinct delivery ids at the agent (one each: nothing lost or doubled). */
export function deliveriesByAction(receiver: Receiver): Map<string, { ids: Set<string>; pushes: number }> {
  const by = new Map<string, { ids: Set<string>; pushes: number }>()
  for (const r of receiver.received) {
    const action = r.body.data.event.upstreamId as string
    const entry = by.get(action) ?? { ids: new Set<string>(), pushes: 0 }
    entry.ids.add(r.id)
    entry.pushes++
    by.set(action, entry)
  }
  return by
}

/** A scenario's figures, one JSON line the bench script and the README table read. */
export function report(figures: Record<string, unknown>): void {
  process.stdout.write(`FAULTS ${JSON.stringify(figures)}\n`)
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
