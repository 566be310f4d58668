// The contact-data API: account, lookups, bulk lookups and search, with API-key auth, per-plan
// rate limits and credit charging (see /work/shared/upstreams.md, Contact-data).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Clock } from '../common/clock.ts'
import type { WindowState } from '../common/rate-window.ts'
import type { Account, Accounts } from './accounts.ts'
import type { Directory } from './directory.ts'
import { sendError } from './errors.ts'
import { type Company, type Person, personCost, summarize } from './records.ts'
import {
  type Parsed,
  parseBulk,
  parseCompanyRequest,
  parseCompanySearch,
  parsePersonRequest,
  parsePersonSearch,
} from './requests.ts'
import type { Usage } from './usage.ts'

export interface ApiState {
  clock: Clock
  accounts: Accounts
  /** Replaced on reset, so read it on every request. */
  directory: () => Directory
  usage: Usage
}

interface CallContext {
  account: Account
  charged: number
}

/** Every API path and the methods it answers; other methods get 405 rather than a confusing 404. */
const ENDPOINTS: Record<string, string> = {
  '/account': 'GET',
  '/person': 'POST',
  '/company': 'POST',
  '/person/bulk': 'POST',
  '/company/bulk': 'POST',
  '/person/search': 'POST',
  '/company/search': 'POST',
}
const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const

type LookupResult<K extends string> =
  | ({ matched: true } & Record<K, Person | Company>)
  | ({ matched: false; error?: { code: string; message: string } } & Record<K, null>)

export function registerApiRoutes(app: FastifyInstance, state: ApiState): void {
  const calls = new WeakMap<FastifyRequest, CallContext>()
  const ctx = (req: FastifyRequest) => calls.get(req)!

  const rateHeaders = (reply: FastifyReply, st: WindowState) =>
    reply
      .header('x-rate-limit-minute', String(st.limit))
      .header('x-minute-requests-left', String(st.remaining))

  // Runs after the shell's fault hook: like a real gateway, authentication and rate limiting come
  // before routing details, body parsing and validation.
  app.addHook('onRequest', async (req, reply) => {
    if (req.url.startsWith('/_sandbox')) return
    const header = req.headers['x-api-key']
    const account = state.accounts.get(typeof header === 'string' ? header : undefined)
    if (req.is404 || (req.routeOptions.config as { wrongMethod?: boolean }).wrongMethod) {
      // Unknown paths and wrong methods are not counted against the window, but show where it stands.
      if (account) rateHeaders(reply, state.accounts.peek(account))
      return
    }
    if (!account) {
      return sendError(
        reply,
        401,
        header ? 'The API key is not valid' : 'Missing API key: send it in the X-Api-Key header',
      )
    }
    const st = state.accounts.hit(account)
    rateHeaders(reply, st)
    calls.set(req, { account, charged: 0 })
    if (!st.allowed) {
      const seconds = Math.max(1, Math.ceil((st.resetAt - state.clock.now()) / 1000))
      reply.header('retry-after', String(seconds))
      return sendError(reply, 429, `Rate limit of ${st.limit} requests per minute exceeded`)
    }
  })

  app.addHook('onSend', async (req, reply) => {
    const c = calls.get(req)
    if (!c) return
    reply.header('x-credits-charged', String(c.charged))
    reply.header('x-credits-remaining', String(c.account.credits.remaining))
  })

  const charge = (req: FastifyRequest, credits: number) => {
    const c = ctx(req)
    state.accounts.charge(c.account, credits)
    c.charged += credits
    state.usage.charge(req.raw, credits)
  }

  /** The JSON body, or a reply already sent for a body in another format. */
  const jsonBody = (req: FastifyRequest, reply: FastifyReply): { body: unknown } | null => {
    if (req.body === undefined) return { body: undefined }
    const type = String(req.headers['content-type'] ?? '')
    if (!/^application\/([\w.+-]+\+)?json\b/i.test(type)) {
      sendError(reply, 415, 'Send the body as JSON with Content-Type: application/json')
      return null
    }
    return { body: req.body }
  }

  const invalid = (reply: FastifyReply, parsed: Parsed<unknown>) =>
    sendError(reply, 422, parsed.ok ? 'Invalid request' : parsed.message)

  const noCredits = (reply: FastifyReply, message = 'No credits remaining on this account') =>
    sendError(reply, 402, message)

  app.get('/account', async (req) => {
    const { account } = ctx(req)
    return { name: account.name, plan: account.plan, credits: { ...account.credits } }
  })

  // A lookup is validated, then refused with 402 when the balance is zero, before any search is
  // made. A match that costs more than what remains (a person with a phone, 1 credit left) is not
  // revealed: the single lookup answers 402 and charges nothing.
  app.post('/person', async (req, reply) => {
    const b = jsonBody(req, reply)
    if (!b) return reply
    const q = parsePersonRequest(b.body)
    if (!q.ok) return invalid(reply, q)
    const { account } = ctx(req)
    if (account.credits.remaining <= 0) return noCredits(reply)
    const person = state.directory().findPerson(q.value)
    if (!person) return { matched: false, person: null }
    const cost = personCost(person)
    if (cost > account.credits.remaining)
      return noCredits(reply, `This match costs ${cost} credits and ${account.credits.remaining} remain`)
    charge(req, cost)
    return { matched: true, person }
  })

  app.post('/company', async (req, reply) => {
    const b = jsonBody(req, reply)
    if (!b) return reply
    const q = parseCompanyRequest(b.body)
    if (!q.ok) return invalid(reply, q)
    if (ctx(req).account.credits.remaining <= 0) return noCredits(reply)
    const company = state.directory().findCompany(q.value)
    if (!company) return { matched: false, company: null }
    charge(req, 1)
    return { matched: true, company }
  })

  // Bulk: the batch as a whole is refused (422) when it is not an array of 1 to 100, and (402) when
  // the balance is zero. Otherwise every element gets its own result in order: an invalid element
  // gets an `invalid_request` error and a match the remaining credits cannot pay for gets an
  // `insufficient_credits` error, without failing the others.
  const bulk = <K extends 'person' | 'company'>(
    key: K,
    parse: (item: unknown) => Parsed<unknown>,
    find: (q: any) => Person | Company | null,
    cost: (r: any) => number,
  ) =>
    async function handler(req: FastifyRequest, reply: FastifyReply) {
      const b = jsonBody(req, reply)
      if (!b) return reply
      const list = parseBulk(b.body)
      if (!list.ok) return invalid(reply, list)
      const { account } = ctx(req)
      if (account.credits.remaining <= 0) return noCredits(reply)
      return list.value.map((item): LookupResult<K> => {
        const q = parse(item)
        if (!q.ok) return miss(key, { code: 'invalid_request', message: q.message })
        const record = find(q.value)
        if (!record) return miss(key)
        const price = cost(record)
        if (price > account.credits.remaining) {
          return miss(key, {
            code: 'insufficient_credits',
            message: `This match costs ${price} credits and ${account.credits.remaining} remain`,
          })
        }
        charge(req, price)
        return { matched: true, [key]: record } as LookupResult<K>
      })
    }

  app.post(
    '/person/bulk',
    bulk('person', parsePersonRequest, (q) => state.directory().findPerson(q), personCost),
  )
  app.post(
    '/company/bulk',
    bulk(
      'company',
      parseCompanyRequest,
      (q) => state.directory().findCompany(q),
      () => 1,
    ),
  )

  // Search is free and reveals no contact details, so it works at a zero balance too.
  app.post('/person/search', async (req, reply) => {
    const b = jsonBody(req, reply)
    if (!b) return reply
    const q = parsePersonSearch(b.body)
    if (!q.ok) return invalid(reply, q)
    const page = state.directory().searchPeople(q.value.filters, q.value.page, q.value.perPage)
    return { ...page, results: page.results.map(summarize) }
  })

  app.post('/company/search', async (req, reply) => {
    const b = jsonBody(req, reply)
    if (!b) return reply
    const q = parseCompanySearch(b.body)
    if (!q.ok) return invalid(reply, q)
    return state.directory().searchCompanies(q.value.filters, q.value.page, q.value.perPage)
  })

  for (const [url, allowed] of Object.entries(ENDPOINTS)) {
    const served = allowed === 'GET' ? ['GET', 'HEAD'] : [allowed]
    app.route({
      method: ALL_METHODS.filter((m) => !served.includes(m)),
      url,
      config: { wrongMethod: true },
      handler: async (req, reply) => {
        reply.header('allow', served.join(', '))
        return sendError(reply, 405, `${req.method} is not allowed on ${url}; use ${allowed}`)
      },
    })
  }
}

function miss<K extends string>(key: K, error?: { code: string; message: string }): LookupResult<K> {
  return (error ? { matched: false, [key]: null, error } : { matched: false, [key]: null }) as LookupResult<K>
}
