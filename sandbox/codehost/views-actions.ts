// JSON shapes of workflows, workflow runs and jobs.
import type { Ctx } from './context.ts'
import { nodeId } from './ids.ts'
import type { Job, Repo, Workflow, WorkflowRun } from './store.ts'
import { repoApi, repoHtml, repoView, userView } from './views.ts'

export function workflowView(ctx: Ctx, repo: Repo, w: Workflow) {
  const api = repoApi(ctx, repo)
  return {
    id: w.id,
    node_id: nodeId('W', w.id),
    name: w.name,
    path: w.path,
    state: w.state,
    created_at: w.createdAt,
    updated_at: w.updatedAt,
    url: `${api}/actions/workflows/${w.id}`,
    html_url: `${repoHtml(ctx, repo)}/blob/${repo.defaultBranch}/${w.path}`,
    badge_url: `${repoHtml(ctx, repo)}/workflows/${encodeURIComponent(w.name)}/badge.svg`,
  }
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

export function runView(ctx: Ctx, repo: Repo, run: WorkflowRun) {
  const store = ctx.store
  const api = `${repoApi(ctx, repo)}/actions/runs/${run.id}`
  const wf = repo.workflows.find((w) => w.id === run.workflowId)
  const head = store.commits.get(run.headSha)
  const actor = userView(ctx, store.user(run.actorId))
  return {
    id: run.id,
    name: wf?.name ?? null,
    node_id: nodeId('WFR', run.id),
    head_branch: run.headBranch,
    head_sha: run.headSha,
    path: wf?.path ?? '',
    display_title: run.displayTitle,
    run_number: run.runNumber,
    event: run.event,
    status: run.status,
    conclusion: run.conclusion,
    workflow_id: run.workflowId,
    check_suite_id: run.id + 7_000_000,
    check_suite_node_id: nodeId('CS', run.id),
    url: api,
    html_url: `${repoHtml(ctx, repo)}/actions/runs/${run.id}`,
    pull_requests: [],
    created_at: iso(run.createdAtMs),
    updated_at: run.updatedAt,
    actor,
    run_attempt: 1,
    referenced_workflows: [],
    run_started_at: iso(run.startedAtMs ?? run.createdAtMs),
    triggering_actor: actor,
    jobs_url: `${api}/jobs`,
    logs_url: `${api}/logs`,
    check_suite_url: `${repoApi(ctx, repo)}/check-suites/${run.id + 7_000_000}`,
    artifacts_url: `${api}/artifacts`,
    cancel_url: `${api}/cancel`,
    rerun_url: `${api}/rerun`,
    previous_attempt_url: null,
    workflow_url: `${repoApi(ctx, repo)}/actions/workflows/${run.workflowId}`,
    head_commit: head
      ? {
          id: head.sha,
          tree_id: head.treeSha,
          message: head.message,
          timestamp: head.committer.date,
          author: { name: head.author.name, email: head.author.email },
          committer: { name: head.committer.name, email: head.committer.email },
        }
      : null,
    repository: repoView(ctx, repo, null, false),
    head_repository: repoView(ctx, repo, null, false),
  }
}

export function jobView(ctx: Ctx, repo: Repo, run: WorkflowRun, job: Job) {
  const api = repoApi(ctx, repo)
  const wf = repo.workflows.find((w) => w.id === run.workflowId)
  return {
    id: job.id,
    run_id: run.id,
    workflow_name: wf?.name ?? null,
    head_branch: run.headBranch,
    run_url: `${api}/actions/runs/${run.id}`,
    run_attempt: 1,
    node_id: nodeId('CR', job.id),
    head_sha: run.headSha,
    url: `${api}/actions/jobs/${job.id}`,
    html_url: `${repoHtml(ctx, repo)}/actions/runs/${run.id}/job/${job.id}`,
    status: job.status,
    conclusion: job.conclusion,
    created_at: job.createdAt,
    started_at: job.startedAt ?? job.createdAt,
    completed_at: job.completedAt,
    name: job.name,
    // While the job runs, its first step is in progress and the others wait (queued); no step is
    // completed without a completion time.
    steps: job.steps.map((s, idx) => {
      const status =
        job.status === 'completed'
          ? 'completed'
          : job.status === 'in_progress' && idx === 0
            ? 'in_progress'
            : 'queued'
      return {
        name: s.name,
        status,
        conclusion: status === 'completed' ? stepConclusion(job, idx) : null,
        number: s.number,
        started_at: status === 'queued' ? null : job.startedAt,
        completed_at: status === 'completed' ? job.completedAt : null,
      }
    }),
    check_run_url: `${api}/check-runs/${job.id}`,
    labels: ['ubuntu-latest'],
    runner_id: job.status === 'queued' ? null : 1,
    runner_name: job.status === 'queued' ? null : 'Codehost Actions 1',
    runner_group_id: job.status === 'queued' ? null : 1,
    runner_group_name: job.status === 'queued' ? null : 'Codehost Actions',
  }
}

function stepConclusion(job: Job, idx: number): string | null {
  if (job.conclusion === 'failure')
    return idx === job.steps.length - 2 ? 'failure' : idx < job.steps.length - 2 ? 'success' : 'skipped'
  if (job.conclusion === 'cancelled') return idx === 0 ? 'success' : 'cancelled'
  return job.conclusion
}
