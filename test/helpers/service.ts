// Starts a real Patchbay (on an ephemeral port, over a real database) against real sandbox
// upstreams, and gives tests a small client for its API.
import pg from 'pg'
import { type Dispatcher, request } from 'undici'
import { type CodehostSandbox, startCodehostSandbox } from '../../sandbox/codehost/index.ts'
import { type ContactdataSandbox, startContactdataSandbox } from '../../sandbox/contactdata/index.ts'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { loadConfig } from '../../src/config.ts'
import type { Clock } from '../../src/kit/clock.ts'
import type { ConnectorDefinition } from '../../src/kit/define.ts'
import type { Resolve } from '../../src/kit/egress.ts'
import type { Pacer } from '../../src/kit/pacer.ts'
import { type RunningService, startService } from '../../src/service.ts'
import { serviceDatabase, type TestDatabase } from './databases.ts'
import { patchbayRequestProblems } from './taskboard-description.ts'

export interface TestService {
  service: RunningService
  url: string
  adminKey: string
  taskboard: TaskboardSandbox
  /** Present when asked for with the `contactdata` option. */
  contactdata?: ContactdataSandbox
  /** Present when asked for with the `codehost` option (its demo OAuth app is Patchbay's). */
  codehost?: CodehostSandbox
  api<T = any>(
    method: string,
    path: string,
    body?: unknown,
    key?: string,
  ): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: T }>
  /** Where its store is: another service given the same (db option) shares it. */
  database: { databaseUrl: string | null; dataDir: string; pgSchema?: string }
  close(): Promise<void>
}

/**
 * Redis keys of this test file: files run in parallel (and other checkouts may share the Redis),
 * so each test process writes under its own prefix; the instances of one file share it.
 */
export const TEST_REDIS_PREFIX = `patchbay-test:${process.pid}-${Math.random().toString(36).slice(2, 8)}:`

/**
 * The sandbox upstreams and receivers of the tests listen on loopback, which the egress guard
 * refuses unless the operator allows it: the tests opt in, explicitly, as an operator would.
 */
export const LOOPBACK_EGRESS = { PATCHBAY_EGRESS_ALLOW: '127.0.0.0/8,::1' }

export async function startTestService(
  opts: {
    db?: TestDatabase
    env?: Record<string, string>
    taskboard?: TaskboardSandbox
    /** A contact-data sandbox to use, or true to start one. */
    contactdata?: ContactdataSandbox | true
    /** A code-host sandbox to use, or true to start one. */
    codehost?: CodehostSandbox | true
    /** Time for the waiting parts (a ManualClock drives it by hand). */
    clock?: Clock
    /** A pacer instead of the in-memory one. */
    pacer?: Pacer
    /** Log lines (JSON) go here instead of nowhere. */
    logDestination?: { write(line: string): void }
    /** Name resolution for the egress guard: a stub, so tests never resolve or reach real names. */
    egressResolve?: Resolve
    /** Connectors instead of the shipped ones (a test-only connector added: test/connectors/extra). */
    connectors?: ConnectorDefinition[]
    /** Base addresses of the upstreams of test-only connectors, by connector id. */
    baseUrls?: Record<string, string>
  } = {},
): Promise<TestService> {
  const taskboard = opts.taskboard ?? (await startTaskboardSandbox())
  const contactdata =
    opts.contactdata === true ? await startContactdataSandbox() : (opts.contactdata ?? undefined)
  const codehost = opts.codehost === true ? await startCodehostSandbox() : (opts.codehost ?? undefined)
  const db = (opts.db ?? serviceDatabase()).fresh()
  const adminKey = `pb_admin_test_${Math.random().toString(36).slice(2)}`
  const config = {
    ...loadConfig({ PATCHBAY_REDIS_PREFIX: TEST_REDIS_PREFIX, ...LOOPBACK_EGRESS, ...opts.env }),
    port: 0,
    host: '127.0.0.1',
    databaseUrl: db.databaseUrl,
    dataDir: db.dataDir,
    adminKey,
  }
  const service = await startService(config, {
    baseUrls: {
      taskboard: taskboard.url,
      contactdata: contactdata?.url,
      codehost: codehost?.url,
      ...opts.baseUrls,
    },
    oauthApps: {
      // The task-board sandbox's demo app (its API key and secret) is Patchbay's task-board OAuth app.
      taskboard: { clientId: taskboard.demo.key, clientSecret: taskboard.demo.secret },
      ...(codehost
        ? {
            codehost: {
              clientId: codehost.demo.oauthClientId,
              clientSecret: codehost.demo.oauthClientSecret,
            },
          }
        : {}),
    },
    pgSchema: db.pgSchema,
    logging: opts.logDestination !== undefined,
    logDestination: opts.logDestination,
    clock: opts.clock,
    pacer: opts.pacer,
    egressResolve: opts.egressResolve,
    connectors: opts.connectors,
  })
  // undici's request (the client Patchbay itself loads), not fetch: the tests' most frequent
  // call, and fetch's streams cost several times its CPU.
  const api = async (method: string, path: string, body?: unknown, key = adminKey) => {
    const res = await request(service.url + path, {
      method: method as Dispatcher.HttpMethod,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    })
    const text = await res.body.text()
    return { status: res.statusCode, headers: res.headers, body: text ? JSON.parse(text) : null }
  }
  return {
    service,
    url: service.url,
    adminKey,
    taskboard,
    contactdata,
    codehost,
    api,
    database: db,
    close: async () => {
      // What Patchbay sent the code-host sandbox it started, and what it answered and delivered,
      // against the code host's published descriptions (loaded only where a code host ran).
      const contract =
        opts.codehost === true && codehost
          ? await (await import('./codehost-contract.ts')).contractProblems(codehost)
          : []
      await service.close()
      // Every request Patchbay sent the task-board is checked against the independent description.
      const problems = await patchbayRequestProblems(taskboard)
      // A caller's own sandbox is closed here too when the check fails: the throw below skips the
      // rest of the caller's cleanup, and an open sandbox would keep the test file running.
      if (!opts.taskboard || problems.length > 0) await taskboard.close()
      if (opts.contactdata === true) await contactdata?.close()
      if (opts.codehost === true) await codehost?.close()
      if (db.pgSchema && db.databaseUrl) {
        const client = new pg.Client({ connectionString: db.databaseUrl })
        await client.connect()
        await client.query(`DROP SCHEMA IF EXISTS "${db.pgSchema}" CASCADE`)
        await client.end()
      }
      if (problems.length > 0)
        throw new Error(`Patchbay's task-board requests differ from the description:\n${problems.join('\n')}`)
      if (contract.length)
        throw new Error(
          `The code-host sandbox or Patchbay's requests differ from the published description:\n${contract.join('\n')}`,
        )
    },
  }
}
