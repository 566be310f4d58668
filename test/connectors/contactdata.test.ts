// The contact-data connector end to end over real HTTP against the contact-data sandbox: every
// step, no-match, credits and the ledger, budgets, the cache, bulk chunking, coalescing, out of
// credits and rate limits. Upstream calls are counted with the sandbox's GET /_sandbox/usage.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Caller } from '../../src/engine/access/caller.ts'
import { createPacer } from '../../src/kit/pacer.ts'
import { countingPacer, ManualClock, SharedTime } from '../helpers/manual-clock.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { control } from '../helpers/taskboard.ts'

let t: TestService
const sb = () => t.contactdata!

// 300 seeded people at one company: p<n>@quillfeather-tools.test; every third has a phone (costs 2).
const DOMAIN = 'quillfeather-tools.test'
const COMPANY = 'Quillfeather Tools'
const N_PEOPLE = 300
const emailOf = (n: number) => `p${n}@${DOMAIN}`
const costOf = (n: number) => (n % 3 === 0 ? 2 : 1)

before(async () => {
  t = await startTestService({ contactdata: true })
  await control(sb(), 'POST', '/seed', {
    companies: [{ name: COMPANY, domain: DOMAIN, employeeCount: 420, industry: 'Manufacturing' }],
    people: Array.from({ length: N_PEOPLE }, (_, n) => ({
      firstName: 'Quinn',
      lastName: `Number${n}`,
      email: emailOf(n),
      company: DOMAIN,
      jobTitle: n % 2 ? 'Head of Sales' : 'Procurement Manager',
      seniority: n % 2 ? 'director' : 'manager',
      ...(n % 3 === 0 ? { phone: `+1415555${String(1000 + n).slice(-4)}` } : {}),
    })),
  })
})
after(() => t.close())

/** A fresh upstream account (its own key, credits and rate window) and a connection to it. */
async function account(opts: { credits?: number; plan?: string } = {}) {
  const acct = await control(sb(), 'POST', '/accounts', {
    name: `Acct ${Math.random().toString(36).slice(2, 8)}`,
    plan: opts.plan ?? 'enterprise',
    credits: opts.credits ?? 5000,
  })
  const conn = await t.api('POST', '/v1/connections', {
    connector: 'contactdata',
    authMethod: 'api_key',
    credentials: { apiKey: acct.apiKey },
  })
  assert.equal(conn.status, 201, JSON.stringify(conn.body))
  return { apiKey: acct.apiKey as string, connectionId: conn.body.id as string, name: acct.name as string }
}

const usage = (apiKey: string) => control(sb(), 'GET', `/usage?apiKey=${encodeURIComponent(apiKey)}`)
const requests = async (apiKey: string, endpoint?: string) => {
  const u = await usage(apiKey)
  return endpoint ? (u.endpoints[endpoint]?.requests ?? 0) : u.totalRequests
}
const run = (connectionId: string, step: string, input: unknown, key?: string) =>
  t.api('POST', `/v1/steps/contactdata.${step}/run`, { connectionId, input }, key)

/** An agent allowed to use the given connections, and a key of it. */
async function agent(name: string, connectionIds: string[]): Promise<{ id: string; key: string }> {
  const { agent: made } = await t.service.engine.agents.create(t.service.workspaceId, {
    name,
    connectionIds,
    delivery: { type: 'stream' },
  })
  const { key } = await t.service.engine.apiKeys.create({
    workspaceId: t.service.workspaceId,
    kind: 'agent',
    name,
    agentId: made.id,
  })
  return { id: made.id, key }
}

describe('catalog and connection', () => {
  test('the catalog lists Contact-Data as beta with its seven steps, every input described', async () => {
    const res = await t.api('GET', '/v1/catalog')
    const cd = res.body.connectors.find((c: any) => c.id === 'contactdata')
    assert.equal(cd.beta, true)
    assert.deepEqual(
      cd.steps.map((s: any) => [s.id, s.name]),
      [
        ['contactdata.enrich_contacts', 'Enrich Contacts'],
        ['contactdata.find_contact', 'Find Contact'],
        ['contactdata.search_contacts', 'Search Contacts'],
        ['contactdata.enrich_companies', 'Enrich Companies'],
        ['contactdata.find_company', 'Find Company'],
        ['contactdata.search_companies', 'Search Companies'],
        ['contactdata.api_call', 'Contact-Data API Call'],
      ],
    )
    assert.deepEqual(cd.triggers, [])
    assert.deepEqual(
      cd.auth.map((a: any) => a.id),
      ['api_key'],
    )
    const undescribed: string[] = []
    const walk = (schema: any, where: string) => {
      for (const [k, v] of Object.entries<any>(schema?.properties ?? {})) {
        if (!v.description && !v.items?.description && !v.anyOf) undescribed.push(`${where}.${k}`)
        if (v.type === 'array') walk(v.items, `${where}.${k}[]`)
      }
    }
    for (const s of cd.steps) walk(s.inputSchema, s.id)
    assert.deepEqual(undescribed, [])
    const search = cd.steps.find((s: any) => s.id === 'contactdata.search_contacts')
    assert.deepEqual(search.hints, { readOnly: true, destructive: false, idempotent: true })
    const found = await t.api('GET', '/v1/steps?q=contact-data')
    assert.equal(found.body.steps.length, 7)
  })

  test('connecting checks the key against /account and lists the connection under the account name; a wrong key stores nothing', async () => {
    const { connectionId, name } = await account()
    const got = await t.api('GET', `/v1/connections/${connectionId}`)
    assert.equal(got.body.accountName, name)
    assert.equal(got.body.connector, 'contactdata')

    const before = (await t.api('GET', '/v1/connections?connector=contactdata')).body.connections.length
    const bad = await t.api('POST', '/v1/connections', {
      connector: 'contactdata',
      authMethod: 'api_key',
      credentials: { apiKey: 'cd_wrong_key_0123456789' },
    })
    assert.equal(bad.status, 400)
    assert.equal(bad.body.error.code, 'INVALID_CREDENTIALS')
    assert.ok(!JSON.stringify(bad.body).includes('cd_wrong_key_0123456789'))
    const after = (await t.api('GET', '/v1/connections?connector=contactdata')).body.connections.length
    assert.equal(after, before)
  })
})

describe('lookups', () => {
  test('Find Contact by email, by profile URL and by name with company returns emails, phones and details, charged per match', async () => {
    const { apiKey, connectionId } = await account()
    const demo = sb().demo.samplePerson
    const byEmail = await run(connectionId, 'find_contact', { email: demo.email })
    assert.equal(byEmail.status, 200, JSON.stringify(byEmail.body))
    const c = byEmail.body.output.contact
    assert.equal(byEmail.body.output.matched, true)
    assert.equal(c.fullName, `${demo.firstName} ${demo.lastName}`)
    assert.ok(c.emails.some((e: any) => e.address === demo.email && e.verified))
    assert.ok(c.phones.length > 0)
    assert.equal(c.company.name, demo.company)
    assert.equal(typeof c.location, 'string')
    assert.equal(byEmail.body.output.creditsCharged, 2, 'a match with a phone costs 2')
    assert.equal(byEmail.body.output.cached, false)

    const byUrl = await run(connectionId, 'find_contact', { linkedInUrl: `${demo.linkedInUrl}/` })
    assert.equal(byUrl.body.output.contact.id, c.id)
    assert.equal(
      byUrl.body.output.cached,
      true,
      'the person found by email is also the one behind the profile URL',
    )
    const byName = await run(connectionId, 'find_contact', {
      firstName: demo.firstName,
      lastName: demo.lastName,
      company: demo.company,
    })
    assert.equal(byName.body.output.contact.id, c.id)
    assert.equal(byName.body.output.cached, false, 'a name is not unambiguous, so it is asked upstream')
    const u = await usage(apiKey)
    assert.equal(u.creditsCharged, 4, 'two paid lookups of a person with a phone')
    const felix = await run(connectionId, 'find_contact', {
      email: 'felix.arkwright@harborview-analytics.com',
    })
    assert.equal(felix.body.output.creditsCharged, 1, 'no phone: 1 credit')
    assert.deepEqual(felix.body.output.contact.phones, [])
  })

  test('no match is a result, not a failure: matched false, nothing charged, nothing in the ledger', async () => {
    const { apiKey, connectionId } = await account()
    const miss = await run(connectionId, 'find_contact', { email: 'nobody@nowhere-at-all.com' })
    assert.equal(miss.status, 200)
    assert.deepEqual(miss.body.output, { matched: false, contact: null, cached: false, creditsCharged: 0 })
    const company = await run(connectionId, 'find_company', { domain: 'no-such-company-anywhere.com' })
    assert.equal(company.status, 200)
    assert.equal(company.body.output.matched, false)
    assert.equal(company.body.output.company, null)
    const enrich = await run(connectionId, 'enrich_contacts', {
      contacts: [{ email: 'nobody@nowhere-at-all.com' }, { email: emailOf(1) }],
    })
    assert.equal(enrich.body.output.results[0].matched, false)
    assert.equal(enrich.body.output.results[1].matched, true)
    assert.equal(enrich.body.output.matched, 1)
    assert.equal(enrich.body.output.notMatched, 1)
    assert.equal((await usage(apiKey)).creditsCharged, 1)
    const ledger = await t.api('GET', `/v1/credits?connectionId=${connectionId}`)
    assert.equal(ledger.body.summary.credits, 1)
    assert.equal(ledger.body.entries.length, 1)
    assert.equal(ledger.body.entries[0].stepId, 'contactdata.enrich_contacts')
  })

  test('bad input is refused with named fields before anything is sent upstream', async () => {
    const { apiKey, connectionId } = await account()
    const sent = await requests(apiKey)
    const cases: Array<[string, unknown, RegExp]> = [
      ['find_contact', {}, /give one of: email; linkedInUrl; firstName with lastName and company/],
      [
        'find_contact',
        { firstName: 'Dana', lastName: 'Whitcombe' },
        /input\.company: matching by name needs/,
      ],
      ['find_contact', { email: 'not-an-email' }, /input\.email: must be an email address/],
      [
        'find_contact',
        { linkedInUrl: 'https://example.com/in/dana' },
        /input\.linkedInUrl: must be a LinkedIn profile URL/,
      ],
      ['enrich_contacts', { contacts: [] }, /input\.contacts: give at least one contact/],
      [
        'enrich_contacts',
        { contacts: Array.from({ length: 1001 }, (_, n) => ({ email: emailOf(n % N_PEOPLE) })) },
        /input\.contacts: give at most 1000 contacts/,
      ],
      [
        'enrich_contacts',
        { contacts: [{ email: emailOf(1) }, { email: 'x@' }] },
        /input\.contacts\.1\.email/,
      ],
      ['find_company', {}, /give domain or name/],
      ['find_company', { domain: 'not a domain' }, /input\.domain: must be a domain/],
      ['enrich_companies', { companies: [] }, /input\.companies: give at least one company/],
      ['search_contacts', {}, /give at least one search criterion/],
      ['search_contacts', { seniority: 'boss' }, /input\.seniority/],
      ['search_companies', { industry: 'Software', perPage: 500 }, /input\.perPage/],
      ['api_call', { method: 'DELETE', endpoint: '/person' }, /input\.method/],
    ]
    for (const [step, input, message] of cases) {
      const res = await run(connectionId, step, input)
      assert.equal(res.status, 400, `${step} ${JSON.stringify(input).slice(0, 80)}`)
      assert.equal(res.body.error.code, 'VALIDATION_FAILED')
      assert.match(res.body.error.message, message)
      assert.ok(res.body.error.hint)
    }
    for (const endpoint of [
      'https://evil.example/person',
      '/person/../_sandbox/reset',
      '/account?apiKey=x',
    ]) {
      const res = await run(connectionId, 'api_call', { method: 'GET', endpoint })
      assert.equal(res.status, 400, endpoint)
      assert.match(res.body.error.code, /INVALID_ENDPOINT|CREDENTIALS_IN_REQUEST/)
    }
    assert.equal(await requests(apiKey), sent, 'nothing reached the upstream')
    assert.equal((await usage(apiKey)).creditsCharged, 0)
  })

  test('Enrich Contacts with 250 records uses the bulk endpoint in chunks of 100: 3 upstream calls, results in order', async () => {
    const { apiKey, connectionId } = await account()
    const contacts = Array.from({ length: 250 }, (_, n) => ({ email: emailOf(n) }))
    const res = await run(connectionId, 'enrich_contacts', { contacts })
    assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300))
    const out = res.body.output
    assert.equal(out.results.length, 250)
    out.results.forEach((r: any, n: number) => {
      assert.equal(r.matched, true)
      assert.ok(
        r.contact.emails.some((e: any) => e.address === emailOf(n)),
        `result ${n} is its own`,
      )
      assert.equal(r.contact.phones.length > 0, costOf(n) === 2)
    })
    assert.equal(await requests(apiKey, 'POST /person/bulk'), 3)
    assert.equal(await requests(apiKey, 'POST /person'), 0)
    const expected = contacts.reduce((sum, _, n) => sum + costOf(n), 0)
    assert.equal(out.creditsCharged, expected)
    assert.equal((await usage(apiKey)).creditsCharged, expected)
    const ledger = await t.api('GET', `/v1/credits?connectionId=${connectionId}`)
    assert.equal(ledger.body.summary.credits, expected)
    assert.equal(ledger.body.summary.charges, 3, 'one ledger entry per bulk call')
  })

  test('the cache: a second identical lookup charges nothing and makes no upstream call', async () => {
    const { apiKey, connectionId } = await account()
    const first = await run(connectionId, 'find_contact', { email: emailOf(3) })
    assert.equal(first.body.output.creditsCharged, 2)
    const sent = await requests(apiKey)
    const charged = (await usage(apiKey)).creditsCharged

    const again = await run(connectionId, 'find_contact', { email: emailOf(3).toUpperCase() })
    assert.equal(again.status, 200)
    assert.equal(again.body.output.cached, true)
    assert.equal(again.body.output.creditsCharged, 0)
    assert.deepEqual(again.body.output.contact, first.body.output.contact)
    // The same person inside an Enrich, and twice in one request, is not paid for again either.
    const enrich = await run(connectionId, 'enrich_contacts', {
      contacts: [{ email: emailOf(3) }, { email: emailOf(4) }, { email: emailOf(4) }],
    })
    assert.deepEqual(
      enrich.body.output.results.map((r: any) => r.cached),
      [true, false, true],
    )
    assert.equal(enrich.body.output.creditsCharged, costOf(4))
    assert.equal(await requests(apiKey), sent + 1, 'only person 4 was sent')
    assert.equal((await usage(apiKey)).creditsCharged, charged + costOf(4))

    const company = await run(connectionId, 'find_company', { domain: 'harborview-analytics.com' })
    assert.equal(company.body.output.creditsCharged, 1)
    const companyAgain = await run(connectionId, 'find_company', {
      domain: 'https://www.Harborview-Analytics.com/about',
    })
    assert.equal(companyAgain.body.output.cached, true)
    assert.equal(companyAgain.body.output.creditsCharged, 0)
    assert.equal(await requests(apiKey), sent + 2)
  })

  test('the cache is per connection and can be turned off', async () => {
    const a = await account()
    const b = await account()
    await run(a.connectionId, 'find_contact', { email: emailOf(5) })
    const onB = await run(b.connectionId, 'find_contact', { email: emailOf(5) })
    assert.equal(onB.body.output.cached, false)
    assert.equal((await usage(b.apiKey)).creditsCharged, costOf(5))

    const off = await startTestService({
      contactdata: sb(),
      env: { PATCHBAY_CONTACTDATA_CACHE_TTL_MS: '0' },
    })
    try {
      const acct = await control(sb(), 'POST', '/accounts', {
        name: 'No cache',
        plan: 'enterprise',
        credits: 100,
      })
      const conn = await off.api('POST', '/v1/connections', {
        connector: 'contactdata',
        authMethod: 'api_key',
        credentials: { apiKey: acct.apiKey },
      })
      for (let i = 0; i < 2; i++) {
        const r = await off.api('POST', '/v1/steps/contactdata.find_contact/run', {
          connectionId: conn.body.id,
          input: { email: emailOf(7) },
        })
        assert.equal(r.body.output.cached, false)
      }
      assert.equal((await usage(acct.apiKey)).creditsCharged, 2 * costOf(7))
    } finally {
      await off.close()
    }
  })

  test('concurrent single lookups on one connection are coalesced into one bulk call, each caller getting its own result', async () => {
    const { apiKey, connectionId } = await account()
    const caller: Caller = {
      workspaceId: t.service.workspaceId,
      kind: 'workspaceKey',
      role: 'owner',
      keyId: 'key_test',
      personId: null,
      agentId: null,
    }
    const find = (input: unknown) =>
      t.service.engine.steps.run(caller, 'contactdata.find_contact', { connectionId, input })
    await find({ email: emailOf(10) }) // the connection is loaded and warm
    const sent = await requests(apiKey)

    const wanted = Array.from({ length: 20 }, (_, i) => 20 + i)
    const results = await Promise.all(wanted.map((n) => find({ email: emailOf(n) })))
    results.forEach((r: any, i) => {
      const out = r.output
      assert.equal(out.matched, true)
      assert.ok(
        out.contact.emails.some((e: any) => e.address === emailOf(wanted[i])),
        `caller ${i} got its own`,
      )
      assert.equal(out.creditsCharged, costOf(wanted[i]), 'each caller is charged for its own record')
    })
    assert.equal(await requests(apiKey), sent + 1, 'one upstream request for twenty lookups')
    assert.equal(await requests(apiKey, 'POST /person/bulk'), 1)
    const ledger = await t.api('GET', `/v1/credits?connectionId=${connectionId}&limit=200`)
    const byRun = new Map(ledger.body.entries.map((e: any) => [e.runId, e.credits]))
    results.forEach((r: any, i) => {
      assert.equal(byRun.get(r.meta.runId), costOf(wanted[i]))
    })

    // Through the HTTP API too: concurrent callers each get their own record.
    const viaHttp = await Promise.all(
      [40, 41, 42, 43, 44, 45].map((n) => run(connectionId, 'find_contact', { email: emailOf(n) })),
    )
    viaHttp.forEach((r, i) => {
      assert.ok(r.body.output.contact.emails.some((e: any) => e.address === emailOf(40 + i)))
    })
  })

  test('Find Company and Enrich Companies return firmographics; Search Contacts and Search Companies are free and paginated', async () => {
    const { apiKey, connectionId } = await account()
    const byName = await run(connectionId, 'find_company', { name: COMPANY })
    assert.equal(byName.body.output.matched, true)
    assert.equal(byName.body.output.company.domain, DOMAIN)
    assert.equal(byName.body.output.company.employeeCount, 420)
    assert.equal(byName.body.output.company.industry, 'Manufacturing')
    const many = await run(connectionId, 'enrich_companies', {
      companies: [
        { domain: 'harborview-analytics.com' },
        { name: 'Nowhere Whatsoever Ltd' },
        { domain: DOMAIN },
      ],
    })
    assert.deepEqual(
      many.body.output.results.map((r: any) => [r.matched, r.cached]),
      [
        [true, false],
        [false, false],
        [true, true],
      ],
    )
    assert.ok(many.body.output.results[0].company.technologies.length > 0)
    const charged = (await usage(apiKey)).creditsCharged
    assert.equal(charged, 2)

    const p1 = await run(connectionId, 'search_contacts', {
      company: DOMAIN,
      seniority: 'director',
      perPage: 100,
    })
    assert.equal(p1.status, 200, JSON.stringify(p1.body))
    assert.equal(p1.body.output.total, N_PEOPLE / 2)
    assert.equal(p1.body.output.hasMore, true)
    const first = p1.body.output.results[0]
    assert.equal(first.jobTitle, 'Head of Sales')
    assert.equal(first.emails, undefined, 'search reveals no emails')
    assert.equal(typeof first.hasEmail, 'boolean')
    const p2 = await run(connectionId, 'search_contacts', {
      company: DOMAIN,
      seniority: ['director'],
      page: 2,
      perPage: 100,
    })
    assert.equal(p2.body.output.results.length, 50)
    assert.equal(p2.body.output.hasMore, false)
    assert.notEqual(p2.body.output.results[0].id, first.id)
    // A search result is enough to find the person.
    const found = await run(connectionId, 'find_contact', {
      firstName: first.firstName,
      lastName: first.lastName,
      company: first.company.domain,
    })
    assert.equal(found.body.output.contact.id, first.id)

    const companies = await run(connectionId, 'search_companies', { industry: 'Manufacturing', perPage: 5 })
    assert.equal(companies.status, 200)
    assert.ok(companies.body.output.total > 0)
    assert.ok(companies.body.output.results.every((c: any) => c.industry === 'Manufacturing'))
    assert.equal((await usage(apiKey)).creditsCharged, charged + 1, 'searches cost nothing')
  })

  test('Contact-Data API Call sends method, path and body with the connection; its charges are in the ledger', async () => {
    const { apiKey, connectionId, name } = await account({ credits: 50 })
    const me = await run(connectionId, 'api_call', { method: 'GET', endpoint: '/account' })
    assert.equal(me.status, 200)
    assert.equal(me.body.output.body.name, name)
    assert.equal(me.body.output.creditsCharged, 0)
    const bulk = await run(connectionId, 'api_call', {
      method: 'POST',
      endpoint: '/person/bulk',
      body: [{ email: emailOf(60) }, { email: emailOf(61) }],
    })
    assert.equal(bulk.status, 200)
    assert.equal(bulk.body.output.body.length, 2)
    assert.equal(bulk.body.output.creditsCharged, costOf(60) + costOf(61))
    const ledger = await t.api('GET', `/v1/credits?connectionId=${connectionId}`)
    assert.equal(ledger.body.entries[0].stepId, 'contactdata.api_call')
    assert.equal(ledger.body.summary.credits, costOf(60) + costOf(61))
    assert.equal(ledger.body.summary.byConnection[0].lastRemaining, 50 - costOf(60) - costOf(61))
    assert.equal((await usage(apiKey)).creditsCharged, costOf(60) + costOf(61))
  })
})

describe('credits', () => {
  test('the ledger: per connection and per agent, a summary and paginated entries; an agent key sees only its own', async () => {
    const { connectionId } = await account()
    const other = await account()
    const { id: idA, key: keyA } = await agent('ledger-a', [connectionId, other.connectionId])
    const { id: idB, key: keyB } = await agent('ledger-b', [connectionId])
    await run(connectionId, 'find_contact', { email: emailOf(100) }, keyA) // 1
    await run(connectionId, 'find_contact', { email: emailOf(102) }, keyA) // 2
    await run(connectionId, 'find_contact', { email: emailOf(101) }, keyB) // 1
    await run(connectionId, 'find_contact', { email: emailOf(105) }) // 2, admin
    await run(other.connectionId, 'find_contact', { email: emailOf(104) }, keyA) // 1

    const all = await t.api('GET', `/v1/credits?connectionId=${connectionId}`)
    assert.equal(all.status, 200)
    assert.equal(all.body.summary.credits, 6)
    assert.equal(all.body.summary.charges, 4)
    assert.deepEqual(
      Object.fromEntries(all.body.summary.byAgent.map((a: any) => [a.agentId ?? 'admin', a.credits])),
      { admin: 2, [idA]: 3, [idB]: 1 },
    )
    assert.ok(
      all.body.entries.every((e: any) => e.connectionId === connectionId && e.connector === 'contactdata'),
    )

    const a = await t.api('GET', `/v1/credits?agentId=${idA}`)
    assert.equal(a.body.summary.credits, 4, 'across both connections')
    assert.equal(a.body.summary.byConnection.length, 2)

    const page1 = await t.api('GET', `/v1/credits?connectionId=${connectionId}&limit=3`)
    assert.equal(page1.body.entries.length, 3)
    assert.ok(page1.body.next)
    assert.equal(page1.body.summary.credits, 6, 'the summary covers every page')
    const page2 = await t.api(
      'GET',
      `/v1/credits?connectionId=${connectionId}&limit=3&cursor=${page1.body.next}`,
    )
    assert.equal(page2.body.entries.length, 1)
    assert.equal(page2.body.next, null)
    const ids = new Set([...page1.body.entries, ...page2.body.entries].map((e: any) => e.id))
    assert.equal(ids.size, 4)

    const own = await t.api('GET', '/v1/credits', undefined, keyB)
    assert.equal(own.status, 200)
    assert.equal(own.body.summary.credits, 1)
    assert.ok(own.body.entries.every((e: any) => e.agentId === idB))
    const peek = await t.api('GET', `/v1/credits?agentId=${idA}`, undefined, keyB)
    assert.equal(peek.status, 403)
  })

  test('budgets refuse a lookup whose worst case does not fit, before it is sent; cached lookups stay free', async () => {
    const { apiKey, connectionId } = await account()
    const { id, key } = await agent('budget', [connectionId])
    const set = await t.api('PUT', `/v1/credits/budgets/${id}`, { limit: 3 })
    assert.equal(set.status, 200)
    assert.deepEqual(
      {
        limit: set.body.limit,
        period: set.body.period,
        spent: set.body.spent,
        remaining: set.body.remaining,
      },
      { limit: 3, period: 'total', spent: 0, remaining: 3 },
    )
    const agentPut = await t.api('PUT', `/v1/credits/budgets/${id}`, { limit: 1000 }, key)
    assert.equal(agentPut.status, 403, 'an agent cannot raise its own budget')

    const first = await run(connectionId, 'find_contact', { email: emailOf(202) }, key) // worst 2, costs 1
    assert.equal(first.status, 200)
    const second = await run(connectionId, 'find_contact', { email: emailOf(203) }, key) // worst 2, costs 1
    assert.equal(second.status, 200)
    const sent = await requests(apiKey)

    const refused = await run(connectionId, 'find_contact', { email: emailOf(205) }, key) // 2 + 2 > 3
    assert.equal(refused.status, 403)
    assert.equal(refused.body.error.code, 'CREDIT_BUDGET_EXCEEDED')
    assert.match(refused.body.error.message, /Nothing was sent/)
    assert.match(refused.body.error.hint, new RegExp(`PUT /v1/credits/budgets/${id}`))
    assert.deepEqual(
      { spent: refused.body.error.details.spent, requested: refused.body.error.details.requested },
      { spent: 2, requested: 2 },
    )
    const bulk = await run(
      connectionId,
      'enrich_contacts',
      { contacts: [{ email: emailOf(206) }, { email: emailOf(208) }] },
      key,
    )
    assert.equal(bulk.body.error.code, 'CREDIT_BUDGET_EXCEEDED')
    const viaApiCall = await run(
      connectionId,
      'api_call',
      { method: 'POST', endpoint: '/person', body: { email: emailOf(209) } },
      key,
    )
    assert.equal(viaApiCall.body.error.code, 'CREDIT_BUDGET_EXCEEDED')
    assert.equal(await requests(apiKey), sent, 'refused lookups were never sent')

    const cached = await run(connectionId, 'find_contact', { email: emailOf(202) }, key)
    assert.equal(cached.status, 200, 'a cached result costs nothing, so the budget allows it')
    assert.equal(cached.body.output.cached, true)
    const search = await run(connectionId, 'search_contacts', { company: DOMAIN, perPage: 1 }, key)
    assert.equal(search.status, 200, 'search is free')

    const got = await t.api('GET', `/v1/credits/budgets/${id}`, undefined, key)
    assert.equal(got.body.spent, 2)
    assert.equal(got.body.remaining, 1)
    const list = await t.api('GET', '/v1/credits/budgets')
    assert.ok(list.body.budgets.some((b: any) => b.agentId === id))

    // The admin's own lookups are not limited by an agent's budget.
    const admin = await run(connectionId, 'find_contact', { email: emailOf(205) })
    assert.equal(admin.status, 200)

    assert.equal((await t.api('DELETE', `/v1/credits/budgets/${id}`)).status, 204)
    assert.equal((await t.api('GET', `/v1/credits/budgets/${id}`)).body.error.code, 'BUDGET_NOT_FOUND')
    const lifted = await run(connectionId, 'find_contact', { email: emailOf(206) }, key)
    assert.equal(lifted.status, 200)
    const bad = await t.api('PUT', `/v1/credits/budgets/${id}`, { limit: -1 })
    assert.equal(bad.body.error.code, 'VALIDATION_FAILED')
    const nobody = await t.api('PUT', '/v1/credits/budgets/agt_nobody', { limit: 5 })
    assert.equal(nobody.status, 404)
    assert.equal(nobody.body.error.code, 'AGENT_NOT_FOUND')
  })

  test('out of credits: the upstream 402 is INSUFFICIENT_CREDITS with a hint; bulk records that cannot be paid say so', async () => {
    const empty = await account({ credits: 0 })
    const res = await run(empty.connectionId, 'find_contact', { email: emailOf(0) })
    assert.equal(res.status, 402)
    assert.equal(res.body.error.code, 'INSUFFICIENT_CREDITS')
    assert.match(res.body.error.hint, /credits/)
    assert.equal(res.body.error.upstream.status, 402)
    const searchStillWorks = await run(empty.connectionId, 'search_companies', {
      industry: 'Software',
      perPage: 1,
    })
    assert.equal(searchStillWorks.status, 200)

    const one = await account({ credits: 1 })
    const pricey = await run(one.connectionId, 'find_contact', { email: emailOf(3) }) // costs 2
    assert.equal(pricey.status, 402)
    assert.equal(pricey.body.error.code, 'INSUFFICIENT_CREDITS')
    const enrich = await run(one.connectionId, 'enrich_contacts', {
      contacts: [{ email: emailOf(6) }, { email: emailOf(7) }, { email: emailOf(8) }], // 2, 1, 1
    })
    assert.equal(enrich.status, 200)
    const r = enrich.body.output.results
    assert.equal(r[0].matched, false)
    assert.equal(r[0].error.code, 'INSUFFICIENT_CREDITS')
    assert.equal(r[1].matched, true)
    assert.equal(r[2].error.code, 'INSUFFICIENT_CREDITS')
    assert.equal(enrich.body.output.creditsCharged, 1)
    // A record refused for credits is not cached: with credits added it is looked up again.
    await control(sb(), 'POST', '/credits', { apiKey: one.apiKey, remaining: 10 })
    const retry = await run(one.connectionId, 'find_contact', { email: emailOf(6) })
    assert.equal(retry.body.output.matched, true)
    assert.equal(retry.body.output.cached, false)
  })
})

describe('rate limits', () => {
  test('a 429 with a short retry-after is retried within the step; a long one is RATE_LIMITED with retryAfterMs', async () => {
    const { apiKey, connectionId } = await account()
    await control(sb(), 'POST', '/rate-limits', { apiKey, perMinute: 1, windowMs: 1000 })
    const first = await run(connectionId, 'search_companies', { industry: 'Software', perPage: 1 })
    assert.equal(first.status, 200)
    const second = await run(connectionId, 'search_companies', { industry: 'Healthcare', perPage: 1 })
    assert.equal(second.status, 200, JSON.stringify(second.body))
    assert.equal(second.body.meta.attempts, 2, 'the 429 was retried after its retry-after')
    assert.equal((await usage(apiKey)).endpoints['POST /company/search'].statuses['429'], 1)

    await control(sb(), 'POST', '/rate-limits', { apiKey, perMinute: 1, windowMs: 60_000 })
    await run(connectionId, 'search_companies', { industry: 'Software', perPage: 1 })
    const limited = await run(connectionId, 'find_company', { domain: 'harborview-analytics.com' })
    assert.equal(limited.status, 429)
    assert.equal(limited.body.error.code, 'RATE_LIMITED')
    assert.ok(limited.body.error.retryAfterMs > 10_000, 'the wait is longer than the step would retry for')
    assert.match(limited.body.error.hint, /Retry later/)
  })

  test("a connection's own rate limit (its plan's) paces its steps so the upstream never answers 429", async () => {
    const { apiKey, connectionId } = await account()
    const dflt = await t.api('GET', `/v1/connections/${connectionId}/rate-limit`)
    assert.deepEqual(dflt.body, { connectionId, requests: 60, perMs: 60_000, source: 'default' })
    await control(sb(), 'POST', '/rate-limits', { apiKey, perMinute: 2, windowMs: 1000 })
    const set = await t.api('PUT', `/v1/connections/${connectionId}/rate-limit`, { requests: 2, perMs: 1000 })
    assert.equal(set.status, 200)
    assert.equal(set.body.source, 'connection')
    // The same connection served by an instance on a clock moved by hand, with the sandbox's
    // (see SharedTime): the outcome does not depend on the machine's speed.
    const clock = new ManualClock()
    const pacer = countingPacer(createPacer(clock))
    const paced = await startTestService({
      contactdata: sb(),
      taskboard: t.taskboard,
      clock,
      pacer,
      db: { name: 'sqlite', fresh: () => t.database },
    })
    const time = new SharedTime(clock, pacer, sb())
    try {
      await time.advance(1_100)
      const results = await time.run(() =>
        Promise.all(
          ['Software', 'Healthcare', 'Insurance', 'Biotechnology', 'Manufacturing'].map((industry) =>
            paced.api('POST', '/v1/steps/contactdata.search_companies/run', {
              connectionId,
              input: { industry, perPage: 1 },
            }),
          ),
        ),
      )
      assert.deepEqual(
        results.map((r) => r.status),
        [200, 200, 200, 200, 200],
      )
    } finally {
      time.close()
      await paced.close()
    }
    const statuses = (await usage(apiKey)).endpoints['POST /company/search'].statuses
    assert.deepEqual(statuses, { 200: 5 }, 'no request was refused upstream')
    assert.equal((await t.api('DELETE', `/v1/connections/${connectionId}/rate-limit`)).status, 204)
    assert.equal((await t.api('GET', `/v1/connections/${connectionId}/rate-limit`)).body.source, 'default')
    const bad = await t.api('PUT', `/v1/connections/${connectionId}/rate-limit`, { requests: 0, perMs: 1000 })
    assert.equal(bad.body.error.code, 'VALIDATION_FAILED')
    const missing = await t.api('GET', '/v1/connections/con_missing/rate-limit')
    assert.equal(missing.body.error.code, 'CONNECTION_NOT_FOUND')
  })
})

test('the API key never appears in a response, an error, a run record or the ledger', async () => {
  const { apiKey, connectionId } = await account({ credits: 0 })
  const bodies = [
    await t.api('GET', `/v1/connections/${connectionId}`),
    await run(connectionId, 'find_contact', { email: emailOf(1) }),
    await run(connectionId, 'api_call', { method: 'GET', endpoint: '/account' }),
    await t.api('GET', '/v1/credits'),
    await t.api('GET', '/v1/runs?limit=200'),
  ]
  for (const b of bodies) assert.ok(!JSON.stringify(b.body).includes(apiKey))
  const db = t.service.engine.store.db
  const stored = JSON.stringify([
    await db.selectFrom('step_runs').selectAll().execute(),
    await db.selectFrom('credit_ledger').selectAll().execute(),
    await db.selectFrom('connections').selectAll().execute(),
  ])
  assert.ok(!stored.includes(apiKey))
})
