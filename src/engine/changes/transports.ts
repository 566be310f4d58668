// The two ways changes travel between instances. PostgreSQL LISTEN/NOTIFY needs nothing beyond
// the database the instances already share; Redis pub/sub is used instead when Redis is
// configured. Each transport reconnects on its own and reports a gap (`onLost`), after which
// every cache drops what it holds.
import type { Redis } from 'ioredis'
import type pg from 'pg'
import type { RedisLink } from '../../kit/redis-link.ts'
import type { ChangeTransport } from './changes.ts'

const RECONNECT_MS = 1000

/** LISTEN on one dedicated connection; NOTIFY through the shared pool. */
export class PostgresChangeTransport implements ChangeTransport {
  #url: string
  #pool: pg.Pool
  #channel: string
  #client: pg.Client | null = null
  #closed = false
  #onError: (err: unknown) => void

  constructor(opts: { url: string; pool: pg.Pool; channel: string; onError?: (err: unknown) => void }) {
    this.#url = opts.url
    this.#pool = opts.pool
    // Channel names are identifiers (at most 63 bytes).
    this.#channel = opts.channel.replace(/[^a-z0-9_]/gi, '_').slice(0, 63)
    this.#onError = opts.onError ?? (() => {})
  }

  async start(onMessage: (message: string) => void, onLost: () => void): Promise<void> {
    const connect = async (): Promise<void> => {
      const { Client } = (await import('pg')).default
      const client = new Client({ connectionString: this.#url })
      client.on('notification', (n) => {
        if (n.channel === this.#channel && n.payload) onMessage(n.payload)
      })
      client.on('error', (err) => {
        this.#onError(err)
        if (this.#client !== client) return
        this.#client = null
        client.end().catch(() => {})
        if (!this.#closed) setTimeout(() => reconnect(), RECONNECT_MS).unref()
      })
      await client.connect()
      await client.query(`LISTEN "${this.#channel}"`)
      this.#client = client
    }
    const reconnect = async () => {
      if (this.#closed) return
      try {
        await connect()
        onLost()
      } catch (err) {
        this.#onError(err)
        setTimeout(() => reconnect(), RECONNECT_MS).unref()
      }
    }
    await connect()
  }

  async send(message: string): Promise<void> {
    await this.#pool.query('SELECT pg_notify($1, $2)', [this.#channel, message])
  }

  async close(): Promise<void> {
    this.#closed = true
    const client = this.#client
    this.#client = null
    await client?.end().catch(() => {})
  }
}

/** Publishes on the service's Redis connection; listens on a connection of its own. */
export class RedisChangeTransport implements ChangeTransport {
  #sub: Redis
  #pub: Redis
  #channel: string

  #link: RedisLink | null

  /** With a `link`, the listening connection's errors are heard there (an outage logged once) and publishes are bounded in time. */
  constructor(opts: { redis: Redis; channel: string; link?: RedisLink }) {
    this.#pub = opts.redis
    this.#sub = opts.redis.duplicate({ lazyConnect: true })
    this.#link = opts.link ?? null
    this.#link?.watch(this.#sub)
    this.#channel = opts.channel
  }

  async start(onMessage: (message: string) => void, onLost: () => void): Promise<void> {
    this.#sub.on('message', (channel: string, message: string) => {
      if (channel === this.#channel) onMessage(message)
    })
    let first = true
    this.#sub.on('ready', () => {
      if (!first) onLost()
      first = false
    })
    // ioredis subscribes again by itself after a reconnect.
    await this.#sub.connect()
    await this.#sub.subscribe(this.#channel)
  }

  async send(message: string): Promise<void> {
    const publishing = this.#pub.publish(this.#channel, message)
    await (this.#link ? this.#link.timed(publishing) : publishing)
  }

  async close(): Promise<void> {
    this.#sub.disconnect()
  }
}

/**
 * Redis pub/sub while Redis answers, PostgreSQL LISTEN/NOTIFY while it does not: both are heard
 * all the time (a message may arrive twice; every listener takes a change twice as well as once),
 * and each message is sent on Redis when it is up, on PostgreSQL otherwise or when Redis fails it.
 */
export class RedisOrPostgresChangeTransport implements ChangeTransport {
  #redis: RedisChangeTransport
  #postgres: PostgresChangeTransport
  #link: { readonly up: boolean }

  constructor(
    redis: RedisChangeTransport,
    postgres: PostgresChangeTransport,
    link: { readonly up: boolean },
  ) {
    this.#redis = redis
    this.#postgres = postgres
    this.#link = link
  }

  async start(onMessage: (message: string) => void, onLost: () => void): Promise<void> {
    await this.#postgres.start(onMessage, onLost)
    await this.#redis.start(onMessage, onLost)
  }

  async send(message: string): Promise<void> {
    if (this.#link.up)
      try {
        await this.#redis.send(message)
        return
      } catch {
        // Redis went away meanwhile: PostgreSQL carries this one.
      }
    await this.#postgres.send(message)
  }

  async close(): Promise<void> {
    await this.#redis.close()
    await this.#postgres.close()
  }
}
