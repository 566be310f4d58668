// What coalescing and the result cache save: 1,000 concurrent single-contact enrichments (Enrich
// Contacts with one record each) on one connection, over 500 distinct contacts (each asked twice),
// against the sandbox contact-data service. Four Patchbay instances — neither mechanism, coalescing
// only, cache only, both — run interleaved in one process; each round gives each a fresh upstream
// account and connection (a cold cache). Counts upstream requests and credits charged with the
// sandbox's GET /_sandbox/usage. Prints one JSON line.
import { Agent, request } from 'undici'
import { startContactdataSandbox } from '../sandbox/contactdata/index.ts'
import { loadConfig } from '../src/config.ts'
import { type RunningService, startService } from '../src/service.ts'
import { tempDir } from '../test/helpers/databases.ts'
import { median, percentile, report, round, target } from './_stats.ts'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1000)
const DISTINCT = Number(process.env.BENCH_DISTINCT ?? 500)
const DOMAIN = 'benchmark-leads.test'

const sandbox = await startContactdataSandbox()
const control = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${sandbox.url}/_sandbox${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (!res.ok) throw new Error(`sandbox ${method} ${path}: ${res.status} ${await res.text()}`)
  return res.json()
}
// Contacts to enrich; every third has a phone (2 credits), the others cost 1.
await control('POST', '/seed', {
  companies: [{ name: 'Benchmark Leads', domain: DOMAIN, employeeCount: 900 }],
  people: Array.from({ length: DISTINCT }, (_, n) => ({
    firstName: 'Lead',
    lastName: `Number${n}`,
    email: `lead${n}@${DOMAIN}`,
    company: DOMAIN,
    ...(n % 3 === 0 ? { phone: `+1415555${String(n).padStart(4, '0')}` } : {}),
  })),
})
// The upstream's plan limit is not what is measured here.
await control('POST', '/rate-limits', { perMinute: 1_000_000_000 })

// Each contact asked REQUESTS / DISTINCT times, in a fixed shuffled order.
const order = Array.from({ length: REQUESTS }, (_, i) => i % DISTINCT)
let seed = 42
for (let i = order.length - 1; i > 0; i--) {
  seed = (seed * 1103515245 + 12345) % 2 ** 31
  const j = seed % (i + 1)
  ;[order[i], order[j]] = [order[j], order[i]]
}

const adminKey = 'pb_admin_bench'
const scenarios = {
  neither: { PATCHBAY_CONTACTDATA_COALESCE_MS: '0', PATCHBAY_CONTACTDATA_CACHE_TTL_MS: '0' },
  coalescing: { PATCHBAY_CONTACTDATA_COALESCE_MS: '5', PATCHBAY_CONTACTDATA_CACHE_TTL_MS: '0' },
  cache: { PATCHBAY_CONTACTDATA_COALESCE_MS: '0' },
  both: {},
} as const
type Name = keyof typeof scenarios

const services = {} as Record<Name, RunningService>
for (const [name, env] of Object.entries(scenarios) as Array<[Name, Record<string, string>]>) {
  services[name] = await startService(
    {
      ...loadConfig({ PATCHBAY_EGRESS_ALLOW: '127.0.0.1', ...env }),
      port: 0,
      dataDir: tempDir('patchbay-bench-'),
      adminKey,
    },
    { baseUrls: { contactdata: sandbox.url }, logging: false },
  )
}
const agent = new Agent({ connections: REQUESTS, pipelining: 1 })
const auth = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }

async function api(service: RunningService, method: string, path: string, body?: unknown) {
  const res = await request(`${service.url}${path}`, {
    method: method as 'GET',
    headers: auth,
    body: body === undefined ? undefined : JSON.stringify(body),
    dispatcher: agent,
  })
  const text = await res.body.text()
  return { status: res.statusCode, body: text ? JSON.parse(text) : null }
}

let accounts = 0
async function measure(name: Name) {
  const service = services[name]
  // A name of its own each time: connecting an account Patchbay already has reconnects its
  // connection in place, and the run would start with that connection's warm cache.
  const acct = await control('POST', '/accounts', {
    name: `Bench ${name} ${++accounts}`,
    plan: 'enterprise',
    credits: 1_000_000,
  })
  const conn = await api(service, 'POST', '/v1/connections', {
    connector: 'contactdata',
    authMethod: 'api_key',
    credentials: { apiKey: acct.apiKey },
  })
  // The connection's plan allows far more than the default pacing of 60 a minute.
  await api(service, 'PUT', `/v1/connections/${conn.body.id}/rate-limit`, {
    requests: 1_000_000_000,
    perMs: 60_000,
  })
  const before = await control('GET', `/usage?apiKey=${acct.apiKey}`)

  const latencies: number[] = []
  const started = performance.now()
  const outputs = await Promise.all(
    order.map(async (n) => {
      const t0 = performance.now()
      const res = await api(service, 'POST', '/v1/steps/contactdata.enrich_contacts/run', {
        connectionId: conn.body.id,
        input: { contacts: [{ email: `lead${n}@${DOMAIN}` }] },
      })
      latencies.push(performance.now() - t0)
      const r = res.body?.output?.results?.[0]
      if (res.status !== 200 || !r?.contact?.emails?.some((e: any) => e.address === `lead${n}@${DOMAIN}`))
        throw new Error(`${name}: enrichment of lead${n} failed: ${res.status} ${JSON.stringify(res.body)}`)
      return res.body.output.creditsCharged as number
    }),
  )
  const wallMs = performance.now() - started
  const after = await control('GET', `/usage?apiKey=${acct.apiKey}`)
  latencies.sort((a, b) => a - b)
  return {
    upstreamRequests: after.totalRequests - before.totalRequests,
    bulkRequests: after.endpoints['POST /person/bulk']?.requests ?? 0,
    creditsCharged: after.creditsCharged - before.creditsCharged,
    ledgerCredits: outputs.reduce((a, b) => a + b, 0),
    wallMs: wallMs,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
  }
}

// Warm each instance (JIT, pools) on a throwaway account.
for (const name of Object.keys(scenarios) as Name[]) await measure(name)

const names = Object.keys(scenarios) as Name[]
const rows = Object.fromEntries(names.map((n) => [n, []])) as unknown as Record<
  Name,
  Array<Awaited<ReturnType<typeof measure>>>
>
for (let r = 0; r < ROUNDS; r++) for (const name of names) rows[name].push(await measure(name))

const summary = {} as Record<Name, Record<string, number>>
for (const name of Object.keys(scenarios) as Name[]) {
  const m = (k: keyof (typeof rows)[Name][number]) => median(rows[name].map((x) => x[k]))
  summary[name] = {
    upstreamRequests: m('upstreamRequests'),
    bulkRequests: m('bulkRequests'),
    creditsCharged: m('creditsCharged'),
    ledgerCredits: m('ledgerCredits'),
    wallMs: round(m('wallMs'), 0),
    p50Ms: round(m('p50Ms'), 1),
    p99Ms: round(m('p99Ms'), 1),
  }
}
const fullPrice = order.reduce((sum, n) => sum + (n % 3 === 0 ? 2 : 1), 0)
const distinctPrice = Array.from({ length: DISTINCT }, (_, n) => (n % 3 === 0 ? 2 : 1)).reduce(
  (a, b) => a + b,
  0,
)
const requestsSaved = round(1 - summary.both.upstreamRequests / summary.neither.upstreamRequests)
// What the two mechanisms promise: coalescing folds concurrent lookups into bulk calls of the
// upstream's maximum, and the cache makes a contact asked twice cost once.
report(
  {
    bench: 'enrich',
    rounds: ROUNDS,
    enrichments: REQUESTS,
    concurrency: REQUESTS,
    distinctContacts: DISTINCT,
    creditsIfEveryLookupPaid: fullPrice,
    creditsIfEachContactPaidOnce: distinctPrice,
    ...summary,
    requestsSaved,
    creditsSaved: round(1 - summary.both.creditsCharged / summary.neither.creditsCharged),
  },
  [
    target('requestsSaved', requestsSaved, '>=', 0.99),
    // Each contact paid exactly once: no more (the cache works), no less (each round starts cold).
    target('both.creditsCharged', summary.both.creditsCharged, '<=', distinctPrice),
    target('both.creditsCharged', summary.both.creditsCharged, '>=', distinctPrice),
  ],
)
await agent.close()
for (const s of Object.values(services)) await s.close()
await sandbox.close()
