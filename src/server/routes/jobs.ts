// Jobs: long work with progress (engine/jobs/long-jobs.ts). POST /v1/jobs starts a bulk enrichment
// or a replay of many deliveries and answers 202 with the job at once; GET /v1/jobs/{id} shows how
// far it got (done of total, errors), its result so far and why it failed; it can be cancelled.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Engine } from '../../engine/engine.ts'
import { ENRICH_JOB_MAX } from '../../engine/jobs/job-kinds.ts'
import type { JobRow } from '../../store/jobs.ts'
import { deprecatedPaging, nextCursor, pageQuery } from '../paging.ts'
import { errorResponses } from '../schemas.ts'

const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const

const EnrichJobResult = z
  .object({
    results: z
      .array(z.unknown())
      .describe('One per contact done so far, in the given order, as the Enrich Contacts step returns them.'),
    matched: z.number(),
    notMatched: z.number(),
    creditsCharged: z.number(),
  })
  .meta({ id: 'EnrichJobResult' })

const ReplayJobResult = z
  .object({
    replayed: z.number().describe('Deliveries handed on to be sent again.'),
    failed: z
      .array(z.object({ id: z.string(), code: z.string(), message: z.string() }))
      .describe('Deliveries that could not be replayed (at most 100 listed; `errors` counts them all).'),
  })
  .meta({ id: 'ReplayJobResult' })

const JobSummary = z
  .object({
    id: z.string(),
    kind: z.enum(['enrich_contacts', 'replay_deliveries']),
    status: z
      .enum(JOB_STATUSES)
      .describe('queued → running → succeeded, failed (error says why) or cancelled.'),
    done: z.number().describe('Items done so far (contacts enriched, deliveries replayed).'),
    total: z.number().describe('Items in the job.'),
    errors: z.number().describe('Items done that failed (a contact with an error, a delivery not replayed).'),
    error: z
      .object({ code: z.string(), message: z.string() })
      .nullable()
      .describe('Why the whole job failed (an error code of the API), or null.'),
    cancelRequested: z.boolean(),
    createdAt: z.string(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
  })
  .meta({ id: 'JobSummary' })

const Job = JobSummary.extend({
  result: z
    .union([EnrichJobResult, ReplayJobResult])
    .nullable()
    .describe('The result so far (complete once the job has succeeded); null before the first piece.'),
}).meta({ id: 'Job' })

const summary = (r: JobRow): z.infer<typeof JobSummary> => ({
  id: r.id,
  kind: r.kind as z.infer<typeof JobSummary>['kind'],
  status: r.status,
  done: r.done,
  total: r.total,
  errors: r.errors,
  error: r.error,
  cancelRequested: r.cancelRequested,
  createdAt: r.created_at,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
})

const jobView = (r: JobRow): z.infer<typeof Job> => ({
  ...summary(r),
  result: r.result as z.infer<typeof Job>['result'],
})

export const jobRoutes =
  (engine: Engine): FastifyPluginAsyncZod =>
  async (app) => {
    // Each contact as the Enrich Contacts step takes it (one registry: its own schema).
    const enrichInput = engine.registry.steps.get('contactdata.enrich_contacts')?.step.input
    const contacts =
      enrichInput instanceof z.ZodObject && enrichInput.shape.contacts instanceof z.ZodArray
        ? (enrichInput.shape.contacts.element as z.ZodType<Record<string, unknown>>)
        : z.record(z.string(), z.unknown())

    const StartJob = z
      .discriminatedUnion('kind', [
        z
          .object({
            kind: z.literal('enrich_contacts'),
            connectionId: z.string().max(200).describe('A contact-data connection (GET /v1/connections).'),
            contacts: z
              .array(contacts)
              .min(1)
              .max(ENRICH_JOB_MAX)
              .describe(
                `The contacts to enrich (1 to ${ENRICH_JOB_MAX}), each as the Enrich Contacts step takes it; done 100 at a time.`,
              ),
          })
          .describe('Enrich many contacts (the Enrich Contacts step, 100 at a time).'),
        z
          .object({
            kind: z.literal('replay_deliveries'),
            status: z
              .enum(['pending', 'delivered', 'failed', 'dead'])
              .default('dead')
              .describe('Which deliveries to send again (default: the dead ones).'),
            agentId: z.string().max(200).optional(),
            triggerId: z.string().max(200).optional(),
            eventId: z.string().max(200).optional(),
          })
          .describe(
            'Send again every delivery the filter matches when the job starts (at most 10,000), each with its own id.',
          ),
      ])
      .meta({ id: 'StartJob' })

    app.post(
      '/v1/jobs',
      {
        schema: {
          operationId: 'startJob',
          tags: ['jobs'],
          summary:
            'Start long work as a job: a bulk enrichment or a replay of many deliveries; answers 202 with the job, whose progress GET /v1/jobs/{id} shows',
          body: StartJob,
          response: { 202: Job, ...errorResponses },
        },
      },
      async (req, reply) => {
        const b = req.body
        const row =
          b.kind === 'enrich_contacts'
            ? await engine.jobs.enrichContacts(req.caller, {
                connectionId: b.connectionId,
                contacts: b.contacts,
              })
            : await engine.jobs.replayDeliveries(req.caller, {
                status: b.status,
                agentId: b.agentId,
                triggerId: b.triggerId,
                eventId: b.eventId,
              })
        return reply.code(202).header('location', `/v1/jobs/${row.id}`).send(jobView(row))
      },
    )
    app.get(
      '/v1/jobs',
      {
        schema: {
          operationId: 'listJobs',
          tags: ['jobs'],
          summary: 'Jobs of the workspace, newest first (without their results)',
          querystring: z.object({
            status: z.enum(JOB_STATUSES).optional(),
            ...pageQuery(200),
            before: z
              .string()
              .max(200)
              .optional()
              .meta({ deprecated: true })
              .describe('Deprecated (use cursor): the id of the last job of the previous page.'),
          }),
          response: {
            200: z.object({ jobs: z.array(JobSummary), next: nextCursor }),
            ...errorResponses,
          },
        },
      },
      async (req, reply) => {
        const { items, next } = await engine.jobs.jobs.list(req.caller.workspaceId, req.query)
        deprecatedPaging(reply, req.query.before !== undefined)
        return { jobs: items.map(summary), next }
      },
    )
    app.get(
      '/v1/jobs/:id',
      {
        schema: {
          operationId: 'getJob',
          tags: ['jobs'],
          summary: 'One job: its progress (done of total, errors), its result so far, why it failed',
          params: z.object({ id: z.string().max(200) }),
          response: { 200: Job, ...errorResponses },
        },
      },
      async (req) => jobView(await engine.jobs.jobs.get(req.caller.workspaceId, req.params.id)),
    )
    app.post(
      '/v1/jobs/:id/cancel',
      {
        schema: {
          operationId: 'cancelJob',
          tags: ['jobs'],
          summary:
            'Cancel a job: a queued one at once, a running one after the piece under way (what was done stays done)',
          params: z.object({ id: z.string().max(200) }),
          response: { 202: Job, ...errorResponses },
        },
      },
      async (req, reply) =>
        reply.code(202).send(jobView(await engine.jobs.jobs.cancel(req.caller.workspaceId, req.params.id))),
    )
  }
