// Nothing acknowledged is lost to a bad neighbour. 100 correctly signed deliveries arrive at once
// with one hostile one (nested ~6,000 levels deep, or an action id that is an object): the hostile
// one is refused with 400 before it is acknowledged, and every good one is stored and delivered.
// An inbox row that cannot be processed is set aside with its reason and blocks nothing behind it;
// a delivery processed when it arrives leaves no raw copy there, one that cannot be is kept raw.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, test } from 'node:test'
import { sql } from 'kysely'
import { startTaskboardSandbox, type TaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { nowIso } from '../../src/store/ids.ts'
import { eventually, Receiver } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { createCardDelivery, newCardAgent, postSigned } from '../helpers/taskboard.ts'

let sandbox: TaskboardSandbox
let t: TestService
let receiver: Receiver
let hookId: string
let callbackUrl: string

before(async () => {
  sandbox = await startTaskboardSandbox()
  receiver = await new Receiver().start()
  t = await startTestService({ taskboard: sandbox })
  const made = await newCardAgent(t, sandbox, {
    name: 'neighbour',
    delivery: { type: 'webhook', url: receiver.url },
  })
  receiver.secret = made.agent.signingSecret
  ;({ hookId, callbackUrl } = made)
})

after(async () => {
  await t?.close()
  await receiver?.close()
  await sandbox?.close()
})

const hex = () => randomBytes(12).toString('hex')

/** An action whose data is nested ~6,000 levels deep (written as text: too deep to stringify). */
const deepAction = () =>
  JSON.stringify(action(hex())).replace(
    '"board":',
    `"checklist":${'{"d":'.repeat(6000)}"bottom"${'}'.repeat(6000)},"board":`,
  )
/** A createCard action on the demo board, as the upstream sends it. */
const action = (cardId: string, extra: Record<string, unknown> = {}) =>
  createCardDelivery(sandbox, cardId, extra)

/** POSTs a body signed the way the upstream signs it (so only its shape can be wrong). */
async function deliver(body: string): Promise<{ status: number; body: any }> {
  const res = await postSigned(sandbox, callbackUrl, body)
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : null }
}

/** 100 good deliveries and one hostile one, all at once; the good ones must all arrive. */
async function withNeighbour(hostile: string) {
  const cards = Array.from({ length: 100 }, hex)
  const from = receiver.received.length
  const answers = await Promise.all([
    ...cards.slice(0, 50).map((c) => deliver(JSON.stringify(action(c)))),
    deliver(hostile),
    ...cards.slice(50).map((c) => deliver(JSON.stringify(action(c)))),
  ])
  const bad = answers[50]
  const good = [...answers.slice(0, 50), ...answers.slice(51)]
  assert.deepEqual(
    good.map((a) => a.status),
    cards.map(() => 200),
    'every good delivery is acknowledged',
  )
  const got = await receiver.until((r) => {
    const seen = new Set(r.slice(from).map((x) => x.body.data.event.data.card?.id))
    return cards.every((c) => seen.has(c))
  }, 30_000)
  const delivered = new Set(got.slice(from).map((x) => x.body.data.event.data.card?.id))
  assert.equal(cards.filter((c) => delivered.has(c)).length, 100, 'every good delivery reaches the agent')
  return bad
}

test('a delivery nested ~6,000 levels deep is refused with 400; its 100 neighbours are all delivered', async () => {
  const bad = await withNeighbour(deepAction())
  assert.equal(bad.status, 400)
  assert.equal(bad.body.error.code, 'MALFORMED_DELIVERY')
  assert.match(bad.body.error.message, /nested/)
})

test('a delivery whose action id is an object is refused with 400; its 100 neighbours are all delivered', async () => {
  const hostile = action(hex())
  ;(hostile.action as any).id = { $gt: '' }
  const bad = await withNeighbour(JSON.stringify(hostile))
  assert.equal(bad.status, 400)
  assert.equal(bad.body.error.code, 'MALFORMED_DELIVERY')
  assert.match(bad.body.error.message, /id/)
})

test('a body over the size limit is refused with 413, not a 500', async () => {
  const big = action(hex(), { padding: 'x'.repeat(6 * 1024 * 1024) })
  const res = await deliver(JSON.stringify(big))
  assert.equal(res.status, 413)
})

test('an inbox row that cannot be processed is set aside with its reason; the rows behind it are delivered', async () => {
  // Rows a delivery left in the inbox (an older version acknowledged them raw): a hostile one first.
  const db = t.service.engine.store.db
  const row = (body: string) => ({
    subscription_id: hookId,
    delivery_id: hex(),
    headers: '{}',
    body,
    status: 'pending' as const,
    error: null,
    received_at: nowIso(),
  })
  const poisoned = row(deepAction())
  const cards = Array.from({ length: 20 }, hex)
  await db
    .insertInto('inbox')
    .values([poisoned, ...cards.map((c) => row(JSON.stringify(action(c))))])
    .execute()
  const from = receiver.received.length
  await t.service.engine.events.ingress.drain()
  await receiver.until((r) => {
    const seen = new Set(r.slice(from).map((x) => x.body.data.event.data.card?.id))
    return cards.every((c) => seen.has(c))
  })
  const parked = await eventually(
    () =>
      db
        .selectFrom('inbox')
        .selectAll()
        .where('delivery_id', '=', poisoned.delivery_id)
        .executeTakeFirstOrThrow(),
    (r) => r.status === 'failed',
  )
  assert.match(parked.error ?? '', /nested/)
  const pending = await db.selectFrom('inbox').select('seq').where('status', '=', 'pending').execute()
  assert.equal(pending.length, 0, 'nothing is left waiting behind the bad row')
})

test('rows set aside are listed with why (GET /v1/inbox) and can be processed again (POST /v1/inbox/:seq/retry)', async () => {
  const db = t.service.engine.store.db
  const card = hex()
  // A good delivery that was set aside (say the database refused it for a while), and a hostile one.
  const [good, bad] = await db
    .insertInto('inbox')
    .values([
      {
        subscription_id: hookId,
        delivery_id: hex(),
        headers: '{}',
        body: JSON.stringify(action(card)),
        status: 'failed' as const,
        error: 'could not be processed: the database refused it',
        received_at: nowIso(),
      },
      {
        subscription_id: hookId,
        delivery_id: hex(),
        headers: '{}',
        body: deepAction(),
        status: 'failed' as const,
        error: 'cannot be stored: nested too deep',
        received_at: nowIso(),
      },
    ])
    .returning('seq')
    .execute()
  const listed = await t.api('GET', '/v1/inbox?limit=50')
  assert.equal(listed.status, 200)
  const seqs = listed.body.parked.map((r: any) => r.seq)
  assert.ok(seqs.includes(Number(good.seq)) && seqs.includes(Number(bad.seq)))
  // A page at a time (cursor in, next out): the same rows, each once, newest first.
  const paged: number[] = []
  for (let cursor = ''; ; ) {
    const page = await t.api('GET', `/v1/inbox?limit=1${cursor ? `&cursor=${cursor}` : ''}`)
    assert.equal(page.status, 200, JSON.stringify(page.body))
    paged.push(...page.body.parked.map((r: any) => r.seq))
    if (page.body.next === null) break
    cursor = encodeURIComponent(page.body.next)
  }
  assert.deepEqual(paged, seqs)
  // The old parameter still pages, and says it is deprecated.
  const old = await t.api('GET', `/v1/inbox?limit=50&before=${Number(bad.seq)}`)
  assert.ok(old.body.parked.every((r: any) => r.seq < Number(bad.seq)))
  assert.match(String(old.headers.deprecation), /^@\d+$/)
  const shown = listed.body.parked.find((r: any) => r.seq === Number(good.seq))
  assert.deepEqual(
    { webhookId: shown.webhookId, connector: shown.connector, error: shown.error },
    { webhookId: hookId, connector: 'taskboard', error: 'could not be processed: the database refused it' },
  )
  // Processed again: the good one reaches the agent and leaves the list; the hostile one is set aside again.
  const from = receiver.received.length
  assert.deepEqual((await t.api('POST', `/v1/inbox/${good.seq}/retry`)).body, {
    seq: Number(good.seq),
    status: 'pending',
  })
  assert.equal((await t.api('POST', `/v1/inbox/${bad.seq}/retry`)).status, 202)
  await receiver.until((r) => r.slice(from).some((x) => x.body.data.event.data.card?.id === card))
  const after = await eventually(
    async () => (await t.api('GET', '/v1/inbox?limit=50')).body.parked.map((r: any) => r.seq),
    (s: number[]) => !s.includes(Number(good.seq)) && s.includes(Number(bad.seq)),
  )
  assert.ok(after.includes(Number(bad.seq)))
  const unknown = await t.api('POST', '/v1/inbox/999999999/retry')
  assert.equal(unknown.status, 404)
  assert.equal(unknown.body.error.code, 'INBOX_ROW_NOT_FOUND')
})

test('a delivery processed when it arrives leaves no raw copy in the inbox; one the store refuses to process is kept raw there and delivered once it can be', async () => {
  const db = t.service.engine.store.db
  const inboxRows = async () =>
    Number((await sql<{ n: number }>`select count(*) as n from inbox`.execute(db)).rows[0].n)
  const before = await inboxRows()
  const fine = hex()
  const from = receiver.received.length
  assert.equal((await deliver(JSON.stringify(action(fine)))).status, 200)
  await receiver.until((r) => r.slice(from).some((x) => x.body.data.event.data.card?.id === fine))
  assert.equal(await inboxRows(), before, 'its event and delivery are what is kept')

  // The store refuses new events for a while: the delivery is still acknowledged, kept raw.
  const postgres = t.service.engine.store.kind === 'postgres'
  if (postgres) {
    await sql`create function refuse_events() returns trigger as $$ begin raise exception 'refused by the test'; end $$ language plpgsql`.execute(
      db,
    )
    await sql`create trigger refuse_events before insert on events for each row execute function refuse_events()`.execute(
      db,
    )
  } else
    await sql`create trigger refuse_events before insert on events begin select raise(abort, 'refused by the test'); end`.execute(
      db,
    )
  const refused = hex()
  const body = action(refused)
  try {
    assert.equal((await deliver(JSON.stringify(body))).status, 200)
    const kept = await db
      .selectFrom('inbox')
      .selectAll()
      .where('delivery_id', '=', body.action.id)
      .executeTakeFirstOrThrow()
    assert.equal(kept.body, JSON.stringify(body))
    assert.match(kept.error ?? '', /refused by the test/)
  } finally {
    await sql`drop trigger refuse_events${postgres ? sql` on events` : sql``}`.execute(db)
    if (postgres) await sql`drop function refuse_events()`.execute(db)
  }
  await receiver.until((r) => r.slice(from).some((x) => x.body.data.event.data.card?.id === refused), 30_000)
})
