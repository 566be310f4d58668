// The embedded database's disk filling up under a stream of signed webhooks, on a small tmpfs of
// its own (root only; skipped with the reason otherwise): once below PATCHBAY_MIN_FREE_DISK_MB, and
// once completely full with no threshold. Deliveries are answered 503 with Retry-After (never a
// 500, never a 2xx for something not stored), API writes 507 STORAGE_FULL while reads still answer,
// /readyz is not ready and says why; once space is freed everything resumes by itself, and every
// acknowledged delivery reaches the agent once.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, test } from 'node:test'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { tempDir } from '../helpers/databases.ts'
import { eventually, Receiver } from '../helpers/receiver.ts'
import {
  deliveriesByAction,
  Instance,
  newCardAgent,
  newTally,
  report,
  sendDeliveries,
  sleep,
  watchReadiness,
} from './harness.ts'

const FULL_MS = Number(process.env.FAULTS_OUTAGE_MS ?? 15_000)
const TMPFS_MB = 48

function tmpfsUnavailable(): string | null {
  if (process.getuid?.() !== 0) return 'needs root to mount a small tmpfs for the data directory'
  const probe = fs.mkdtempSync(path.join(os.tmpdir(), 'patchbay-faults-probe-'))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe], { stdio: 'pipe' })
    execFileSync('umount', [probe])
    return null
  } catch (err) {
    return `mount -t tmpfs refused here (${(err as Error).message.split('\n')[0]})`
  } finally {
    fs.rmSync(probe, { recursive: true, force: true })
  }
}

const skip = tmpfsUnavailable()
if (skip) process.stdout.write(`# disk-full scenario skipped: ${skip}\n`)
let sandbox: TaskboardSandbox

before(async () => {
  if (!skip) sandbox = await startTaskboardSandbox()
})
after(async () => {
  await sandbox?.close()
})

const freeBytes = (dir: string) => {
  const s = fs.statfsSync(dir)
  return Number(s.bavail) * Number(s.bsize)
}

/** Fills the filesystem of `dir` until `leave` bytes are free (0: until it refuses). */
function fill(dir: string, leave: number): string {
  const file = path.join(dir, `filler-${Date.now()}`)
  const fd = fs.openSync(file, 'w')
  const chunk = Buffer.alloc(256 * 1024)
  try {
    for (;;) {
      const free = freeBytes(dir)
      if (free <= leave) break
      const n = Math.min(chunk.length, free - leave)
      fs.writeSync(fd, chunk, 0, n)
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err
  } finally {
    fs.closeSync(fd)
  }
  return file
}

for (const variant of [
  { name: 'below the threshold', minFreeMb: 8, leaveBytes: 4 * 1024 * 1024 },
  { name: 'completely full', minFreeMb: 0, leaveBytes: 0 },
])
  test(`the embedded database's disk ${variant.name} under ingress: 503 with Retry-After, API writes 507, /readyz not ready, nothing acknowledged lost, resumes when space returns`, {
    skip: skip ?? false,
    timeout: 180_000,
  }, async () => {
    const logDir = tempDir('patchbay-faults-log-')
    const mount = fs.mkdtempSync(path.join(os.tmpdir(), 'patchbay-faults-disk-'))
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_MB}m`, 'tmpfs', mount])
    const receiver = await new Receiver().start()
    let instance: Instance | null = null
    // Set in `finally` too: a failed wait must not leave the senders and the readiness watcher
    // running (they would keep the test process alive long after the test has failed).
    let stop = false
    let full = true
    try {
      instance = await Instance.start(
        (self) => ({
          PATCHBAY_DATA_DIR: path.join(mount, 'data'),
          PATCHBAY_TASKBOARD_URL: sandbox.url,
          // The other upstreams are not used: no sandbox of theirs writes to this disk.
          PATCHBAY_CODEHOST_URL: 'http://127.0.0.1:9',
          PATCHBAY_CONTACTDATA_URL: 'http://127.0.0.1:9',
          PATCHBAY_PUBLIC_URL: self,
          PATCHBAY_MIN_FREE_DISK_MB: String(variant.minFreeMb),
        }),
        logDir,
      )
      const inst = instance
      const api = inst.api()
      const hookPath = await newCardAgent(api, sandbox, receiver)
      const tally = newTally()
      const sending = sendDeliveries({
        targets: () => [inst.url],
        publicUrl: inst.url,
        hookPath,
        sandbox,
        senders: 4,
        until: () => stop,
        tally,
      })
      await sleep(3_000)
      const readiness = watchReadiness(inst.url, () => !full)
      const before = { ...tally.byStatus }
      const filler = fill(mount, variant.leaveBytes)
      // Until the instance has noticed, a write or two may still land; then it refuses.
      const refusedAt = await eventually(
        async () => (await fetch(`${inst.url}/readyz`)).status,
        (s) => s === 503,
        15_000,
      )
      void refusedAt
      const write = await api('POST', '/v1/agents', {
        name: 'during full disk',
        delivery: { type: 'stream' },
      })
      const read = await api('GET', '/v1/agents')
      const readyBody = await (await fetch(`${inst.url}/readyz`)).json()
      await sleep(FULL_MS)
      const during: Record<string, number> = {}
      for (const [k, v] of Object.entries(tally.byStatus)) during[k] = v - (before[k] ?? 0)
      fs.rmSync(filler)
      const freedAt = Date.now()
      const ackedAtFree = tally.acked.size
      await eventually(
        async () => tally.acked.size,
        (n) => n > ackedAtFree + 10,
        60_000,
      )
      const recoveredMs = Date.now() - freedAt
      full = false
      const ready = await readiness
      await sleep(1_000)
      stop = true
      await sending

      assert.ok(inst.alive, 'the process is still running')
      assert.equal(tally.byStatus['500'] ?? 0, 0, `no 500: ${JSON.stringify(tally.byStatus)}`)
      assert.ok(
        Object.keys(tally.byStatus).every((s) => s === '200' || s === '503'),
        `200 or 503 only: ${JSON.stringify(tally.byStatus)}`,
      )
      assert.ok((during['503'] ?? 0) > 0, 'deliveries were refused while the disk was full')
      assert.equal(tally.withoutRetryAfter, 0, 'every 503 has Retry-After')
      assert.equal(write.status, 507, JSON.stringify(write.body))
      assert.equal(write.body.error.code, 'STORAGE_FULL')
      assert.equal(read.status, 200, 'reads still answer')
      assert.equal(readyBody.ready, false)
      assert.match(readyBody.checks.disk, /^full/)
      assert.ok(ready.answers.some((a) => a.status === 503))
      assert.equal((await fetch(`${inst.url}/readyz`)).status, 200, 'ready again without a restart')
      await receiver.until((rs) => {
        const seen = new Set(rs.map((r) => r.body.data.event.upstreamId))
        return [...tally.acked].every((id) => seen.has(id))
      }, 90_000)
      const by = deliveriesByAction(receiver)
      let pushes = 0
      for (const id of tally.acked) {
        assert.equal(by.get(id)!.ids.size, 1, 'one delivery per acknowledged event')
        pushes += by.get(id)!.pushes
      }
      report({
        scenario: `disk-${variant.minFreeMb ? 'below-threshold' : 'full'}`,
        tmpfsMb: TMPFS_MB,
        minFreeDiskMb: variant.minFreeMb,
        fullMs: FULL_MS,
        sent: tally.sent,
        acknowledged: tally.acked.size,
        answers: tally.byStatus,
        answersWhileFull: during,
        refusedCodes: tally.codes,
        answers500: tally.byStatus['500'] ?? 0,
        withoutRetryAfter: tally.withoutRetryAfter,
        apiWriteWhileFull: `${write.status} ${write.body.error?.code}`,
        apiReadWhileFull: read.status,
        readyzWhileFull: readyBody.checks.disk,
        delivered: tally.acked.size,
        duplicatePushes: pushes - tally.acked.size,
        recoveredMsAfterSpaceFreed: recoveredMs,
      })
    } finally {
      stop = true
      full = false
      await instance?.stop('SIGKILL')
      await receiver.close()
      execFileSync('umount', ['-l', mount])
      fs.rmSync(mount, { recursive: true, force: true })
    }
  })
