// The generated dataset: the same thousands of companies and people on every start, so tests and
// docs can name records. A few hand-written showcase records come first; they stay put even if the
// generator changes, which is why the README and the demo point at them.
import { Rng } from '../common/rng.ts'
import { type Company, type Location, type Person, type Phone, revenueRange, sizeFor } from './records.ts'
import {
  COMMON_TECHNOLOGIES,
  COMPANY_TLDS,
  DEPARTMENTS,
  FIRST_NAMES,
  INDUSTRIES,
  LAST_NAMES,
  NAME_STEMS,
  PERSONAL_EMAIL_DOMAINS,
  PLACES,
  type Place,
  type Seniority,
} from './wordlists.ts'

export const DATASET_SEED = 0xc0ffee
export const DEFAULT_COMPANY_COUNT = 2000
export const DEFAULT_PEOPLE_COUNT = 10000

export interface Dataset {
  companies: Company[]
  people: Person[]
}

const SHOWCASE_COMPANY: Company = {
  id: 'co_hv7Rk2Lw9XnP5tAq',
  name: 'Harborview Analytics',
  domain: 'harborview-analytics.com',
  size: '51-200',
  employeeCount: 140,
  industry: 'Data & Analytics',
  location: { city: 'San Francisco', region: 'California', country: 'United States' },
  revenue: { amount: 32_000_000, currency: 'USD', range: '$10M-$50M' },
  technologies: ['Snowflake', 'dbt', 'Looker', 'AWS', 'Salesforce', 'Slack'],
  socialProfiles: {
    linkedin: 'https://www.linkedin.com/company/harborview-analytics',
    twitter: 'https://twitter.com/harborviewhq',
  },
  founded: 2014,
}

const SHOWCASE_PEOPLE: Person[] = [
  {
    id: 'per_dW4hT8mQ2cVb6NzK',
    firstName: 'Dana',
    lastName: 'Whitcombe',
    fullName: 'Dana Whitcombe',
    emails: [
      { address: 'dana.whitcombe@harborview-analytics.com', type: 'work', verified: true },
      { address: 'dana.whitcombe.sf@gmail.com', type: 'personal', verified: false },
    ],
    phones: [{ number: '+14155550142', type: 'mobile' }],
    jobTitle: 'VP of Sales',
    seniority: 'vp',
    company: { name: SHOWCASE_COMPANY.name, domain: SHOWCASE_COMPANY.domain },
    location: { city: 'San Francisco', region: 'California', country: 'United States' },
    socialProfiles: {
      linkedin: 'https://www.linkedin.com/in/dana-whitcombe',
      twitter: 'https://twitter.com/danawhitcombe',
      github: null,
    },
  },
  {
    id: 'per_fA3rK9wJ5eLx2TqM',
    firstName: 'Felix',
    lastName: 'Arkwright',
    fullName: 'Felix Arkwright',
    emails: [{ address: 'felix.arkwright@harborview-analytics.com', type: 'work', verified: true }],
    phones: [],
    jobTitle: 'Senior Software Engineer',
    seniority: 'senior',
    company: { name: SHOWCASE_COMPANY.name, domain: SHOWCASE_COMPANY.domain },
    location: { city: 'Oakland', region: 'California', country: 'United States' },
    socialProfiles: {
      linkedin: 'https://www.linkedin.com/in/felix-arkwright',
      twitter: null,
      github: 'https://github.com/farkwright',
    },
  },
]

/** The records the demo and the README point at. */
export const SHOWCASE = {
  company: SHOWCASE_COMPANY,
  personWithPhone: SHOWCASE_PEOPLE[0],
  personWithoutPhone: SHOWCASE_PEOPLE[1],
}

const SIZE_BANDS: readonly { min: number; max: number; weight: number }[] = [
  { min: 2, max: 10, weight: 14 },
  { min: 11, max: 50, weight: 28 },
  { min: 51, max: 200, weight: 26 },
  { min: 201, max: 500, weight: 13 },
  { min: 501, max: 1000, weight: 8 },
  { min: 1001, max: 5000, weight: 7 },
  { min: 5001, max: 80000, weight: 4 },
]

const SENIORITY_WEIGHTS: readonly [Seniority, number][] = [
  ['entry', 20],
  ['senior', 34],
  ['manager', 20],
  ['director', 12],
  ['vp', 8],
  ['c_suite', 6],
]

const DEPARTMENT_WEIGHTS = [20, 12, 20, 8, 7, 8, 6, 10, 5, 4]

const EMAIL_PATTERNS = ['first.last', 'first.last', 'flast', 'first', 'firstl', 'first_last'] as const

function weighted<T>(rng: Rng, items: readonly T[], weights: readonly number[]): T {
  const total = weights.reduce((a, b) => a + b, 0)
  let r = rng.next() * total
  for (let i = 0; i < items.length; i++) {
    r -= weights[i]
    if (r < 0) return items[i]
  }
  return items[items.length - 1]
}

function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '')
}

function place(p: Place): Location {
  return { city: p.city, region: p.region, country: p.country }
}

function id(rng: Rng, prefix: string): string {
  return `${prefix}_${rng.alnum(16)}`
}

/** Three significant figures, the precision enrichment vendors publish estimates with. */
function roundEstimate(n: number): number {
  const magnitude = 10 ** Math.max(0, Math.floor(Math.log10(n)) - 2)
  return Math.round(n / magnitude) * magnitude
}

interface CompanyDraft {
  company: Company
  place: Place
  emailPattern: (typeof EMAIL_PATTERNS)[number]
  people: number
  cSuiteTaken: Set<string>
}

function generateCompanies(rng: Rng, count: number): CompanyDraft[] {
  const names = new Set([SHOWCASE_COMPANY.name.toLowerCase()])
  const domains = new Set([SHOWCASE_COMPANY.domain])
  const drafts: CompanyDraft[] = [
    {
      company: SHOWCASE_COMPANY,
      place: PLACES[0],
      emailPattern: 'first.last',
      people: SHOWCASE_PEOPLE.length,
      cSuiteTaken: new Set(),
    },
  ]
  while (drafts.length < count) {
    const industry = rng.pick(INDUSTRIES)
    let name = `${rng.pick(NAME_STEMS)} ${rng.pick(industry.suffixes)}`
    // Two-word names run out quickly; a second stem keeps names unique without numbering them.
    if (names.has(name.toLowerCase()))
      name = `${rng.pick(NAME_STEMS)}${rng.pick(NAME_STEMS).toLowerCase()} ${rng.pick(industry.suffixes)}`
    if (names.has(name.toLowerCase())) continue
    const tld = rng.pick(COMPANY_TLDS)
    let domain = `${slug(name)}.${tld}`
    if (domains.has(domain)) domain = `${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}.${tld}`
    if (domains.has(domain)) continue
    names.add(name.toLowerCase())
    domains.add(domain)

    const band = weighted(
      rng,
      SIZE_BANDS,
      SIZE_BANDS.map((b) => b.weight),
    )
    // Skewed towards the bottom of each band, as real headcounts are.
    const employeeCount = band.min + Math.floor(rng.next() ** 2 * (band.max - band.min + 1))
    const hq = rng.pick(PLACES)
    const amount = roundEstimate(employeeCount * industry.revenuePerEmployee * (0.6 + rng.next() * 0.8))
    const technologies = new Set<string>()
    const ownCount = rng.int(2, Math.min(5, industry.technologies.length))
    while (technologies.size < ownCount) technologies.add(rng.pick(industry.technologies))
    const commonCount = rng.int(1, 4)
    while (technologies.size < ownCount + commonCount) technologies.add(rng.pick(COMMON_TECHNOLOGIES))
    const oldest = employeeCount > 1000 ? 1950 : employeeCount > 200 ? 1975 : 1995
    const handle = slug(name)

    drafts.push({
      company: {
        id: id(rng, 'co'),
        name,
        domain,
        size: sizeFor(employeeCount),
        employeeCount,
        industry: industry.name,
        location: place(hq),
        revenue: { amount, currency: 'USD', range: revenueRange(amount) },
        technologies: [...technologies],
        socialProfiles: {
          linkedin: `https://www.linkedin.com/company/${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`,
          twitter: rng.next() < 0.7 ? `https://twitter.com/${handle}` : null,
        },
        founded: rng.int(oldest, 2023),
      },
      place: hq,
      emailPattern: rng.pick(EMAIL_PATTERNS),
      people: 0,
      cSuiteTaken: new Set(),
    })
  }
  return drafts
}

function emailLocal(pattern: CompanyDraft['emailPattern'], first: string, last: string): string {
  const f = slug(first)
  const l = slug(last)
  switch (pattern) {
    case 'first.last':
      return `${f}.${l}`
    case 'flast':
      return `${f[0]}${l}`
    case 'first':
      return f
    case 'firstl':
      return `${f}${l[0]}`
    case 'first_last':
      return `${f}_${l}`
  }
}

/** Numbers in ranges reserved for fiction where the country has one, so none reaches a real line. */
function phoneNumber(rng: Rng, p: Place): string {
  const n = (digits: number) => String(rng.int(0, 10 ** digits - 1)).padStart(digits, '0')
  if (p.dial === '1') return `+1${p.area}55501${n(2)}`
  if (p.dial === '44') return p.area === '20' ? `+44207946${n(4)}` : `+44${p.area}4960${n(3)}`
  if (p.dial === '61') return `+61${p.area}${p.area === '2' ? '5550' : '7010'}${n(4)}`
  return `+${p.dial}${p.area}${n(9 - p.area.length)}`
}

function generatePeople(rng: Rng, drafts: CompanyDraft[], count: number): Person[] {
  const people: Person[] = [...SHOWCASE_PEOPLE]
  const nameKeys = new Set(
    people.map((p) => `${p.firstName}|${p.lastName}|${p.company.domain}`.toLowerCase()),
  )
  const emails = new Set(people.flatMap((p) => p.emails.map((e) => e.address)))
  const linkedins = new Set(people.map((p) => p.socialProfiles.linkedin))
  const weights = drafts.map((d) => Math.sqrt(d.company.employeeCount))
  const cumulative: number[] = []
  let total = 0
  for (const w of weights) {
    total += w
    cumulative.push(total)
  }

  const pickCompany = (): CompanyDraft => {
    for (;;) {
      const r = rng.next() * total
      let lo = 0
      let hi = cumulative.length - 1
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        if (cumulative[mid] > r) hi = mid
        else lo = mid + 1
      }
      const d = drafts[lo]
      if (d.people < d.company.employeeCount) return d
    }
  }

  while (people.length < count) {
    const draft = pickCompany()
    const company = draft.company
    const firstName = rng.pick(FIRST_NAMES)
    const lastName = rng.pick(LAST_NAMES)
    const key = `${firstName}|${lastName}|${company.domain}`.toLowerCase()
    if (nameKeys.has(key)) continue
    nameKeys.add(key)
    draft.people++

    const department = weighted(rng, DEPARTMENTS, DEPARTMENT_WEIGHTS)
    let seniority = weighted(
      rng,
      SENIORITY_WEIGHTS.map(([s]) => s),
      SENIORITY_WEIGHTS.map(([, w]) => w),
    )
    // One chief per function per company.
    if (seniority === 'c_suite') {
      if (draft.cSuiteTaken.has(department.name)) seniority = 'vp'
      else draft.cSuiteTaken.add(department.name)
    }
    const jobTitle = rng.pick(department.titles[seniority])

    const personEmails: Person['emails'] = []
    if (rng.next() < 0.96) {
      const local = emailLocal(draft.emailPattern, firstName, lastName)
      let address = `${local}@${company.domain}`
      for (let i = 2; emails.has(address); i++) address = `${local}${i}@${company.domain}`
      emails.add(address)
      personEmails.push({ address, type: 'work', verified: rng.next() < 0.88 })
    }
    if (personEmails.length === 0 || rng.next() < 0.35) {
      const provider = rng.pick(PERSONAL_EMAIL_DOMAINS)
      let address = `${slug(firstName)}.${slug(lastName)}${rng.int(1, 99)}@${provider}`
      while (emails.has(address))
        address = `${slug(firstName)}${slug(lastName)}${rng.int(100, 9999)}@${provider}`
      emails.add(address)
      personEmails.push({ address, type: 'personal', verified: rng.next() < 0.6 })
    }

    const home = rng.next() < 0.78 ? draft.place : rng.pick(PLACES)
    const phones: Phone[] = []
    if (rng.next() < 0.4) {
      phones.push({ number: phoneNumber(rng, home), type: rng.next() < 0.7 ? 'mobile' : 'work' })
      if (rng.next() < 0.12)
        phones.push({
          number: phoneNumber(rng, draft.place),
          type: phones[0].type === 'mobile' ? 'work' : 'mobile',
        })
    }

    let linkedin: string | null = null
    if (rng.next() < 0.93) {
      const base = `${slug(firstName)}-${slug(lastName)}`
      // Most real profile slugs carry a generated suffix; the bare name is the exception.
      linkedin = `https://www.linkedin.com/in/${base}`
      if (rng.next() < 0.6) linkedin = `https://www.linkedin.com/in/${base}-${rng.hex(8)}`
      while (linkedins.has(linkedin)) linkedin = `https://www.linkedin.com/in/${base}-${rng.hex(8)}`
      linkedins.add(linkedin)
    }
    const githubChance =
      department.name === 'Engineering' ? 0.55 : department.name === 'Product' ? 0.15 : 0.03

    people.push({
      id: id(rng, 'per'),
      firstName,
      lastName,
      fullName: `${firstName} ${lastName}`,
      emails: personEmails,
      phones,
      jobTitle,
      seniority,
      company: { name: company.name, domain: company.domain },
      location: place(home),
      socialProfiles: {
        linkedin,
        twitter:
          rng.next() < 0.25
            ? `https://twitter.com/${slug(firstName)}${slug(lastName)[0]}${rng.int(1, 999)}`
            : null,
        github:
          rng.next() < githubChance
            ? `https://github.com/${slug(firstName)[0]}${slug(lastName)}${rng.int(1, 99)}`
            : null,
      },
    })
  }
  return people
}

/** Builds the dataset from the fixed seed; the same arguments give the same records. */
export function generateDataset(
  companyCount = DEFAULT_COMPANY_COUNT,
  peopleCount = DEFAULT_PEOPLE_COUNT,
  seed = DATASET_SEED,
): Dataset {
  const rng = new Rng(seed)
  const drafts = generateCompanies(rng, companyCount)
  const people = generatePeople(rng, drafts, peopleCount)
  return { companies: drafts.map((d) => d.company), people }
}

let cached: Dataset | undefined

/** The default dataset, generated once per process; callers must not mutate it. */
export function defaultDataset(): Dataset {
  cached ??= generateDataset()
  return cached
}
