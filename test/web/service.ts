// A real Patchbay for the browser tests and the screenshot script: SQLite in a temporary
// directory, the three sandbox upstreams in-process, and the sandboxes' demo OAuth apps so the
// task-board redirect and the code-host pop-up sign-ins work offline.
import { type CodehostSandbox, startCodehostSandbox } from '../../sandbox/codehost/index.ts'
import { type ContactdataSandbox, startContactdataSandbox } from '../../sandbox/contactdata/index.ts'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { loadConfig } from '../../src/config.ts'
import { type RunningService, startService } from '../../src/service.ts'
import { tempDir } from '../helpers/databases.ts'
import { keyedApi } from '../helpers/main-process.ts'
import { LOOPBACK_EGRESS } from '../helpers/service.ts'

export interface DashboardService {
  service: RunningService
  url: string
  adminKey: string
  taskboard: TaskboardSandbox
  codehost: CodehostSandbox
  contactdata: ContactdataSandbox
  api<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>
  /** A request to the task-board sandbox's API as the demo account (key and token). */
  taskboardApi<T = any>(method: string, path: string, body?: unknown): Promise<T>
  close(): Promise<void>
}

export async function startDashboardService(env: Record<string, string> = {}): Promise<DashboardService> {
  const [taskboard, codehost, contactdata] = await Promise.all([
    startTaskboardSandbox(),
    startCodehostSandbox({ port: 0 }),
    startContactdataSandbox(),
  ])
  const adminKey = `pb_admin_web_${Math.random().toString(36).slice(2)}`
  const config = {
    ...loadConfig({ ...LOOPBACK_EGRESS, ...env }),
    port: 0,
    host: '127.0.0.1',
    databaseUrl: null,
    dataDir: tempDir('patchbay-web-'),
    adminKey,
  }
  const service = await startService(config, {
    baseUrls: { taskboard: taskboard.url, codehost: codehost.url, contactdata: contactdata.url },
    logging: false,
    oauthApps: {
      taskboard: { clientId: taskboard.demo.key, clientSecret: taskboard.demo.secret },
      codehost: { clientId: codehost.demo.oauthClientId, clientSecret: codehost.demo.oauthClientSecret },
    },
  })
  const api = keyedApi(() => service.url, adminKey)
  const taskboardApi = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${taskboard.url}${path}`, {
      method,
      headers: {
        authorization: `OAuth oauth_consumer_key="${taskboard.demo.key}", oauth_token="${taskboard.demo.token}"`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    })
    const text = await res.text()
    if (!res.ok) throw new Error(`task-board sandbox ${method} ${path}: ${res.status} ${text}`)
    return text ? JSON.parse(text) : null
  }
  return {
    service,
    url: service.url,
    adminKey,
    taskboard,
    codehost,
    contactdata,
    api,
    taskboardApi,
    close: async () => {
      await service.close()
      await Promise.all([taskboard.close(), codehost.close(), contactdata.close()])
    },
  }
}
