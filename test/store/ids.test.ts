// Record ids are time-ordered: an id made later sorts after one made earlier (within the same
// millisecond too), every id is unique, and the prefix tells what the id names.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { deliveryRow, eventRow } from '../../src/engine/events/records.ts'
import { newId } from '../../src/store/ids.ts'

test('ids made later sort after earlier ones and are unique', () => {
  const ids: string[] = []
  for (let i = 0; i < 50_000; i++) ids.push(newId('dlv'))
  // Across a millisecond boundary as well: wait until the clock has moved on.
  const before = Date.now()
  while (Date.now() === before) {}
  for (let i = 0; i < 1_000; i++) ids.push(newId('dlv'))
  assert.equal(new Set(ids).size, ids.length)
  assert.deepEqual([...ids].sort(), ids)
  for (const id of ids.slice(0, 3))
    assert.match(id, /^dlv_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
})

test('events and deliveries get time-ordered ids with their prefixes', () => {
  const now = new Date().toISOString()
  const where = {
    workspaceId: 'ws_1',
    connector: 'taskboard',
    subscriptionId: 'hook_1',
    connectionId: 'con_1',
    owner: '',
    model: 'board_1',
    receivedAt: now,
    now,
    matched: 1,
  }
  const events = Array.from({ length: 100 }, (_, i) =>
    eventRow({ id: `a${i}`, type: 'card.created', refs: {}, data: {} } as never, where),
  )
  assert.ok(events.every((e) => e.id.startsWith('evt_')))
  assert.deepEqual(
    events.map((e) => e.id),
    events.map((e) => e.id).sort(),
  )
  const deliveries = events.map((e) =>
    deliveryRow({
      workspaceId: 'ws_1',
      agentId: 'agt_1',
      triggerId: 'trg_1',
      eventId: e.id,
      target: { type: 'agent' },
      agentDelivery: 'webhook',
      now,
    }),
  )
  assert.ok(deliveries.every((d) => d.id.startsWith('dlv_')))
  assert.deepEqual(
    deliveries.map((d) => d.id),
    deliveries.map((d) => d.id).sort(),
  )
})
