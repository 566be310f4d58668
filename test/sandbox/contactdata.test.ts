import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, it } from 'node:test'
import { generateDataset, SHOWCASE } from '../../sandbox/contactdata/dataset.ts'
import { type ContactdataSandbox, startContactdataSandbox } from '../../sandbox/contactdata/index.ts'
import { COMPANY_SIZES } from '../../sandbox/contactdata/records.ts'

let sb: ContactdataSandbox

interface Answer {
  status: number
  headers: Headers
  body: any
}

async function call(
  method: string,
  path: string,
  opts: { body?: unknown; raw?: string; key?: string | null; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...opts.headers }
  const key = opts.key === undefined ? sb.demo.apiKey : opts.key
  if (key !== null) headers['x-api-key'] = key
  const body = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body))
  const res = await fetch(sb.url + path, { method, headers, body })
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined }
}

const post = (path: string, body?: unknown, key?: string | null) => call('POST', path, { body, key })
const control = (path: string, body?: unknown) => call('POST', `/_sandbox${path}`, { body, key: null })
const charged = (a: Answer) => Number(a.headers.get('x-credits-charged'))
const remaining = (a: Answer) => Number(a.headers.get('x-credits-remaining'))

async function newAccount(opts: { plan?: string; credits?: number } = {}): Promise<string> {
  const res = await control('/accounts', { name: 'Test Co', ...opts })
  assert.equal(res.status, 201)
  return res.body.apiKey
}

before(async () => {
  sb = await startContactdataSandbox()
})
after(() => sb.close())
beforeEach(async () => {
  assert.equal((await control('/reset')).status, 200)
})

describe('dataset', () => {
  it('is generated the same on every run', () => {
    const a = generateDataset()
    const b = generateDataset()
    assert.equal(a.companies.length, 2000)
    assert.equal(a.people.length, 10000)
    assert.deepEqual(a.people[4321], b.people[4321])
    assert.deepEqual(a.companies[1234], b.companies[1234])
    assert.deepEqual(
      a.people.map((p) => p.id),
      b.people.map((p) => p.id),
    )
  })

  it('holds consistent, plausible records', () => {
    const { companies, people } = generateDataset()
    const domains = new Set(companies.map((c) => c.domain))
    assert.equal(domains.size, companies.length)
    const bounds: Record<string, [number, number]> = {
      '1-10': [1, 10],
      '11-50': [11, 50],
      '51-200': [51, 200],
      '201-500': [201, 500],
      '501-1000': [501, 1000],
      '1001-5000': [1001, 5000],
      '5001+': [5001, Number.POSITIVE_INFINITY],
    }
    for (const c of companies) {
      const [lo, hi] = bounds[c.size]
      assert.ok(c.employeeCount >= lo && c.employeeCount <= hi, `${c.name}: ${c.employeeCount} in ${c.size}`)
      assert.ok(c.technologies.length > 0)
      assert.equal(c.revenue.currency, 'USD')
    }
    const emails = new Set<string>()
    for (const p of people) {
      assert.ok(domains.has(p.company.domain))
      assert.ok(p.emails.length > 0)
      for (const e of p.emails) {
        assert.ok(!emails.has(e.address), `duplicate ${e.address}`)
        emails.add(e.address)
      }
    }
    const withPhone = people.filter((p) => p.phones.length > 0).length
    assert.ok(withPhone > 1000 && withPhone < 9000, 'only some people have phones')
    assert.equal(new Set(people.map((p) => p.seniority)).size, 6)
  })

  it('reports its size and the demo records', () => {
    assert.equal(sb.dataset.people, 10000)
    assert.equal(sb.dataset.companies, 2000)
    assert.equal(sb.demo.apiKey, 'cd_demo_4Rk8Lw2XnP5tQv7H9mZc')
    assert.equal(sb.demo.samplePerson.email, SHOWCASE.personWithPhone.emails[0].address)
    assert.equal(sb.demo.sampleCompany.domain, 'harborview-analytics.com')
  })

  it('gives the same record for the same email on two starts', async () => {
    const email = generateDataset().people[777].emails[0].address
    const other = await startContactdataSandbox()
    try {
      assert.equal(other.demo.apiKey, sb.demo.apiKey)
      const ask = (url: string) =>
        fetch(`${url}/person`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': sb.demo.apiKey },
          body: JSON.stringify({ email }),
        }).then((r) => r.json())
      const [a, b] = await Promise.all([ask(sb.url), ask(other.url)])
      assert.equal(a.matched, true)
      assert.deepEqual(a, b)
    } finally {
      await other.close()
    }
  })
})

describe('auth and account', () => {
  it('names the account for free', async () => {
    const res = await call('GET', '/account')
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, {
      name: 'Patchbay Demo Workspace',
      plan: 'pro',
      credits: { remaining: 10000, used: 0 },
    })
    assert.equal(charged(res), 0)
    assert.equal(remaining(res), 10000)
  })

  it('refuses a missing or unknown key with 401 invalid_api_key', async () => {
    for (const key of [null, 'cd_wrong_key']) {
      const res = await call('GET', '/account', { key })
      assert.equal(res.status, 401)
      assert.equal(res.body.error.code, 'invalid_api_key')
      assert.equal(typeof res.body.error.message, 'string')
    }
  })

  it('creates accounts through the control API', async () => {
    const key = await newAccount({ plan: 'free', credits: 5 })
    const res = await call('GET', '/account', { key })
    assert.deepEqual(res.body, { name: 'Test Co', plan: 'free', credits: { remaining: 5, used: 0 } })
    assert.equal(res.headers.get('x-rate-limit-minute'), '10')
    const dup = await control('/accounts', { name: 'Again', apiKey: key })
    assert.equal(dup.status, 409)
    const bad = await control('/accounts', { plan: 'free' })
    assert.equal(bad.status, 422)
    const list = await call('GET', '/_sandbox/accounts', { key: null })
    assert.equal(list.body.accounts.length, 2)
  })
})

describe('person lookup', () => {
  it('matches by email, case-insensitively, and charges 2 when a phone is returned', async () => {
    const res = await post('/person', { email: sb.demo.samplePerson.email.toUpperCase() })
    assert.equal(res.status, 200)
    assert.equal(res.body.matched, true)
    const p = res.body.person
    assert.equal(p.fullName, 'Dana Whitcombe')
    assert.ok(p.phones.length > 0)
    for (const k of [
      'id',
      'firstName',
      'lastName',
      'emails',
      'phones',
      'jobTitle',
      'seniority',
      'company',
      'location',
      'socialProfiles',
    ])
      assert.ok(k in p, k)
    assert.deepEqual(Object.keys(p.socialProfiles).sort(), ['github', 'linkedin', 'twitter'])
    assert.equal(charged(res), 2)
    assert.equal(remaining(res), 9998)
    const account = await call('GET', '/account')
    assert.deepEqual(account.body.credits, { remaining: 9998, used: 2 })
  })

  it('charges 1 for a person without a phone and 0 for a miss', async () => {
    const hit = await post('/person', { email: SHOWCASE.personWithoutPhone.emails[0].address })
    assert.equal(hit.body.matched, true)
    assert.deepEqual(hit.body.person.phones, [])
    assert.equal(charged(hit), 1)
    const miss = await post('/person', { email: 'no.one@nowhere-at-all.com' })
    assert.equal(miss.status, 200)
    assert.deepEqual(miss.body, { matched: false, person: null })
    assert.equal(charged(miss), 0)
    assert.equal(remaining(miss), 9999)
  })

  it('matches by LinkedIn URL in its usual spellings', async () => {
    for (const linkedInUrl of [
      sb.demo.samplePerson.linkedInUrl,
      'linkedin.com/in/Dana-Whitcombe/',
      'http://uk.linkedin.com/in/dana-whitcombe?trk=abc',
    ]) {
      const res = await post('/person', { linkedInUrl })
      assert.equal(res.body.matched, true, linkedInUrl)
      assert.equal(res.body.person.id, SHOWCASE.personWithPhone.id)
    }
  })

  it('matches by first name, last name and company name or domain', async () => {
    const byName = await post('/person', {
      firstName: 'dana',
      lastName: 'WHITCOMBE',
      company: 'harborview analytics',
    })
    assert.equal(byName.body.person?.id, SHOWCASE.personWithPhone.id)
    const byDomain = await post('/person', {
      firstName: 'Dana',
      lastName: 'Whitcombe',
      company: 'harborview-analytics.com',
    })
    assert.equal(byDomain.body.person?.id, SHOWCASE.personWithPhone.id)
    const elsewhere = await post('/person', {
      firstName: 'Dana',
      lastName: 'Whitcombe',
      company: 'Some Other Co',
    })
    assert.equal(elsewhere.body.matched, false)
  })

  it('answers 422 invalid_request for a body it cannot use, charging nothing', async () => {
    const bodies = [
      {},
      { firstName: 'Dana', lastName: 'Whitcombe' },
      { email: 'not-an-email' },
      { linkedInUrl: 'https://example.com/dana' },
      { email: 42 },
      [{ email: sb.demo.samplePerson.email }],
      'dana@example.com',
    ]
    for (const body of bodies) {
      const res = await post('/person', body)
      assert.equal(res.status, 422, JSON.stringify(body))
      assert.equal(res.body.error.code, 'invalid_request')
      assert.equal(charged(res), 0)
    }
    assert.equal((await post('/person')).status, 422)
  })
})

describe('company lookup', () => {
  it('matches by domain in any spelling, or by name, for 1 credit', async () => {
    for (const body of [
      { domain: 'harborview-analytics.com' },
      { domain: 'https://www.Harborview-Analytics.com/about' },
      { name: 'HARBORVIEW ANALYTICS' },
    ]) {
      const res = await post('/company', body)
      assert.equal(res.status, 200)
      assert.equal(res.body.matched, true, JSON.stringify(body))
      assert.equal(res.body.company.id, SHOWCASE.company.id)
      assert.equal(charged(res), 1)
    }
    const c = (await post('/company', { domain: 'harborview-analytics.com' })).body.company
    for (const k of [
      'size',
      'employeeCount',
      'industry',
      'location',
      'revenue',
      'technologies',
      'socialProfiles',
      'founded',
    ])
      assert.ok(k in c, k)
    assert.deepEqual((await call('GET', '/account')).body.credits, { remaining: 9996, used: 4 })
  })

  it('answers a miss with matched false and no charge; a bad body with 422', async () => {
    const miss = await post('/company', { domain: 'definitely-not-here.org' })
    assert.deepEqual(miss.body, { matched: false, company: null })
    assert.equal(charged(miss), 0)
    for (const body of [{}, { domain: 'not a domain' }, { name: 7 }]) {
      const res = await post('/company', body)
      assert.equal(res.status, 422, JSON.stringify(body))
      assert.equal(res.body.error.code, 'invalid_request')
    }
  })
})

describe('bulk', () => {
  it('answers each person request in order and charges per record', async () => {
    const res = await post('/person/bulk', [
      { email: sb.demo.samplePerson.email },
      { email: 'missing@nowhere-at-all.com' },
      { firstName: 'Only' },
      { email: SHOWCASE.personWithoutPhone.emails[0].address },
    ])
    assert.equal(res.status, 200)
    assert.equal(res.body.length, 4)
    assert.equal(res.body[0].person.id, SHOWCASE.personWithPhone.id)
    assert.deepEqual(res.body[1], { matched: false, person: null })
    assert.equal(res.body[2].matched, false)
    assert.equal(res.body[2].person, null)
    assert.equal(res.body[2].error.code, 'invalid_request')
    assert.equal(res.body[3].person.id, SHOWCASE.personWithoutPhone.id)
    assert.equal(charged(res), 3)
    assert.equal(remaining(res), 9997)
  })

  it('answers each company request in order, 1 credit per match', async () => {
    const res = await post('/company/bulk', [
      { domain: 'harborview-analytics.com' },
      { name: 'Nobody Inc' },
      'junk',
    ])
    assert.equal(res.status, 200)
    assert.equal(res.body[0].company.id, SHOWCASE.company.id)
    assert.deepEqual(res.body[1], { matched: false, company: null })
    assert.equal(res.body[2].error.code, 'invalid_request')
    assert.equal(charged(res), 1)
  })

  it('rejects a batch that is not an array of 1 to 100 with 422', async () => {
    const many = Array.from({ length: 101 }, () => ({ domain: 'harborview-analytics.com' }))
    for (const body of [{ domain: 'harborview-analytics.com' }, [], many]) {
      const res = await post('/company/bulk', body)
      assert.equal(res.status, 422)
      assert.equal(res.body.error.code, 'invalid_request')
      assert.equal(charged(res), 0)
    }
    const hundred = await post('/company/bulk', many.slice(0, 100))
    assert.equal(hundred.status, 200)
    assert.equal(charged(hundred), 100)
  })

  it('charges until the credits run out, then marks the rest insufficient_credits', async () => {
    const key = await newAccount({ credits: 3 })
    const res = await post(
      '/person/bulk',
      [
        { email: sb.demo.samplePerson.email },
        { email: sb.demo.samplePerson.email },
        { email: SHOWCASE.personWithoutPhone.emails[0].address },
        { email: 'missing@nowhere-at-all.com' },
      ],
      key,
    )
    assert.equal(res.status, 200)
    assert.equal(res.body[0].matched, true)
    assert.equal(res.body[1].error.code, 'insufficient_credits')
    assert.equal(res.body[1].person, null)
    assert.equal(res.body[2].matched, true)
    assert.deepEqual(res.body[3], { matched: false, person: null })
    assert.equal(charged(res), 3)
    assert.equal(remaining(res), 0)
  })
})

describe('credits', () => {
  it('refuses lookups with 402 at a zero balance, before any work', async () => {
    assert.equal((await control('/credits', { remaining: 0 })).status, 200)
    const calls = [
      post('/person', { email: sb.demo.samplePerson.email }),
      post('/company', { domain: 'harborview-analytics.com' }),
      post('/person/bulk', [{ email: sb.demo.samplePerson.email }]),
      post('/company/bulk', [{ domain: 'harborview-analytics.com' }]),
    ]
    for (const res of await Promise.all(calls)) {
      assert.equal(res.status, 402)
      assert.equal(res.body.error.code, 'insufficient_credits')
      assert.equal(charged(res), 0)
      assert.equal(remaining(res), 0)
    }
    const account = await call('GET', '/account')
    assert.equal(account.status, 200)
    assert.deepEqual(account.body.credits, { remaining: 0, used: 0 })
    const search = await post('/person/search', { jobTitle: 'engineer' })
    assert.equal(search.status, 200, 'search needs no credits')
  })

  it('does not reveal a 2-credit match with 1 credit left', async () => {
    await control('/credits', { remaining: 1 })
    const res = await post('/person', { email: sb.demo.samplePerson.email })
    assert.equal(res.status, 402)
    assert.equal(charged(res), 0)
    const cheap = await post('/person', { email: SHOWCASE.personWithoutPhone.emails[0].address })
    assert.equal(cheap.status, 200)
    assert.equal(remaining(cheap), 0)
  })

  it('sets balances per key and rejects unknown keys', async () => {
    const key = await newAccount({ credits: 10 })
    const res = await control('/credits', { apiKey: key, remaining: 4, used: 6 })
    assert.deepEqual(res.body.credits, { remaining: 4, used: 6 })
    assert.equal((await control('/credits', { apiKey: 'cd_nobody_at_all', remaining: 4 })).status, 404)
    assert.equal((await control('/credits', { remaining: -1 })).status, 422)
  })
})

describe('search', () => {
  it('finds roles within a company without revealing contact details or charging', async () => {
    const res = await post('/person/search', { company: 'Harborview Analytics', jobTitle: 'sales' })
    assert.equal(res.status, 200)
    assert.ok(res.body.total >= 1)
    assert.ok(res.body.results.some((p: any) => p.id === SHOWCASE.personWithPhone.id))
    for (const p of res.body.results) {
      assert.equal(p.company.domain, 'harborview-analytics.com')
      assert.match(p.jobTitle, /sales/i)
      assert.equal(p.emails, undefined)
      assert.equal(p.phones, undefined)
      assert.equal(typeof p.hasEmail, 'boolean')
    }
    assert.equal(charged(res), 0)
    assert.deepEqual((await call('GET', '/account')).body.credits, { remaining: 10000, used: 0 })
  })

  it('filters people by location, industry, company size and seniority', async () => {
    const res = await post('/person/search', {
      location: 'United States',
      industry: 'software',
      companySize: ['51-200', '201-500'],
      seniority: ['director', 'vp'],
      perPage: 100,
    })
    assert.equal(res.status, 200)
    assert.ok(res.body.total > 0)
    const { companies } = generateDataset()
    const byDomain = new Map(companies.map((c) => [c.domain, c]))
    for (const p of res.body.results) {
      assert.equal(p.location.country, 'United States')
      assert.ok(['director', 'vp'].includes(p.seniority))
      const c = byDomain.get(p.company.domain)!
      assert.equal(c.industry, 'Software')
      assert.ok(['51-200', '201-500'].includes(c.size))
      assert.equal(JSON.stringify(p).includes('@'), false, 'no email address anywhere')
    }
  })

  it('pages through results', async () => {
    const first = await post('/person/search', { seniority: 'c_suite', perPage: 10 })
    const second = await post('/person/search', { seniority: 'c_suite', perPage: 10, page: 2 })
    assert.equal(first.body.page, 1)
    assert.equal(second.body.page, 2)
    assert.equal(first.body.perPage, 10)
    assert.equal(first.body.results.length, 10)
    assert.equal(first.body.total, second.body.total)
    const ids = new Set(first.body.results.map((p: any) => p.id))
    assert.ok(second.body.results.every((p: any) => !ids.has(p.id)))
    const beyond = await post('/person/search', { seniority: 'c_suite', perPage: 100, page: 1000 })
    assert.deepEqual(beyond.body.results, [])
    const defaults = await post('/person/search', {})
    assert.equal(defaults.body.perPage, 25)
    assert.equal(defaults.body.total, 10000)
  })

  it('rejects bad search bodies with 422', async () => {
    for (const body of [
      { perPage: 101 },
      { page: 0 },
      { seniority: 'intern' },
      { companySize: '10-20' },
      { jobTitle: 3 },
    ]) {
      const res = await post('/person/search', body)
      assert.equal(res.status, 422, JSON.stringify(body))
      assert.equal(res.body.error.code, 'invalid_request')
    }
    assert.equal((await post('/company/search', { technologies: [1] })).status, 422)
  })

  it('filters companies by industry, technologies, size, location and name', async () => {
    const res = await post('/company/search', {
      industry: 'Data & Analytics',
      technologies: ['snowflake'],
      companySize: '51-200',
      location: 'San Francisco, California',
      perPage: 100,
    })
    assert.equal(res.status, 200)
    assert.ok(res.body.results.some((c: any) => c.id === SHOWCASE.company.id))
    for (const c of res.body.results) {
      assert.equal(c.industry, 'Data & Analytics')
      assert.ok(c.technologies.includes('Snowflake'))
      assert.equal(c.size, '51-200')
      assert.equal(c.location.city, 'San Francisco')
    }
    const byName = await post('/company/search', { name: 'harborview' })
    assert.ok(byName.body.results.some((c: any) => c.id === SHOWCASE.company.id))
    const page2 = await post('/company/search', { industry: 'Software', perPage: 5, page: 2 })
    assert.equal(page2.body.results.length, 5)
    assert.ok(page2.body.total > 10)
    assert.equal(charged(page2), 0)
    assert.ok(COMPANY_SIZES.includes(page2.body.results[0].size))
  })
})

describe('rate limits', () => {
  it('follows the plan and answers 429 with retry-after once the window is used up', async () => {
    const key = await newAccount({ plan: 'free' })
    await call('POST', '/_sandbox/clock', { body: { freeze: true }, key: null })
    for (let i = 0; i < 10; i++) {
      const res = await call('GET', '/account', { key })
      assert.equal(res.status, 200)
      assert.equal(res.headers.get('x-rate-limit-minute'), '10')
      assert.equal(res.headers.get('x-minute-requests-left'), String(9 - i))
    }
    const limited = await call('GET', '/account', { key })
    assert.equal(limited.status, 429)
    assert.equal(limited.body.error.code, 'rate_limited')
    assert.equal(limited.headers.get('retry-after'), '60')
    assert.equal(limited.headers.get('x-minute-requests-left'), '0')
    // Another account has its own window.
    assert.equal((await call('GET', '/account')).status, 200)
    await call('POST', '/_sandbox/clock', { body: { advanceMs: 60_000 }, key: null })
    assert.equal((await call('GET', '/account', { key })).status, 200)
  })

  it('takes shrunk limits and windows from the control API', async () => {
    await call('POST', '/_sandbox/clock', { body: { freeze: true }, key: null })
    const set = await control('/rate-limits', { apiKey: sb.demo.apiKey, perMinute: 2, windowMs: 1000 })
    assert.equal(set.status, 200)
    assert.deepEqual(set.body.accounts[0], {
      apiKey: sb.demo.apiKey,
      plan: 'pro',
      perMinute: 2,
      windowMs: 1000,
    })
    assert.equal((await post('/person/search', {})).status, 200)
    assert.equal((await post('/person', { email: sb.demo.samplePerson.email })).status, 200)
    const limited = await post('/person', { email: sb.demo.samplePerson.email })
    assert.equal(limited.status, 429)
    assert.equal(limited.headers.get('retry-after'), '1')
    assert.equal(charged(limited), 0)
    await call('POST', '/_sandbox/clock', { body: { advanceMs: 1000 }, key: null })
    const again = await post('/person', { email: sb.demo.samplePerson.email })
    assert.equal(again.status, 200)
    assert.equal(again.headers.get('x-rate-limit-minute'), '2')
    assert.equal(again.headers.get('x-minute-requests-left'), '1')

    // Without a key the override applies to every account; DELETE restores the plans.
    await control('/rate-limits', { perMinute: 0 })
    assert.equal((await call('GET', '/account')).status, 429)
    await call('DELETE', '/_sandbox/rate-limits', { key: null })
    assert.equal((await call('GET', '/account')).headers.get('x-rate-limit-minute'), '300')
    assert.equal((await control('/rate-limits', { apiKey: 'cd_nobody_at_all', perMinute: 1 })).status, 404)
    assert.equal((await control('/rate-limits', {})).status, 422)
  })
})

describe('control API', () => {
  it('counts every API request per endpoint, with credits and statuses', async () => {
    const empty = await call('GET', '/_sandbox/usage', { key: null })
    assert.equal(empty.body.totalRequests, 0)
    await post('/person', { email: sb.demo.samplePerson.email })
    await post('/person', { email: 'missing@nowhere-at-all.com' })
    await post('/company/bulk', [{ domain: 'harborview-analytics.com' }, { domain: 'nope.example' }])
    await call('GET', '/account', { key: 'cd_wrong_key' })
    await call('GET', '/no/such/path')
    const usage = await call('GET', '/_sandbox/usage', { key: null })
    assert.equal(usage.body.totalRequests, 5)
    assert.equal(usage.body.creditsCharged, 3)
    assert.deepEqual(usage.body.endpoints['POST /person'], {
      requests: 2,
      creditsCharged: 2,
      statuses: { 200: 2 },
    })
    assert.deepEqual(usage.body.endpoints['POST /company/bulk'], {
      requests: 1,
      creditsCharged: 1,
      statuses: { 200: 1 },
    })
    assert.deepEqual(usage.body.endpoints['GET /account'].statuses, { 401: 1 })
    assert.equal(usage.body.endpoints['GET /no/such/path'].requests, 1)
    assert.equal(usage.body.recent.length, 5)
    const mine = await call('GET', `/_sandbox/usage?apiKey=${sb.demo.apiKey}`, { key: null })
    assert.equal(mine.body.totalRequests, 4)
    await call('DELETE', '/_sandbox/usage', { key: null })
    assert.equal((await call('GET', '/_sandbox/usage', { key: null })).body.totalRequests, 0)
  })

  it('injects faults that answer in the API error shape and are still counted', async () => {
    const fault = await control('/faults', {
      errorRate: 1,
      errorStatus: 503,
      count: 1,
      pathPrefix: '/person',
    })
    assert.equal(fault.status, 201)
    const failed = await post('/person', { email: sb.demo.samplePerson.email })
    assert.equal(failed.status, 503)
    assert.equal(failed.body.error.code, 'service_unavailable')
    const ok = await post('/person', { email: sb.demo.samplePerson.email })
    assert.equal(ok.status, 200)
    assert.equal(charged(ok), 2)
    const usage = await call('GET', '/_sandbox/usage', { key: null })
    assert.deepEqual(usage.body.endpoints['POST /person'].statuses, { 200: 1, 503: 1 })
    assert.equal(usage.body.creditsCharged, 2)
  })

  it('holds a request open under a timeout fault', async () => {
    await control('/faults', { timeout: true, count: 1 })
    await assert.rejects(
      fetch(`${sb.url}/account`, {
        headers: { 'x-api-key': sb.demo.apiKey },
        signal: AbortSignal.timeout(200),
      }),
    )
    assert.equal((await call('GET', '/account')).status, 200)
    const usage = await call('GET', '/_sandbox/usage', { key: null })
    assert.equal(usage.body.endpoints['GET /account'].requests, 2)
  })

  it('drives the clock', async () => {
    const frozen = await call('POST', '/_sandbox/clock', {
      body: { freeze: true, atMs: 1_700_000_000_000 },
      key: null,
    })
    assert.equal(frozen.body.frozen, true)
    const later = await call('POST', '/_sandbox/clock', { body: { advanceMs: 5000 }, key: null })
    assert.equal(later.body.nowMs, 1_700_000_005_000)
  })

  it('seeds people and companies, and a reset removes them', async () => {
    const seeded = await control('/seed', {
      companies: [
        {
          name: 'Quietwater Robotics',
          domain: 'quietwater-robotics.test',
          employeeCount: 75,
          industry: 'Manufacturing',
        },
      ],
      people: [
        {
          firstName: 'Nell',
          lastName: 'Okonkwo',
          email: 'nell@quietwater-robotics.test',
          company: 'quietwater-robotics.test',
          jobTitle: 'Head of Sales',
          seniority: 'director',
        },
        {
          firstName: 'Ravi',
          lastName: 'Lindgren',
          email: 'ravi@quietwater-robotics.test',
          phone: '+14155550199',
          company: 'Quietwater Robotics',
        },
      ],
    })
    assert.equal(seeded.status, 201)
    assert.equal(seeded.body.companies[0].size, '51-200')
    assert.equal(sb.dataset.people, 10002)
    assert.equal(sb.dataset.companies, 2001)

    const nell = await post('/person', { email: 'nell@quietwater-robotics.test' })
    assert.equal(nell.body.person.company.name, 'Quietwater Robotics')
    assert.deepEqual(nell.body.person.phones, [])
    assert.equal(charged(nell), 1)
    const ravi = await post('/person', {
      firstName: 'Ravi',
      lastName: 'Lindgren',
      company: 'quietwater-robotics.test',
    })
    assert.equal(charged(ravi), 2)
    const company = await post('/company', { domain: 'quietwater-robotics.test' })
    assert.equal(company.body.company.industry, 'Manufacturing')
    const roles = await post('/person/search', { company: 'Quietwater Robotics', seniority: 'director' })
    assert.equal(roles.body.total, 1)

    const conflict = await control('/seed', {
      people: [
        {
          firstName: 'X',
          lastName: 'Y',
          email: 'NELL@quietwater-robotics.test',
          company: 'harborview-analytics.com',
        },
      ],
    })
    assert.equal(conflict.status, 409)
    const unknown = await control('/seed', {
      people: [{ firstName: 'X', lastName: 'Y', company: 'nowhere.test' }],
    })
    assert.equal(unknown.status, 422)
    assert.equal((await control('/seed', { people: [{ lastName: 'Y' }] })).status, 422)

    await control('/reset')
    assert.equal(sb.dataset.people, 10000)
    assert.equal((await post('/person', { email: 'nell@quietwater-robotics.test' })).body.matched, false)
  })

  it('restores credits and accounts on reset', async () => {
    const key = await newAccount()
    await post('/person', { email: sb.demo.samplePerson.email })
    await control('/reset')
    assert.deepEqual((await call('GET', '/account')).body.credits, { remaining: 10000, used: 0 })
    assert.equal((await call('GET', '/account', { key })).status, 401)
  })
})

describe('robustness', () => {
  it('answers malformed JSON with 400 invalid_json', async () => {
    const res = await call('POST', '/person', { raw: '{"email": ' })
    assert.equal(res.status, 400)
    assert.equal(res.body.error.code, 'invalid_json')
  })

  it('answers unknown paths with 404 not_found and wrong methods with 405', async () => {
    const missing = await call('GET', '/v2/people')
    assert.equal(missing.status, 404)
    assert.equal(missing.body.error.code, 'not_found')
    const wrong = await call('DELETE', '/person')
    assert.equal(wrong.status, 405)
    assert.equal(wrong.headers.get('allow'), 'POST')
    assert.equal(wrong.body.error.code, 'method_not_allowed')
    assert.equal((await call('POST', '/account', { body: {} })).status, 405)
  })

  it('refuses oversized and non-JSON bodies without falling over', async () => {
    const big = await call('POST', '/person/bulk', {
      raw: JSON.stringify([{ email: 'x'.repeat(2_000_000) }]),
    })
    assert.equal(big.status, 413)
    assert.equal(big.body.error.code, 'payload_too_large')
    const text = await call('POST', '/person', {
      raw: 'email=a@b.co',
      headers: { 'content-type': 'text/plain' },
    })
    assert.equal(text.status, 415)
    assert.equal((await call('GET', '/account')).status, 200)
  })
})
