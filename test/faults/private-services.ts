// A PostgreSQL and a Redis of the faults suite's own, which it stops and starts at will: a
// throwaway cluster made with initdb in a temporary folder (the Debian binaries under
// /usr/lib/postgresql/*/bin) and a `redis-server`, each on a free loopback port — never the shared
// servers on 5432 and 6379, which other tests and engineers use.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { freePort } from '../helpers/main-process.ts'
import { eventually } from '../helpers/receiver.ts'

/** The newest PostgreSQL's binaries, or null when none is installed. */
function postgresBin(): string | null {
  const base = '/usr/lib/postgresql'
  if (!fs.existsSync(base)) return null
  const versions = fs
    .readdirSync(base)
    .filter((v) => fs.existsSync(path.join(base, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a))
  return versions.length > 0 ? path.join(base, versions[0], 'bin') : null
}

/** Why the private servers cannot be had here, or null when they can. */
export function privateServicesUnavailable(): string | null {
  if (!postgresBin()) return 'no PostgreSQL binaries under /usr/lib/postgresql/*/bin (install postgresql)'
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' })
  } catch {
    return 'no redis-server on the PATH (install redis-server)'
  }
  // PostgreSQL refuses to run as root: as root the cluster is run as the `postgres` user.
  if (process.getuid?.() === 0 && !userIds('postgres')) return 'running as root without a postgres user'
  return null
}

function userIds(name: string): { uid: number; gid: number } | null {
  try {
    const uid = Number(execFileSync('id', ['-u', name]).toString().trim())
    const gid = Number(execFileSync('id', ['-g', name]).toString().trim())
    return { uid, gid }
  } catch {
    return null
  }
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once('exit', () => resolve())
  })

export class PrivatePostgres {
  readonly port: number
  readonly dir: string
  #bin: string
  #owner: { uid: number; gid: number } | undefined
  #child: ChildProcess | null = null

  private constructor(port: number, dir: string, bin: string, owner?: { uid: number; gid: number }) {
    this.port = port
    this.dir = dir
    this.#bin = bin
    this.#owner = owner
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`
  }

  static async start(): Promise<PrivatePostgres> {
    const bin = postgresBin()!
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'patchbay-faults-pg-'))
    const owner = process.getuid?.() === 0 ? userIds('postgres')! : undefined
    if (owner) fs.chownSync(dir, owner.uid, owner.gid)
    execFileSync(
      path.join(bin, 'initdb'),
      ['-D', path.join(dir, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'],
      { stdio: 'ignore', ...owner },
    )
    const pg = new PrivatePostgres(await freePort(), dir, bin, owner)
    await pg.resume()
    return pg
  }

  /** Starts (again) on the same port and data, and waits until it takes queries. */
  async resume(): Promise<void> {
    this.#child = spawn(
      path.join(this.#bin, 'postgres'),
      [
        '-D',
        path.join(this.dir, 'data'),
        '-p',
        String(this.port),
        '-k',
        this.dir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'fsync=off',
        '-c',
        'max_connections=200',
      ],
      { stdio: 'ignore', ...this.#owner },
    )
    await eventually(
      async () => {
        try {
          execFileSync(path.join(this.#bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(this.port), '-q'])
          return true
        } catch {
          return false
        }
      },
      (ok) => ok,
      30_000,
    )
  }

  /** A fast shutdown (what `pg_ctl stop -m fast` does): every connection is ended. */
  async stop(): Promise<void> {
    const child = this.#child
    this.#child = null
    if (!child) return
    child.kill('SIGINT')
    await exited(child)
  }

  async close(): Promise<void> {
    await this.stop()
    fs.rmSync(this.dir, { recursive: true, force: true })
  }
}

export class PrivateRedis {
  readonly port: number
  #child: ChildProcess | null = null

  private constructor(port: number) {
    this.port = port
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort())
    await redis.resume()
    return redis
  }

  async resume(): Promise<void> {
    this.#child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    )
    await eventually(
      async () => {
        try {
          execFileSync('redis-cli', ['-p', String(this.port), 'ping'], { stdio: 'pipe' })
          return true
        } catch {
          return false
        }
      },
      (ok) => ok,
      15_000,
    )
  }

  async stop(): Promise<void> {
    const child = this.#child
    this.#child = null
    if (!child) return
    child.kill('SIGKILL')
    await exited(child)
  }

  async close(): Promise<void> {
    await this.stop()
  }
}
