// Rotating an agent's signing secret with an overlap (issue 24): the previous secret stays valid
// for a window (24 h by default, settable, or none), during which every push carries a signature
// of each; a push right after a rotation is never signed with an old secret only — on the
// instance that rotated nor on another instance sharing the database.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, test } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { POSTGRES_URL, postgresUnavailableReason, type TestDatabase, tempDir } from '../helpers/databases.ts'
import { type Received, Receiver } from '../helpers/receiver.ts'
import { startTestService } from '../helpers/service.ts'
import { createCardDelivery, newCardAgent, postSigned } from '../helpers/taskboard.ts'

let sandbox: TaskboardSandbox
let receiver: Receiver

before(async () => {
  sandbox = await startTaskboardSandbox()
  receiver = await new Receiver().start()
})
after(async () => {
  await receiver?.close()
  await sandbox?.close()
})

const verifies = (r: Received, secret: string) => {
  try {
    new Webhook(secret).verify(r.raw, r.headers as Record<string, string>)
    return true
  } catch {
    return false
  }
}
const signatures = (r: Received) => String(r.headers['webhook-signature']).split(' ').length

/** A card created upstream reaches Patchbay through `callbackUrl`; answers the push the agent got. */
async function push(callbackUrl: string): Promise<Received> {
  const cardId = randomBytes(12).toString('hex')
  const res = await postSigned(sandbox, callbackUrl, JSON.stringify(createCardDelivery(sandbox, cardId)))
  assert.equal(res.status, 200, await res.text())
  const got = await receiver.until((rs) => rs.some((r) => r.body.data.event.data.card.id === cardId))
  return got.find((r) => r.body.data.event.data.card.id === cardId)!
}

test('a rotation keeps the previous secret valid for the overlap: both signatures at once, then none of a secret ended', async () => {
  const t = await startTestService({ taskboard: sandbox })
  try {
    const { agent, callbackUrl } = await newCardAgent(t, sandbox, {
      name: 'rotating',
      delivery: { type: 'webhook', url: receiver.url },
    })
    const first = agent.signingSecret as string
    const before = await push(callbackUrl)
    assert.ok(verifies(before, first))
    assert.equal(signatures(before), 1)

    // Default overlap: 24 hours, and the very next push carries both signatures.
    const rotated = await t.api('POST', `/v1/agents/${agent.id}/webhook-secret/rotate`)
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body))
    const second = rotated.body.signingSecret as string
    const until = Date.parse(rotated.body.previousSecretValidUntil)
    assert.ok(Math.abs(until - Date.now() - 24 * 3600_000) < 60_000, rotated.body.previousSecretValidUntil)
    const during = await push(callbackUrl)
    assert.equal(signatures(during), 2)
    assert.ok(verifies(during, second), 'the new secret verifies the push at once')
    assert.ok(verifies(during, first), 'the previous secret still verifies it during the overlap')

    // Rotated again with no overlap: only the newest secret signs, at once.
    const third = (
      await t.api('POST', `/v1/agents/${agent.id}/webhook-secret/rotate`, { previousValidForSeconds: 0 })
    ).body
    assert.equal(third.previousSecretValidUntil, null)
    const after = await push(callbackUrl)
    assert.equal(signatures(after), 1)
    assert.ok(verifies(after, third.signingSecret))
    assert.ok(!verifies(after, second) && !verifies(after, first), 'no earlier secret signs it')

    // An overlap under way can be ended on request.
    const fourth = (await t.api('POST', `/v1/agents/${agent.id}/webhook-secret/rotate`, {})).body
    assert.equal(signatures(await push(callbackUrl)), 2)
    assert.equal((await t.api('DELETE', `/v1/agents/${agent.id}/webhook-secret/previous`)).status, 204)
    const ended = await push(callbackUrl)
    assert.equal(signatures(ended), 1)
    assert.ok(verifies(ended, fourth.signingSecret))
    assert.ok(!verifies(ended, third.signingSecret))
  } finally {
    await t.close()
  }
})

const pgUnavailable = await postgresUnavailableReason()

test('two instances on PostgreSQL: a rotation on one reaches the other before the rotation answers', {
  skip: pgUnavailable ?? false,
}, async () => {
  const shared = {
    databaseUrl: POSTGRES_URL,
    dataDir: tempDir(),
    pgSchema: `pb_rot_${process.pid}_${Math.random().toString(36).slice(2, 8)}`,
  }
  const db: TestDatabase = { name: 'postgres', fresh: () => shared }
  const a = await startTestService({ taskboard: sandbox, db })
  const b = await startTestService({ taskboard: sandbox, db })
  try {
    const { agent, hookId } = await newCardAgent(a, sandbox, {
      name: 'rotating-shared',
      delivery: { type: 'webhook', url: receiver.url },
    })
    // Instance B pushes once with the first secret (and caches its target).
    const viaB = `${b.url}/hooks/taskboard/${hookId}`
    assert.ok(verifies(await push(viaB), agent.signingSecret))
    for (let round = 0; round < 3; round++) {
      // Rotated on A with no overlap: B's very next push is signed with the new secret only.
      const rotated = (
        await a.api(
          'POST',
          `/v1/agents/${agent.id}/webhook-secret/rotate`,
          { previousValidForSeconds: 0 },
          a.adminKey,
        )
      ).body
      const next = await push(viaB)
      assert.ok(verifies(next, rotated.signingSecret), `round ${round}: B signs with the new secret`)
      assert.equal(signatures(next), 1)
    }
  } finally {
    await b.close().catch(() => {})
    await a.close()
  }
})
