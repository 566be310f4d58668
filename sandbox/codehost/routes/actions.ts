// Workflows, workflow runs and jobs.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { completeRun, dispatch, findWorkflow, rerun } from '../actions.ts'
import { principalOf, repoParam, requireUser } from '../auth.ts'
import { ApiError, type Ctx, notFound } from '../context.ts'
import { body, expectBool, expectString, intParam, paginate, params, query } from '../http.ts'
import type { Repo, Workflow, WorkflowRun } from '../store.ts'
import { repoHtml } from '../views.ts'
import { jobView, runView, workflowView } from '../views-actions.ts'

const CONCLUSIONS = [
  'success',
  'failure',
  'cancelled',
  'skipped',
  'timed_out',
  'neutral',
  'action_required',
  'stale',
]

function workflowOf(repo: Repo, req: FastifyRequest): Workflow {
  const wf = findWorkflow(repo, params(req).workflow_id)
  if (!wf) throw notFound()
  return wf
}

function runOf(repo: Repo, req: FastifyRequest): WorkflowRun {
  const run = repo.runs.find((r) => r.id === intParam(params(req).run_id))
  if (!run) throw notFound()
  return run
}

export function registerActionRoutes(api: FastifyInstance, ctx: Ctx): void {
  const R = '/repos/:owner/:repo/actions'

  api.get(`${R}/workflows`, async (req, reply) => {
    const repo = repoParam(ctx, req, { fg: ['actions', 'read'] })
    const page = paginate(ctx, req, reply, repo.workflows)
    return { total_count: repo.workflows.length, workflows: page.map((w) => workflowView(ctx, repo, w)) }
  })

  api.get(`${R}/workflows/:workflow_id`, async (req) => {
    const repo = repoParam(ctx, req, { fg: ['actions', 'read'] })
    return workflowView(ctx, repo, workflowOf(repo, req))
  })

  const toggle = (state: Workflow['state']) => async (req: FastifyRequest, reply: FastifyReply) => {
    const repo = repoParam(ctx, req, { role: 'write', fg: ['actions', 'write'] })
    const wf = workflowOf(repo, req)
    wf.state = state
    wf.updatedAt = ctx.emulator.clock.iso()
    return reply.code(204).send()
  }
  api.put(`${R}/workflows/:workflow_id/enable`, toggle('active'))
  api.put(`${R}/workflows/:workflow_id/disable`, toggle('disabled_manually'))

  api.post(`${R}/workflows/:workflow_id/dispatches`, async (req, reply) => {
    const repo = repoParam(ctx, req, { role: 'write', fg: ['actions', 'write'] })
    const wf = workflowOf(repo, req)
    const b = body(req)
    const run = dispatch(ctx, repo, wf, requireUser(req), expectString(b, 'ref'), b.inputs)
    if (expectBool(b, 'return_run_details'))
      return reply.code(200).send({
        workflow_run_id: run.id,
        run_url: `${ctx.url}/repos/${ctx.store.user(repo.ownerId).login}/${repo.name}/actions/runs/${run.id}`,
        html_url: `${repoHtml(ctx, repo)}/actions/runs/${run.id}`,
      })
    return reply.code(204).send()
  })

  const listRuns = (req: FastifyRequest, reply: FastifyReply, repo: Repo, runs: WorkflowRun[]) => {
    const q = query(req)
    const list = runs
      .filter((r) => {
        if (!q.status) return true
        if (CONCLUSIONS.includes(q.status)) return r.conclusion === q.status
        if (q.status === 'requested' || q.status === 'waiting' || q.status === 'pending')
          return r.status === 'queued'
        return r.status === q.status
      })
      .filter((r) => !q.branch || r.headBranch === q.branch)
      .filter((r) => !q.event || r.event === q.event)
      .filter((r) => !q.head_sha || r.headSha === q.head_sha)
      .filter((r) => !q.actor || ctx.store.user(r.actorId).login.toLowerCase() === q.actor.toLowerCase())
      .sort((a, b) => b.createdAtMs - a.createdAtMs || b.id - a.id)
    return {
      total_count: list.length,
      workflow_runs: paginate(ctx, req, reply, list).map((r) => runView(ctx, repo, r)),
    }
  }

  api.get(`${R}/runs`, async (req, reply) => {
    const repo = repoParam(ctx, req, { fg: ['actions', 'read'] })
    return listRuns(req, reply, repo, repo.runs)
  })

  api.get(`${R}/workflows/:workflow_id/runs`, async (req, reply) => {
    const repo = repoParam(ctx, req, { fg: ['actions', 'read'] })
    const wf = workflowOf(repo, req)
    return listRuns(
      req,
      reply,
      repo,
      repo.runs.filter((r) => r.workflowId === wf.id),
    )
  })

  api.get(`${R}/runs/:run_id`, async (req) => {
    const repo = repoParam(ctx, req, { fg: ['actions', 'read'] })
    return runView(ctx, repo, runOf(repo, req))
  })

  api.get(`${R}/runs/:run_id/jobs`, async (req, reply) => {
    const repo = repoParam(ctx, req, { fg: ['actions', 'read'] })
    const run = runOf(repo, req)
    return {
      total_count: run.jobs.length,
      jobs: paginate(ctx, req, reply, run.jobs).map((j) => jobView(ctx, repo, run, j)),
    }
  })

  api.get(`${R}/jobs/:job_id`, async (req) => {
    const repo = repoParam(ctx, req, { fg: ['actions', 'read'] })
    const id = intParam(params(req).job_id)
    for (const run of repo.runs) {
      const job = run.jobs.find((j) => j.id === id)
      if (job) return jobView(ctx, repo, run, job)
    }
    throw notFound()
  })

  api.post(`${R}/runs/:run_id/cancel`, async (req, reply) => {
    const repo = repoParam(ctx, req, { role: 'write', fg: ['actions', 'write'] })
    const run = runOf(repo, req)
    if (run.status === 'completed') throw new ApiError(409, 'Cannot cancel a workflow run that is completed.')
    completeRun(ctx, repo, run, 'cancelled')
    return reply.code(202).send({})
  })

  api.post(`${R}/runs/:run_id/rerun`, async (req, reply) => {
    const repo = repoParam(ctx, req, { role: 'write', fg: ['actions', 'write'] })
    rerun(ctx, repo, runOf(repo, req), principalOf(req).user!)
    return reply.code(201).send({})
  })

  api.delete(`${R}/runs/:run_id`, async (req, reply) => {
    const repo = repoParam(ctx, req, { role: 'write', fg: ['actions', 'write'] })
    const run = runOf(repo, req)
    if (run.status !== 'completed')
      throw new ApiError(403, 'Cannot delete a workflow run that is not completed.')
    repo.runs = repo.runs.filter((r) => r !== run)
    return reply.code(204).send()
  })
}
