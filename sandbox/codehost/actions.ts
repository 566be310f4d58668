// Workflows and their runs. Workflows are discovered from `.codehost/workflows/*.yml` files on the
// default branch. A run moves queued → in_progress → completed on the sandbox clock (`tick` is
// called by a short real-time timer and before every request), so tests can drive it by
// advancing the clock or complete it at once through the control API.
import { ApiError, type Ctx, missingParam } from './context.ts'
import { emit, envelope } from './events.ts'
import { resolveRef } from './git.ts'
import type { Commit, Conclusion, Job, Repo, User, Workflow, WorkflowRun } from './store.ts'
import { jobView, runView, workflowView } from './views-actions.ts'

const WORKFLOW_PATH = /^\.codehost\/workflows\/[^/]+\.ya?ml$/

function fileText(ctx: Ctx, commit: Commit, path: string): string | null {
  const blob = commit.tree.get(path)
  return blob ? (ctx.store.blobs.get(blob)?.toString('utf8') ?? null) : null
}

function workflowName(text: string, path: string): string {
  const m = /^name:\s*(.+?)\s*$/m.exec(text)
  return m ? m[1].replace(/^['"]|['"]$/g, '') : path
}

function jobNames(text: string): string[] {
  const at = text.search(/^jobs:\s*$/m)
  if (at < 0) return ['build']
  const names: string[] = []
  for (const line of text.slice(at).split('\n').slice(1)) {
    if (/^\S/.test(line)) break
    const m = /^ {2}([A-Za-z0-9_-]+):\s*$/.exec(line)
    if (m) {
      const named = new RegExp(`^ {2}${m[1]}:\\s*\\n {4}name:\\s*(.+)$`, 'm').exec(text.slice(at))
      names.push(named ? named[1].replace(/^['"]|['"]$/g, '') : m[1])
    }
  }
  return names.length ? names : ['build']
}

export function registerWorkflows(ctx: Ctx, repo: Repo, commit: Commit): void {
  const now = ctx.emulator.clock.iso()
  for (const path of commit.tree.keys()) {
    if (!WORKFLOW_PATH.test(path) || repo.workflows.some((w) => w.path === path)) continue
    const text = fileText(ctx, commit, path) ?? ''
    repo.workflows.push({
      id: ctx.store.nextId('workflow', 160_000_001),
      repoId: repo.id,
      name: workflowName(text, path),
      path,
      state: 'active',
      createdAt: now,
      updatedAt: now,
      nextRunNumber: 1,
    })
  }
}

export function findWorkflow(repo: Repo, idOrFile: string): Workflow | undefined {
  if (/^\d+$/.test(idOrFile)) return repo.workflows.find((w) => w.id === Number(idOrFile))
  return repo.workflows.find((w) => w.path.split('/').pop() === idOrFile)
}

export function dispatch(
  ctx: Ctx,
  repo: Repo,
  wf: Workflow,
  actor: User,
  ref: string | undefined,
  inputs: Record<string, unknown> | undefined,
): WorkflowRun {
  if (!ref) throw missingParam('ref')
  if (wf.state !== 'active')
    throw new ApiError(422, "Cannot trigger a 'workflow_dispatch' on a disabled workflow")
  const commit = resolveRef(ctx.store, repo, ref)
  if (!commit) throw new ApiError(422, `No ref found for: ${ref}`)
  const text = fileText(ctx, commit, wf.path)
  if (text === null || !/\bworkflow_dispatch\b/.test(text))
    throw new ApiError(422, "Workflow does not have 'workflow_dispatch' trigger")
  if (inputs !== undefined && (typeof inputs !== 'object' || inputs === null || Array.isArray(inputs)))
    throw new ApiError(
      422,
      `Invalid request.\n\nFor 'properties/inputs', ${JSON.stringify(inputs)} is not an object.`,
    )
  const branch = ref.replace(/^refs\/(heads|tags)\//, '')
  return startRun(ctx, repo, wf, actor, {
    sha: commit.sha,
    branch,
    event: 'workflow_dispatch',
    inputs: inputs ?? {},
  })
}

export function startRun(
  ctx: Ctx,
  repo: Repo,
  wf: Workflow,
  actor: User,
  opts: {
    sha: string
    branch: string | null
    event: string
    inputs?: Record<string, unknown>
    conclusion?: Conclusion
  },
): WorkflowRun {
  const store = ctx.store
  const now = ctx.emulator.clock.now()
  const iso = new Date(now).toISOString()
  const commit = store.commits.get(opts.sha)
  const runId = store.nextId('run', 9_000_000_001)
  const names = commit ? jobNames(fileText(ctx, commit, wf.path) ?? '') : ['build']
  const jobs: Job[] = names.map((name) => ({
    id: store.nextId('job', 25_000_000_001),
    runId,
    name,
    status: 'queued',
    conclusion: null,
    createdAt: iso,
    startedAt: null,
    completedAt: null,
    steps: [
      { name: 'Set up job', number: 1 },
      { name: 'Run actions/checkout@v4', number: 2 },
      { name: `Run ${name}`, number: 3 },
      { name: 'Complete job', number: 4 },
    ],
  }))
  const run: WorkflowRun = {
    id: runId,
    workflowId: wf.id,
    repoId: repo.id,
    runNumber: wf.nextRunNumber++,
    event: opts.event,
    status: 'queued',
    conclusion: null,
    headBranch: opts.branch,
    headSha: opts.sha,
    actorId: actor.id,
    inputs: opts.inputs ?? {},
    displayTitle: opts.event === 'workflow_dispatch' ? wf.name : (commit?.message.split('\n')[0] ?? wf.name),
    createdAtMs: now,
    startedAtMs: null,
    completedAtMs: null,
    updatedAt: iso,
    plannedConclusion: opts.conclusion ?? null,
    jobs,
  }
  repo.runs.push(run)
  runEvent(ctx, repo, run, 'requested')
  for (const j of jobs) jobEvent(ctx, repo, run, j, 'queued')
  return run
}

function runEvent(ctx: Ctx, repo: Repo, run: WorkflowRun, action: string): void {
  const wf = repo.workflows.find((w) => w.id === run.workflowId)!
  const actor = ctx.store.user(run.actorId)
  emit(
    ctx,
    'workflow_run',
    {
      action,
      workflow_run: runView(ctx, repo, run),
      workflow: workflowView(ctx, repo, wf),
      ...envelope(ctx, repo, actor),
    },
    { repo },
  )
}

function jobEvent(ctx: Ctx, repo: Repo, run: WorkflowRun, job: Job, action: string): void {
  const actor = ctx.store.user(run.actorId)
  emit(
    ctx,
    'workflow_job',
    { action, workflow_job: jobView(ctx, repo, run, job), ...envelope(ctx, repo, actor) },
    { repo },
  )
}

function begin(ctx: Ctx, repo: Repo, run: WorkflowRun, atMs: number): void {
  const iso = new Date(atMs).toISOString()
  run.status = 'in_progress'
  run.startedAtMs = atMs
  run.updatedAt = iso
  for (const j of run.jobs) {
    j.status = 'in_progress'
    j.startedAt = iso
  }
  for (const j of run.jobs) jobEvent(ctx, repo, run, j, 'in_progress')
  runEvent(ctx, repo, run, 'in_progress')
}

export function completeRun(
  ctx: Ctx,
  repo: Repo,
  run: WorkflowRun,
  conclusion: Conclusion,
  atMs = ctx.emulator.clock.now(),
): void {
  if (run.status === 'completed') return
  if (run.status === 'queued') begin(ctx, repo, run, Math.min(atMs, ctx.emulator.clock.now()))
  const iso = new Date(atMs).toISOString()
  run.status = 'completed'
  run.conclusion = conclusion
  run.completedAtMs = atMs
  run.updatedAt = iso
  run.jobs.forEach((j, idx) => {
    j.status = 'completed'
    j.completedAt = iso
    if (conclusion === 'failure') j.conclusion = idx === run.jobs.length - 1 ? 'failure' : 'success'
    else j.conclusion = conclusion
  })
  for (const j of run.jobs) jobEvent(ctx, repo, run, j, 'completed')
  runEvent(ctx, repo, run, 'completed')
}

/** Moves every run along to where the sandbox clock says it should be. */
export function tick(ctx: Ctx): void {
  const now = ctx.emulator.clock.now()
  const s = ctx.runSettings
  for (const repo of ctx.store.repos.values()) {
    for (const run of repo.runs) {
      if (run.status === 'queued' && now >= run.createdAtMs + s.queuedMs)
        begin(ctx, repo, run, run.createdAtMs + s.queuedMs)
      if (
        run.status === 'in_progress' &&
        s.autoComplete &&
        run.startedAtMs !== null &&
        now >= run.startedAtMs + s.inProgressMs
      )
        completeRun(
          ctx,
          repo,
          run,
          run.plannedConclusion ?? s.defaultConclusion,
          run.startedAtMs + s.inProgressMs,
        )
    }
  }
}

export function findRun(ctx: Ctx, id: number): { repo: Repo; run: WorkflowRun } | undefined {
  for (const repo of ctx.store.repos.values()) {
    const run = repo.runs.find((r) => r.id === id)
    if (run) return { repo, run }
  }
  return undefined
}

export function rerun(ctx: Ctx, repo: Repo, run: WorkflowRun, actor: User): void {
  if (run.status !== 'completed') throw new ApiError(403, 'This workflow is already running')
  const now = ctx.emulator.clock.now()
  run.status = 'queued'
  run.conclusion = null
  run.createdAtMs = now
  run.startedAtMs = null
  run.completedAtMs = null
  run.updatedAt = new Date(now).toISOString()
  run.plannedConclusion = null
  run.actorId = actor.id
  for (const j of run.jobs) {
    j.status = 'queued'
    j.conclusion = null
    j.startedAt = null
    j.completedAt = null
  }
  runEvent(ctx, repo, run, 'requested')
}
