// Field schemas shared by the contact-data steps, described for an LLM reading the catalog, and
// the slim records the steps return.
import { z } from 'zod'

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const PROFILE_URL = /^(?:https?:\/\/)?(?:[a-z]{2,3}\.)?linkedin\.com\/in\/([^/?#\s]+)\/?(?:[?#].*)?$/i
const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,63}$/

/** The upstream's largest bulk request. */
export const BULK_MAX = 100
/** The most records one Enrich step takes (sent as bulk requests of BULK_MAX). */
export const ENRICH_MAX = 1000

export const SENIORITIES = ['entry', 'senior', 'manager', 'director', 'vp', 'c_suite'] as const
export const COMPANY_SIZES = ['1-10', '11-50', '51-200', '201-500', '501-1000', '1001-5000', '5001+'] as const

const text = (max: number) => z.string().trim().min(1, 'must not be empty').max(max)

/** What identifies one person: an email, a profile URL, or a full name with the company. */
export const personQuery = z
  .object({
    email: z
      .string()
      .trim()
      .regex(EMAIL, 'must be an email address, such as jane.doe@acme.com')
      .max(320)
      .optional()
      .describe('Email address of the person (work or personal).'),
    linkedInUrl: z
      .string()
      .trim()
      .regex(PROFILE_URL, 'must be a LinkedIn profile URL, such as https://www.linkedin.com/in/jane-doe')
      .max(500)
      .optional()
      .describe(
        'LinkedIn profile URL, such as https://www.linkedin.com/in/jane-doe (Search Contacts results carry it).',
      ),
    firstName: text(100).optional().describe('First name; needs lastName and company too.'),
    lastName: text(100).optional().describe('Last name; needs firstName and company too.'),
    company: text(200)
      .optional()
      .describe('Company name or domain the person works at; needs firstName and lastName too.'),
  })
  .superRefine((q, ctx) => {
    if (q.email || q.linkedInUrl) return
    const parts = { firstName: q.firstName, lastName: q.lastName, company: q.company }
    const missing = Object.entries(parts)
      .filter(([, v]) => !v)
      .map(([k]) => k)
    if (missing.length === 3)
      ctx.addIssue({
        code: 'custom',
        message: 'give one of: email; linkedInUrl; firstName with lastName and company',
      })
    else if (missing.length > 0)
      for (const field of missing)
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message:
            'matching by name needs firstName, lastName and company together (or give email or linkedInUrl)',
        })
  })
  .describe(
    'One person, identified by email, or linkedInUrl, or firstName + lastName + company. When several are given they are tried in that order.',
  )
export type PersonQuery = z.output<typeof personQuery>

/** What identifies one company: its domain or its name. */
export const companyQuery = z
  .object({
    domain: z
      .string()
      .trim()
      .max(500)
      .refine(
        (d) => normalizeDomain(d) !== null,
        'must be a domain such as acme.com (a website URL works too)',
      )
      .optional()
      .describe(
        'Company domain, such as acme.com; a website URL such as https://www.acme.com/about also works.',
      ),
    name: text(200).optional().describe('Company name, such as Acme Robotics.'),
  })
  .refine((q) => q.domain || q.name, 'give domain or name')
  .describe('One company, identified by domain (preferred: unambiguous) or name.')
export type CompanyQuery = z.output<typeof companyQuery>

export const records = <T extends z.ZodType>(item: T, what: string) =>
  z
    .array(item)
    .min(1, `give at least one ${what}`)
    .max(ENRICH_MAX, `give at most ${ENRICH_MAX} ${what}s per step; split larger lists`)

const oneOrMany = <T extends readonly [string, ...string[]]>(values: T, what: string) =>
  z
    .union([z.enum(values), z.array(z.enum(values)).min(1)])
    .optional()
    .describe(`${what}: one of ${values.join(', ')}, or a list of them (any matches).`)

export const paging = {
  page: z.number().int().min(1).default(1).describe('Page number, from 1.'),
  perPage: z.number().int().min(1).max(100).default(25).describe('Results per page, 1 to 100.'),
}

export const personCriteria = z.object({
  jobTitle: text(200)
    .optional()
    .describe(
      'Words in the job title, such as "VP of Sales" or "engineer" (case-insensitive, part of the title).',
    ),
  company: text(200).optional().describe('Company domain (acme.com) or part of its name.'),
  location: text(200)
    .optional()
    .describe(
      'City, region or country, or several comma-separated, such as "Austin" or "Texas, United States".',
    ),
  industry: text(100)
    .optional()
    .describe("The company's industry, such as Software or Data & Analytics (exact name)."),
  companySize: oneOrMany(COMPANY_SIZES, 'Company size in employees'),
  seniority: oneOrMany(SENIORITIES, 'Seniority'),
  ...paging,
})

export const companyCriteria = z.object({
  industry: text(100).optional().describe('Industry, such as Software or Healthcare (exact name).'),
  location: text(200)
    .optional()
    .describe('City, region or country, or several comma-separated, such as "Berlin" or "Germany".'),
  companySize: oneOrMany(COMPANY_SIZES, 'Company size in employees'),
  technologies: z
    .union([text(100), z.array(text(100)).min(1).max(20)])
    .optional()
    .describe(
      'Technologies the company uses, such as Kubernetes or ["Snowflake", "dbt"] (all must be present).',
    ),
  name: text(200).optional().describe('Part of the company name.'),
  ...paging,
})

/** A criteria object with none of its criteria set (paging aside). */
export function noCriteria(input: Record<string, unknown>): boolean {
  return Object.entries(input).every(([k, v]) => k === 'page' || k === 'perPage' || v === undefined)
}

// ---- Cache keys: equal keys are the same lookup upstream. ----

export function normalizeDomain(input: string): string | null {
  const host = input
    .trim()
    .toLowerCase()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
    .replace(/[/?#].*$/, '')
    .replace(/:\d+$/, '')
    .replace(/^www\./, '')
  return DOMAIN.test(host) ? host : null
}

const lower = (s: string | undefined) => (s ?? '').trim().replace(/\s+/g, ' ').toLowerCase()

export function personKey(q: PersonQuery): string {
  const slug = q.linkedInUrl ? (PROFILE_URL.exec(q.linkedInUrl)?.[1] ?? q.linkedInUrl) : ''
  return JSON.stringify([
    lower(q.email),
    safeDecode(slug).toLowerCase(),
    lower(q.firstName),
    lower(q.lastName),
    lower(q.company),
  ])
}

export function companyKey(q: CompanyQuery): string {
  return JSON.stringify([q.domain ? (normalizeDomain(q.domain) ?? '') : '', lower(q.name)])
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

// ---- Upstream records and the slim shapes the steps return. ----

export interface UpstreamPerson {
  id: string
  firstName?: string
  lastName?: string
  fullName?: string
  emails?: Array<{ address: string; type?: string; verified?: boolean }>
  phones?: Array<{ number: string; type?: string }>
  jobTitle?: string | null
  seniority?: string | null
  company?: { name?: string; domain?: string } | null
  location?: { city?: string; region?: string; country?: string } | null
  socialProfiles?: { linkedin?: string | null; twitter?: string | null; github?: string | null } | null
  hasEmail?: boolean
  hasPhone?: boolean
}

export interface UpstreamCompany {
  id: string
  name: string
  domain: string
  size?: string | null
  employeeCount?: number | null
  industry?: string | null
  location?: { city?: string; region?: string; country?: string } | null
  revenue?: { amount?: number; currency?: string; range?: string } | null
  technologies?: string[]
  socialProfiles?: { linkedin?: string | null; twitter?: string | null } | null
  founded?: number | null
}

/** The upstream's answer to one lookup (a miss is `matched: false`, not an error). */
export interface PersonResult {
  matched: boolean
  person: UpstreamPerson | null
  /** Only in bulk answers: this record was not looked up. */
  error?: { code: string; message: string }
}

export interface CompanyResult {
  matched: boolean
  company: UpstreamCompany | null
  error?: { code: string; message: string }
}

const place = (l: UpstreamPerson['location']) =>
  l ? [l.city, l.region, l.country].filter(Boolean).join(', ') || null : null

const profiles = z
  .object({
    linkedin: z.string().nullable(),
    twitter: z.string().nullable(),
    github: z.string().nullable().optional(),
  })
  .describe('Social profile URLs.')

export const contact = z.object({
  id: z.string().describe("The contact-data service's id of the person."),
  fullName: z.string(),
  firstName: z.string(),
  lastName: z.string(),
  emails: z
    .array(z.object({ address: z.string(), type: z.string(), verified: z.boolean() }))
    .describe('Email addresses; type is work or personal; verified ones are safe to send to.'),
  phones: z
    .array(z.object({ number: z.string(), type: z.string() }))
    .describe('Phone numbers (mobile or work).'),
  jobTitle: z.string().nullable(),
  seniority: z.string().nullable().describe('entry, senior, manager, director, vp or c_suite.'),
  company: z.object({ name: z.string(), domain: z.string() }).nullable(),
  location: z.string().nullable().describe('City, region, country.'),
  socialProfiles: profiles,
})

export function slimPerson(p: UpstreamPerson): z.input<typeof contact> {
  return {
    id: p.id,
    fullName: p.fullName ?? [p.firstName, p.lastName].filter(Boolean).join(' '),
    firstName: p.firstName ?? '',
    lastName: p.lastName ?? '',
    emails: (p.emails ?? []).map((e) => ({
      address: e.address,
      type: e.type ?? 'work',
      verified: Boolean(e.verified),
    })),
    phones: (p.phones ?? []).map((n) => ({ number: n.number, type: n.type ?? 'work' })),
    jobTitle: p.jobTitle ?? null,
    seniority: p.seniority ?? null,
    company: p.company?.name ? { name: p.company.name, domain: p.company.domain ?? '' } : null,
    location: place(p.location),
    socialProfiles: {
      linkedin: p.socialProfiles?.linkedin ?? null,
      twitter: p.socialProfiles?.twitter ?? null,
      github: p.socialProfiles?.github ?? null,
    },
  }
}

export const contactSummary = z.object({
  id: z.string(),
  fullName: z.string(),
  firstName: z
    .string()
    .describe('With lastName and company.name: enough for Find Contact or Enrich Contacts.'),
  lastName: z.string(),
  jobTitle: z.string().nullable(),
  seniority: z.string().nullable(),
  company: z.object({ name: z.string(), domain: z.string() }).nullable(),
  location: z.string().nullable(),
  linkedInUrl: z
    .string()
    .nullable()
    .describe('Give this to Find Contact or Enrich Contacts for email and phone.'),
  hasEmail: z.boolean().describe('Whether enrichment would return an email address.'),
  hasPhone: z
    .boolean()
    .describe('Whether enrichment would return a phone number (such a lookup costs 2 credits).'),
})

export function summarizePerson(p: UpstreamPerson): z.input<typeof contactSummary> {
  const s = slimPerson(p)
  return {
    id: s.id,
    fullName: s.fullName,
    firstName: s.firstName,
    lastName: s.lastName,
    jobTitle: s.jobTitle,
    seniority: s.seniority,
    company: s.company,
    location: s.location,
    linkedInUrl: s.socialProfiles.linkedin,
    hasEmail: p.hasEmail ?? (p.emails?.length ?? 0) > 0,
    hasPhone: p.hasPhone ?? (p.phones?.length ?? 0) > 0,
  }
}

export const company = z.object({
  id: z.string().describe("The contact-data service's id of the company."),
  name: z.string(),
  domain: z.string(),
  size: z.string().nullable().describe('Employee range, such as 51-200.'),
  employeeCount: z.number().nullable(),
  industry: z.string().nullable(),
  location: z.string().nullable().describe('City, region, country of the headquarters.'),
  revenue: z
    .object({ amount: z.number().nullable(), currency: z.string().nullable(), range: z.string().nullable() })
    .nullable()
    .describe('Estimated yearly revenue.'),
  technologies: z.array(z.string()).describe('Technologies the company uses.'),
  socialProfiles: profiles,
  founded: z.number().nullable(),
})

export function slimCompany(c: UpstreamCompany): z.input<typeof company> {
  return {
    id: c.id,
    name: c.name,
    domain: c.domain,
    size: c.size ?? null,
    employeeCount: c.employeeCount ?? null,
    industry: c.industry ?? null,
    location: place(c.location),
    revenue: c.revenue
      ? {
          amount: c.revenue.amount ?? null,
          currency: c.revenue.currency ?? null,
          range: c.revenue.range ?? null,
        }
      : null,
    technologies: c.technologies ?? [],
    socialProfiles: {
      linkedin: c.socialProfiles?.linkedin ?? null,
      twitter: c.socialProfiles?.twitter ?? null,
    },
    founded: c.founded ?? null,
  }
}

/** Why one record of an Enrich step has no result. */
export const recordError = z
  .object({ code: z.string(), message: z.string() })
  .optional()
  .describe('Set when this record could not be looked up (INSUFFICIENT_CREDITS: the account ran out).')

export const creditsCharged = z
  .number()
  .int()
  .describe('Credits this step was charged. Results from the cache (cached: true) are free.')
