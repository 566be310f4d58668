// The code-host sandbox over real HTTP: workflows.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import {
  api,
  ctl,
  OWNER,
  R,
  REPO,
  receiver,
  repoHook,
  sandboxPerFile,
  until,
} from '../../helpers/codehost-sandbox.ts'

sandboxPerFile()

describe('workflows', () => {
  const WF = `${R}/actions/workflows`

  test('list, get by id and file, enable/disable, dispatch errors', async () => {
    const list = await api('GET', WF)
    assert.equal(list.json.total_count, 1)
    const wf = list.json.workflows[0]
    assert.equal(wf.name, 'CI')
    assert.equal(wf.path, '.codehost/workflows/ci.yml')
    assert.equal(wf.state, 'active')
    assert.equal((await api('GET', `${WF}/ci.yml`)).json.id, wf.id)
    assert.equal((await api('GET', `${WF}/${wf.id}`)).json.name, 'CI')
    assert.equal((await api('GET', `${WF}/nope.yml`)).status, 404)
    assert.equal((await api('POST', `${WF}/nope.yml/dispatches`, { body: { ref: 'main' } })).status, 404)
    const noRef = await api('POST', `${WF}/ci.yml/dispatches`, { body: {} })
    assert.equal(noRef.status, 422)
    assert.equal(
      (await api('POST', `${WF}/ci.yml/dispatches`, { body: { ref: 'no-such-branch' } })).status,
      422,
    )
    assert.equal((await api('PUT', `${WF}/ci.yml/disable`)).status, 204)
    assert.equal((await api('GET', `${WF}/ci.yml`)).json.state, 'disabled_manually')
    const disabled = await api('POST', `${WF}/ci.yml/dispatches`, { body: { ref: 'main' } })
    assert.equal(disabled.status, 422)
    assert.match(disabled.json.message, /disabled workflow/)
    assert.equal((await api('PUT', `${WF}/ci.yml/enable`)).status, 204)
    assert.equal((await api('GET', `${WF}/ci.yml`)).json.state, 'active')
  })

  test('dispatched run goes queued → in_progress → completed on the sandbox clock', async () => {
    const rec = await receiver()
    await repoHook(rec.url, ['workflow_run', 'workflow_job'])
    await ctl('POST', '/_sandbox/clock', { freeze: true })
    assert.equal(
      (await api('POST', `${WF}/ci.yml/dispatches`, { body: { ref: 'main', inputs: { reason: 'test' } } }))
        .status,
      204,
    )
    const runs = await api('GET', `${R}/actions/runs`)
    assert.equal(runs.json.total_count, 1)
    const run = runs.json.workflow_runs[0]
    assert.equal(run.status, 'queued')
    assert.equal(run.conclusion, null)
    assert.equal(run.event, 'workflow_dispatch')
    assert.equal(run.head_branch, 'main')
    assert.equal(run.run_number, 1)
    assert.equal(
      (await rec.wait('workflow_run', (j) => j.action === 'requested')).json.workflow_run.id,
      run.id,
    )

    await ctl('POST', '/_sandbox/clock', { advanceMs: 1000 })
    assert.equal((await api('GET', `${R}/actions/runs/${run.id}`)).json.status, 'in_progress')
    const jobs = await api('GET', `${R}/actions/runs/${run.id}/jobs`)
    assert.equal(jobs.json.total_count, 1)
    assert.equal(jobs.json.jobs[0].name, 'build')
    assert.equal(jobs.json.jobs[0].status, 'in_progress')
    await ctl('POST', '/_sandbox/clock', { advanceMs: 3000 })
    const done = await api('GET', `${R}/actions/runs/${run.id}`)
    assert.equal(done.json.status, 'completed')
    assert.equal(done.json.conclusion, 'success')
    const completed = await rec.wait('workflow_run', (j) => j.action === 'completed')
    assert.equal(completed.json.workflow_run.conclusion, 'success')
    const job = await rec.wait('workflow_job', (j) => j.action === 'completed')
    assert.equal(job.json.workflow_job.conclusion, 'success')
    assert.ok(rec.events('workflow_run').some((h) => h.json.action === 'in_progress'))
  })

  test('conclusion chosen through the control API; filters; cancel', async () => {
    await ctl('POST', '/_sandbox/workflow-runs/settings', { autoComplete: false, queuedMs: 0 })
    const dispatched = await api('POST', `${WF}/ci.yml/dispatches`, {
      body: { ref: 'main', return_run_details: true },
    })
    assert.equal(dispatched.status, 200)
    const id = dispatched.json.workflow_run_id
    const failed = await ctl('POST', `/_sandbox/workflow-runs/${id}/complete`, { conclusion: 'failure' })
    assert.equal(failed.json.conclusion, 'failure')
    assert.equal((await api('GET', `${R}/actions/runs/${id}/jobs`)).json.jobs[0].conclusion, 'failure')
    await api('POST', `${WF}/ci.yml/dispatches`, { body: { ref: 'main' } })
    const pushRun = await ctl('POST', '/_sandbox/workflow-runs', {
      owner: OWNER,
      repo: REPO,
      workflow: 'ci.yml',
      event: 'push',
    })
    assert.equal(pushRun.status, 201)
    assert.equal((await api('GET', `${R}/actions/runs?status=failure`)).json.total_count, 1)
    assert.equal((await api('GET', `${R}/actions/runs?status=in_progress`)).json.total_count, 2)
    assert.equal((await api('GET', `${R}/actions/runs?event=push`)).json.total_count, 1)
    assert.equal((await api('GET', `${R}/actions/runs?branch=main`)).json.total_count, 3)
    assert.equal((await api('GET', `${R}/actions/runs?branch=other`)).json.total_count, 0)
    const paged = await api('GET', `${R}/actions/workflows/ci.yml/runs?per_page=2`)
    assert.equal(paged.json.total_count, 3)
    assert.equal(paged.json.workflow_runs.length, 2)
    assert.match(paged.headers.get('link') ?? '', /rel="next"/)
    assert.equal((await api('POST', `${R}/actions/runs/${pushRun.json.id}/cancel`)).status, 202)
    assert.equal((await api('GET', `${R}/actions/runs/${pushRun.json.id}`)).json.conclusion, 'cancelled')
    assert.equal((await api('POST', `${R}/actions/runs/${pushRun.json.id}/cancel`)).status, 409)
    await ctl('POST', '/_sandbox/workflow-runs/settings', {
      defaultConclusion: 'cancelled',
      autoComplete: true,
      inProgressMs: 0,
    })
    await api('POST', `${WF}/ci.yml/dispatches`, { body: { ref: 'main' } })
    const latest = await until(async () => {
      const r = await api('GET', `${R}/actions/runs?status=cancelled`)
      return r.json.total_count >= 3 ? r : undefined
    })
    // The cancelled push run, plus the run left in progress and the new one, both auto-completed.
    assert.equal(latest.json.total_count, 3)
  })
})
