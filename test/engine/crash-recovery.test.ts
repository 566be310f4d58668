// Killing Patchbay (SIGKILL, not a graceful stop) during a burst of webhooks loses no event it
// acknowledged, and after a restart delivers each one exactly once (one delivery id per event).
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { createHmac, randomBytes } from 'node:crypto'
import path from 'node:path'
import { after, before, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { tempDir } from '../helpers/databases.ts'
import { adminApi, startOnFreePort, untilHealthy } from '../helpers/main-process.ts'
import { eventually, Receiver } from '../helpers/receiver.ts'
import { LOOPBACK_EGRESS } from '../helpers/service.ts'

const root = path.resolve(import.meta.dirname, '../..')
const adminKey = 'pb_admin_crash_test_key'
let sandbox: TaskboardSandbox
let receiver: Receiver
let port: number
let dataDir: string
let child: ChildProcess | null = null

/** Patchbay on `port`, as `npm start` runs it. */
function spawnChild(port: number): ChildProcess {
  return spawn(process.execPath, [path.join(root, 'src/main.ts')], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      PATCHBAY_PUBLIC_URL: `http://127.0.0.1:${port}`,
      PATCHBAY_DATA_DIR: dataDir,
      PATCHBAY_ADMIN_KEY: adminKey,
      PATCHBAY_TASKBOARD_URL: sandbox.url,
      // The sandbox and the agent's receiver are on loopback: an operator-set address is checked too.
      ...LOOPBACK_EGRESS,
      PATCHBAY_DELIVERY_SCAN_MS: '50',
      // A push held by the killed process is taken over when its lease ends (twice this limit and 5 s).
      PATCHBAY_DELIVERY_TIMEOUT_MS: '2000',
      // A push that timed out on a loaded machine is tried again within the test's wait, not in 5 min.
      PATCHBAY_DELIVERY_RETRY_SCHEDULE_MS: '1000,2000,4000,8000,8000,8000,8000,8000',
      LOG_LEVEL: 'silent',
    },
    // Piped: untilHealthy reads that it listens, so the answers are its own (see there).
    stdio: ['ignore', 'pipe', 'inherit'],
  })
}

const api = adminApi(() => port, adminKey)

before(async () => {
  sandbox = await startTaskboardSandbox()
  receiver = await new Receiver().start()
  dataDir = tempDir('patchbay-crash-')
  ;({ child, port } = await startOnFreePort(spawnChild))
})
after(async () => {
  child?.kill('SIGKILL')
  await receiver.close()
  await sandbox.close()
})

test('no acknowledged event is lost and none is delivered twice across a SIGKILL', {
  timeout: 120_000,
}, async () => {
  const conn = await api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: sandbox.demo.key, token: sandbox.demo.token, secret: sandbox.demo.secret },
  })
  const agent = await api('POST', '/v1/agents', {
    name: 'crash-watcher',
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
  assert.equal(trig.status, 201, JSON.stringify(trig.body))
  const callbackURL = `http://127.0.0.1:${port}/hooks/taskboard/${trig.body.webhook.id}`

  // A burst of signed deliveries, signed here the way the upstream signs them.
  const acked = new Set<string>()
  let sent = 0
  let killed = false
  const TOTAL = 600
  const send = async () => {
    while (sent < TOTAL) {
      const i = sent++
      const actionId = randomBytes(12).toString('hex')
      const body = JSON.stringify({
        action: {
          id: actionId,
          type: 'createCard',
          date: new Date().toISOString(),
          data: {
            board: { id: sandbox.demo.boardId },
            list: { id: sandbox.demo.listIds[0] },
            card: { id: randomBytes(12).toString('hex'), name: `burst ${i}` },
          },
        },
        model: { id: sandbox.demo.boardId },
      })
      const signature = createHmac('sha1', sandbox.demo.secret)
        .update(body + callbackURL)
        .digest('base64')
      try {
        const res = await fetch(callbackURL, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-taskboard-webhook': signature },
          body,
        })
        if (res.status === 200) acked.add(actionId)
      } catch {
        // The process is gone: this one was never acknowledged.
      }
      if (!killed && acked.size >= 200) {
        killed = true
        child!.kill('SIGKILL')
      }
    }
  }
  await Promise.all(Array.from({ length: 16 }, send))
  assert.ok(killed, 'the process was killed mid-burst')
  assert.ok(acked.size >= 200 && acked.size < TOTAL, `acknowledged ${acked.size} of ${TOTAL}`)

  await new Promise<void>((r) =>
    child!.exitCode !== null || child!.signalCode ? r() : child!.once('exit', () => r()),
  )
  // The same port again: the upstream's webhook calls back to it.
  child = spawnChild(port)
  await untilHealthy(`http://127.0.0.1:${port}`, child)

  const actionOf = (r: { body: any }) => r.body.data.event.upstreamId as string
  await receiver.until((rs) => [...acked].every((id) => rs.some((r) => actionOf(r) === id)), 60_000)
  await eventually(
    async () => (await api('GET', '/v1/deliveries?status=pending&limit=10')).body.deliveries.length,
    (n) => n === 0,
    30_000,
  )

  const deliveryIdsByAction = new Map<string, Set<string>>()
  for (const r of receiver.received) {
    const set = deliveryIdsByAction.get(actionOf(r)) ?? new Set()
    set.add(r.id)
    deliveryIdsByAction.set(actionOf(r), set)
  }
  for (const id of acked)
    assert.equal(deliveryIdsByAction.get(id)?.size, 1, `event ${id} has exactly one delivery`)
  assert.ok(receiver.received.every((r) => r.verified))
})
