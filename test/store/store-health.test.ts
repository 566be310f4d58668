// The store's health: an outage just seen is not ended by a probe in the same instant.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { StoreHealth } from '../../src/store/store-health.ts'

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })

test('a failure just seen holds for a whole probe period, even with the disk watch ticking, then the probe ends it', async () => {
  const probeMs = 40
  let probes = 0
  // The disk watch keeps a timer running all the time, at any phase against the failure.
  const health = new StoreHealth({
    probe: async () => void probes++,
    freeBytes: () => 1024 ** 3,
    probeMs,
  })
  try {
    for (let round = 0; round < 5; round++) {
      await sleep(Math.floor(probeMs * (round / 5)))
      const seen = Date.now()
      assert.equal(health.failure(refused())?.code, 'DATABASE_UNAVAILABLE')
      // Every look inside the period finds the store away; none may find it back.
      while (Date.now() - seen < probeMs - 2) {
        assert.equal(
          health.available,
          false,
          `round ${round}: back ${Date.now() - seen} ms after the failure`,
        )
        await sleep(1)
      }
      const deadline = Date.now() + 5_000
      while (!health.available && Date.now() < deadline) await sleep(5)
      assert.equal(health.available, true, 'the probe found the store back')
    }
    assert.ok(probes >= 5)
  } finally {
    health.close()
  }
})
