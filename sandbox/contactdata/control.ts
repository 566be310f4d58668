// The contact-data part of the control API, next to the shell's /_sandbox reset, clock and faults.
import type { FastifyInstance, FastifyReply } from 'fastify'
import { z } from 'zod'
import type { Rng } from '../common/rng.ts'
import { type Account, type Accounts, DEMO_ACCOUNT } from './accounts.ts'
import type { Directory } from './directory.ts'
import { sendError } from './errors.ts'
import { applySeed, SeedError, seedBody } from './seed.ts'
import type { Usage } from './usage.ts'

export interface ControlState {
  accounts: Accounts
  directory: () => Directory
  seedRng: () => Rng
  usage: Usage
}

const newAccount = z.object({
  name: z.string().min(1),
  plan: z.string().min(1).optional(),
  credits: z.number().int().nonnegative().optional(),
  apiKey: z.string().min(8).optional(),
})

const setCredits = z.object({
  apiKey: z.string().default(DEMO_ACCOUNT.apiKey),
  remaining: z.number().int().nonnegative(),
  used: z.number().int().nonnegative().optional(),
})

const rateLimits = z
  .object({
    apiKey: z.string().optional(),
    perMinute: z.number().int().nonnegative().optional(),
    windowMs: z.number().int().positive().optional(),
  })
  .refine((b) => b.perMinute !== undefined || b.windowMs !== undefined, 'give perMinute, windowMs or both')

function parse<T>(schema: z.ZodType<T>, body: unknown, reply: FastifyReply): T | null {
  const r = schema.safeParse(body ?? {})
  if (r.success) return r.data
  const message = r.error.issues
    .map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message))
    .join('; ')
  sendError(reply, 422, message)
  return null
}

export function registerControlRoutes(app: FastifyInstance, state: ControlState): void {
  const describe = (a: Account) => ({
    apiKey: a.apiKey,
    name: a.name,
    plan: a.plan,
    credits: { ...a.credits },
    rateLimit: state.accounts.limitsFor(a),
  })

  app.get('/_sandbox/accounts', async () => ({ accounts: state.accounts.list().map(describe) }))

  app.post('/_sandbox/accounts', async (req, reply) => {
    const body = parse(newAccount, req.body, reply)
    if (!body) return reply
    const account = state.accounts.create(body)
    if (!account) return sendError(reply, 409, `API key ${body.apiKey} is already in use`)
    return reply.code(201).send(describe(account))
  })

  app.post('/_sandbox/credits', async (req, reply) => {
    const body = parse(setCredits, req.body, reply)
    if (!body) return reply
    const account = state.accounts.get(body.apiKey)
    if (!account) return sendError(reply, 404, `No account with API key ${body.apiKey}`)
    account.credits.remaining = body.remaining
    if (body.used !== undefined) account.credits.used = body.used
    return describe(account)
  })

  app.get('/_sandbox/rate-limits', async () => ({
    accounts: state.accounts
      .list()
      .map((a) => ({ apiKey: a.apiKey, plan: a.plan, ...state.accounts.limitsFor(a) })),
  }))

  app.post('/_sandbox/rate-limits', async (req, reply) => {
    const body = parse(rateLimits, req.body, reply)
    if (!body) return reply
    if (body.apiKey && !state.accounts.get(body.apiKey))
      return sendError(reply, 404, `No account with API key ${body.apiKey}`)
    state.accounts.overrideLimits(body.apiKey, { perMinute: body.perMinute, windowMs: body.windowMs })
    const affected = body.apiKey ? [state.accounts.get(body.apiKey)!] : state.accounts.list()
    return {
      accounts: affected.map((a) => ({ apiKey: a.apiKey, plan: a.plan, ...state.accounts.limitsFor(a) })),
    }
  })

  app.delete('/_sandbox/rate-limits', async () => {
    state.accounts.clearLimitOverrides()
    return { ok: true }
  })

  app.get('/_sandbox/usage', async (req) => {
    const { apiKey } = req.query as { apiKey?: string }
    return state.usage.report(apiKey || undefined)
  })

  app.delete('/_sandbox/usage', async () => {
    state.usage.reset()
    return { ok: true }
  })

  app.post('/_sandbox/seed', async (req, reply) => {
    const body = parse(seedBody, req.body, reply)
    if (!body) return reply
    try {
      const added = applySeed(state.directory(), state.seedRng(), body)
      return reply.code(201).send(added)
    } catch (err) {
      if (err instanceof SeedError) return sendError(reply, err.status, err.message)
      throw err
    }
  })

  app.get('/_sandbox/dataset', async () => {
    const dir = state.directory()
    return { people: dir.people.length, companies: dir.companies.length }
  })
}
