import { z } from 'zod'
import { defineStep, type StepContext } from '../../../kit/define.ts'
import { PatchbayError } from '../../../kit/errors.ts'
import {
  branchRef,
  getPage,
  onRepository,
  pageInfo,
  paging,
  repoPath,
  repository,
  slimWorkflowRun,
  workflowRef,
  workflowRunOut,
} from '../schemas.ts'
import type { ChWorkflowRuns } from '../upstream.ts'

const workflow = workflowRef

const runId = z
  .number()
  .int()
  .positive()
  .describe('The workflow run id, from List Workflow Runs or a Workflow Run Completed event.')

/** A 404 on a workflow path: say which workflows the repository has, when it can be read. */
async function workflowNotFound(
  ctx: StepContext,
  input: { owner: string; repo: string; workflow: string | number },
  err: unknown,
) {
  if (!(err instanceof PatchbayError && err.code === 'UPSTREAM_NOT_FOUND')) return err
  let known: string[] | null = null
  try {
    const list = await ctx.http.get<{ workflows: Array<{ name: string; path: string; id: number }> }>(
      repoPath(input, 'actions', 'workflows'),
      { per_page: 100 },
    )
    known = (list.workflows ?? []).map((w) => `${w.path.split('/').pop()} (${w.name}, id ${w.id})`)
  } catch {
    return err
  }
  return new PatchbayError(
    'WORKFLOW_NOT_FOUND',
    `There is no workflow "${input.workflow}" in ${input.owner}/${input.repo}; it has ${known.length ? known.join(', ') : 'no workflows'}.`,
    { hint: 'Name one of the listed workflow files (or ids).', upstream: err.upstream },
  )
}

export const createWorkflowDispatch = defineStep({
  key: 'create_workflow_dispatch',
  name: 'Create Workflow Dispatch',
  description:
    'Starts a workflow run by hand (the workflow must have a workflow_dispatch trigger and be enabled), on a branch or tag (ref, default: the default branch), with its inputs. runId, when the code-host reports it, is the run to follow with Get Workflow Run.',
  input: z.object({
    ...repository,
    workflow,
    ref: branchRef('Branch or tag to run on; default: the default branch.').optional(),
    inputs: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
      .optional()
      .describe('The workflow_dispatch inputs by name.'),
  }),
  output: z.object({
    dispatched: z.literal(true),
    workflow: z.union([z.string(), z.number()]),
    ref: z.string(),
    runId: z.number().nullable().describe('The new run, when reported (then Get Workflow Run follows it).'),
  }),
  hints: { readOnly: false, destructive: false, idempotent: false },
  scoped: onRepository,
  run: async (ctx, input) => {
    const ref = input.ref ?? (await ctx.http.get<{ default_branch: string }>(repoPath(input))).default_branch
    let res: { data: { workflow_run_id?: number } | null }
    try {
      res = await ctx.http.request<{ workflow_run_id?: number } | null>({
        method: 'POST',
        path: repoPath(input, 'actions', 'workflows', input.workflow, 'dispatches'),
        body: { ref, inputs: input.inputs ?? {}, return_run_details: true },
      })
    } catch (err) {
      if (err instanceof PatchbayError && err.status === 422 && /disabled workflow/i.test(err.message))
        throw new PatchbayError(
          'WORKFLOW_DISABLED',
          `The workflow ${input.workflow} in ${input.owner}/${input.repo} is disabled, so it cannot be dispatched.`,
          {
            hint: 'Enable it first (Enable Workflow), then dispatch it again.',
            upstream: err.upstream,
          },
        )
      throw await workflowNotFound(ctx, input, err)
    }
    return {
      dispatched: true as const,
      workflow: input.workflow,
      ref,
      runId: res.data?.workflow_run_id ?? null,
    }
  },
})

function toggle(key: 'enable_workflow' | 'disable_workflow', name: string, enable: boolean) {
  return defineStep({
    key,
    name,
    description: enable
      ? 'Enables a disabled workflow, so it runs on its triggers (and can be dispatched) again.'
      : 'Disables a workflow: it stops running on its triggers and cannot be dispatched until enabled again. Runs already under way finish.',
    input: z.object({ ...repository, workflow }),
    output: z.object({
      workflow: z.union([z.string(), z.number()]),
      state: z.enum(['active', 'disabled_manually']),
    }),
    hints: { readOnly: false, destructive: false, idempotent: true },
    scoped: onRepository,
    run: async (ctx, input) => {
      try {
        await ctx.http.put(
          repoPath(input, 'actions', 'workflows', input.workflow, enable ? 'enable' : 'disable'),
        )
      } catch (err) {
        throw await workflowNotFound(ctx, input, err)
      }
      return {
        workflow: input.workflow,
        state: enable ? ('active' as const) : ('disabled_manually' as const),
      }
    },
  })
}

export const enableWorkflow = toggle('enable_workflow', 'Enable Workflow', true)
export const disableWorkflow = toggle('disable_workflow', 'Disable Workflow', false)

export const getWorkflowRun = defineStep({
  key: 'get_workflow_run',
  name: 'Get Workflow Run',
  description:
    'Reads one workflow run: its status (queued, in_progress, completed) and, once completed, its conclusion (success, failure, cancelled …).',
  input: z.object({ ...repository, runId }),
  output: workflowRunOut,
  hints: { readOnly: true, idempotent: true },
  scoped: onRepository,
  run: async (ctx, input) =>
    slimWorkflowRun(await ctx.http.get(repoPath(input, 'actions', 'runs', input.runId))),
})

export const listWorkflowRuns = defineStep({
  key: 'list_workflow_runs',
  name: 'List Workflow Runs',
  description:
    "Lists a repository's workflow runs newest first, one page at a time: of every workflow or one, optionally only on a branch, from an event, or with a status or conclusion.",
  input: z.object({
    ...repository,
    workflow: workflow.optional(),
    branch: branchRef('Only runs on this branch.').optional(),
    event: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe('Only runs started by this event (push, workflow_dispatch …).'),
    status: z
      .enum([
        'queued',
        'in_progress',
        'completed',
        'success',
        'failure',
        'cancelled',
        'skipped',
        'timed_out',
        'neutral',
      ])
      .optional()
      .describe('Only runs with this status or conclusion.'),
    ...paging,
  }),
  output: z.object({ totalCount: z.number(), runs: z.array(workflowRunOut), ...pageInfo }),
  hints: { readOnly: true, idempotent: true },
  scoped: onRepository,
  run: async (ctx, input) => {
    const path =
      input.workflow === undefined
        ? repoPath(input, 'actions', 'runs')
        : repoPath(input, 'actions', 'workflows', input.workflow, 'runs')
    let page: { data: ChWorkflowRuns | null; hasNextPage: boolean }
    try {
      page = await getPage<ChWorkflowRuns | null>(ctx, path, {
        branch: input.branch,
        event: input.event,
        status: input.status,
        per_page: input.perPage,
        page: input.page,
      })
    } catch (err) {
      throw input.workflow === undefined
        ? err
        : await workflowNotFound(ctx, { ...input, workflow: input.workflow }, err)
    }
    return {
      totalCount: page.data?.total_count ?? 0,
      runs: (page.data?.workflow_runs ?? []).map(slimWorkflowRun),
      page: input.page,
      hasNextPage: page.hasNextPage,
    }
  },
})
