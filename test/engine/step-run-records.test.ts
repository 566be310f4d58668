// Step run records are written off the hot path, in batches; a caller never notices: a run that
// has finished is listed at once, and a clean stop writes whatever was still queued. The services
// here run on a clock that never moves, so no flush timer fires: only a read or the stop writes.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTaskboardSandbox } from '../../sandbox/taskboard/index.ts'
import { serviceDatabase } from '../helpers/databases.ts'
import { ManualClock } from '../helpers/manual-clock.ts'
import { startTestService, type TestService } from '../helpers/service.ts'

async function connect(t: TestService): Promise<string> {
  const res = await t.api('POST', '/v1/connections', {
    connector: 'taskboard',
    authMethod: 'api_key_token',
    credentials: { key: t.taskboard.demo.key, token: t.taskboard.demo.token },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body.id
}

const createCard = (t: TestService, connectionId: string, name: string) =>
  t.api('POST', '/v1/steps/taskboard.create_card/run', {
    connectionId,
    input: { idList: t.taskboard.demo.listIds[0], name },
  })

test('a finished run is listed by GET /v1/runs at once, succeeded or failed', async () => {
  const t = await startTestService({ clock: new ManualClock() })
  try {
    const connectionId = await connect(t)
    const made = await createCard(t, connectionId, 'listed at once')
    assert.equal(made.status, 200)
    const missing = await t.api('POST', '/v1/steps/taskboard.get_card/run', {
      connectionId,
      input: { idCard: 'f'.repeat(24) },
    })
    assert.equal(missing.status, 404)
    const listed = await t.api('GET', '/v1/runs?limit=10')
    assert.equal(listed.status, 200)
    assert.deepEqual(
      listed.body.runs.map((r: any) => [r.stepId, r.status, r.errorCode]),
      [
        ['taskboard.get_card', 'failed', 'UPSTREAM_NOT_FOUND'],
        ['taskboard.create_card', 'succeeded', null],
      ],
    )
    assert.equal(listed.body.runs[1].id, made.body.meta.runId)
  } finally {
    await t.close()
  }
})

test('a clean stop writes the queued run records: after a restart on the same store they are listed', async () => {
  const taskboard = await startTaskboardSandbox()
  const kind = serviceDatabase()
  const database = kind.fresh()
  const shared = { ...kind, fresh: () => database }
  const first = await startTestService({ clock: new ManualClock(), taskboard, db: shared })
  const connectionId = await connect(first)
  const runIds: string[] = []
  for (let i = 0; i < 3; i++) {
    const res = await createCard(first, connectionId, `before the stop ${i}`)
    assert.equal(res.status, 200)
    runIds.push(res.body.meta.runId)
  }
  // The stop the SIGTERM handler makes (main.ts): requests finish, then the engine closes.
  await first.service.close()
  const second = await startTestService({ taskboard, db: shared })
  try {
    const listed = await second.api('GET', '/v1/runs?limit=10')
    assert.deepEqual(listed.body.runs.map((r: any) => r.id).sort(), [...runIds].sort())
  } finally {
    await second.close()
    await taskboard.close()
  }
})

test('GET /v1/runs pages through runs made in the same millisecond, each once (cursor in, next out); before= still answers, deprecated', async () => {
  const t = await startTestService({ clock: new ManualClock() })
  try {
    // 57 runs recorded in one millisecond (a burst of steps on a busy instance): the old
    // `before=createdAt` paging skipped every run after a page's edge that shared its millisecond.
    const at = new Date().toISOString()
    const made = Array.from({ length: 57 }, (_, i) => `run_same_ms_${String(i).padStart(3, '0')}`)
    for (const id of made)
      t.service.engine.stepRuns.record({
        id,
        workspace_id: t.service.workspaceId,
        step_id: 'taskboard.get_card',
        connection_id: null,
        caller_key_id: 'k',
        status: 'succeeded',
        error_code: null,
        duration_ms: 1,
        attempts: 1,
        created_at: at,
        rate_limited: 0,
        requests: null,
      })
    const seen: string[] = []
    let pages = 0
    for (let cursor: string | null = null; ; pages++) {
      const res: { status: number; body: any; headers: Record<string, unknown> } = await t.api(
        'GET',
        `/v1/runs?limit=10${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      )
      assert.equal(res.status, 200, JSON.stringify(res.body))
      assert.equal(res.headers.deprecation, undefined, 'the cursor is not deprecated')
      seen.push(...res.body.runs.map((r: any) => r.id))
      cursor = res.body.next
      if (cursor === null) break
    }
    assert.equal(pages, 5, "six pages of at most 10 (57 runs), the last one's next null")
    assert.deepEqual([...seen].sort(), made, 'every run, once')

    // The old parameter still answers for one release, and says it is deprecated (RFC 9745).
    const old = await t.api(
      'GET',
      `/v1/runs?limit=10&before=${encodeURIComponent('2999-01-01T00:00:00.000Z')}`,
    )
    assert.equal(old.status, 200)
    assert.equal(old.body.runs.length, 10)
    assert.match(String(old.headers.deprecation), /^@\d+$/)
    assert.match(String(old.headers.link), /rel="deprecation"/)

    // A cursor no page gave is refused, not read as the first page.
    const bad = await t.api('GET', '/v1/runs?cursor=nonsense')
    assert.equal(bad.status, 400)
    assert.equal(bad.body.error.code, 'INVALID_CURSOR')
  } finally {
    await t.close()
  }
})
