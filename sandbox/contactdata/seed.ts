// Records added through `POST /_sandbox/seed`: a short description is completed into a full record,
// so a test can ask for "a person at Acme with no phone" without writing every field.
import { z } from 'zod'
import type { Rng } from '../common/rng.ts'
import { type Directory, linkedinSlug, normalizeDomain } from './directory.ts'
import { COMPANY_SIZES, type Company, type Location, type Person, revenueRange, sizeFor } from './records.ts'
import { SENIORITIES } from './wordlists.ts'

const location = z.object({
  city: z.string(),
  region: z.string().default(''),
  country: z.string().default(''),
})

const seedCompany = z.object({
  id: z.string().min(1).optional(),
  name: z.string().min(1),
  domain: z.string().min(1),
  size: z.enum(COMPANY_SIZES).optional(),
  employeeCount: z.number().int().positive().optional(),
  industry: z.string().min(1).default('Software'),
  location: location.optional(),
  revenue: z
    .object({
      amount: z.number().nonnegative(),
      currency: z.string().default('USD'),
      range: z.string().optional(),
    })
    .optional(),
  technologies: z.array(z.string()).default([]),
  socialProfiles: z
    .object({ linkedin: z.string().nullable().optional(), twitter: z.string().nullable().optional() })
    .optional(),
  founded: z.number().int().optional(),
})

const seedPerson = z.object({
  id: z.string().min(1).optional(),
  firstName: z.string().min(1),
  lastName: z.string().min(1),
  /** Shortcut for one verified work email. */
  email: z.string().optional(),
  emails: z
    .array(
      z.object({
        address: z.string(),
        type: z.enum(['work', 'personal']).default('work'),
        verified: z.boolean().default(true),
      }),
    )
    .optional(),
  /** Shortcut for one mobile number. */
  phone: z.string().optional(),
  phones: z
    .array(z.object({ number: z.string(), type: z.enum(['mobile', 'work']).default('mobile') }))
    .optional(),
  jobTitle: z.string().min(1).default('Account Executive'),
  seniority: z.enum(SENIORITIES).default('senior'),
  /** A known company's name or domain, or the name and domain of any company. */
  company: z.union([z.string().min(1), z.object({ name: z.string().min(1), domain: z.string().min(1) })]),
  location: location.optional(),
  /** Shortcut for socialProfiles.linkedin. */
  linkedInUrl: z.string().optional(),
  socialProfiles: z
    .object({
      linkedin: z.string().nullable().optional(),
      twitter: z.string().nullable().optional(),
      github: z.string().nullable().optional(),
    })
    .optional(),
})

export const seedBody = z.object({
  companies: z.array(seedCompany).default([]),
  people: z.array(seedPerson).default([]),
})

export type SeedBody = z.infer<typeof seedBody>

const DEFAULT_LOCATION: Location = { city: 'New York', region: 'New York', country: 'United States' }
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export class SeedError extends Error {
  status: number
  constructor(status: number, message: string) {
    super(message)
    this.status = status
  }
}

/** Adds the records (companies first, so people can name them) or adds nothing and throws. */
export function applySeed(
  dir: Directory,
  rng: Rng,
  body: SeedBody,
): { companies: Company[]; people: Person[] } {
  const companies = body.companies.map((c) => completeCompany(rng, c))
  const pending = new Map(companies.map((c) => [c.domain, c]))
  for (const c of companies) {
    const conflict = dir.companyConflict(c)
    if (conflict) throw new SeedError(409, conflict)
  }
  const people = body.people.map((p) => completePerson(rng, dir, pending, p))
  const emails = new Set<string>()
  const profiles = new Set<string>()
  for (const p of people) {
    const conflict = dir.personConflict(p)
    if (conflict) throw new SeedError(409, conflict)
    for (const e of p.emails) {
      if (emails.has(e.address.toLowerCase())) throw new SeedError(409, `email ${e.address} appears twice`)
      emails.add(e.address.toLowerCase())
    }
    const slug = p.socialProfiles.linkedin ? linkedinSlug(p.socialProfiles.linkedin) : null
    if (slug && profiles.has(slug))
      throw new SeedError(409, `linkedin profile ${p.socialProfiles.linkedin} appears twice`)
    if (slug) profiles.add(slug)
  }
  if (new Set(companies.map((c) => c.domain)).size !== companies.length)
    throw new SeedError(409, 'a domain appears twice')
  for (const c of companies) dir.addCompany(c)
  for (const p of people) dir.addPerson(p)
  return { companies, people }
}

function completeCompany(rng: Rng, c: SeedBody['companies'][number]): Company {
  const domain = normalizeDomain(c.domain)
  if (!domain) throw new SeedError(422, `not a valid domain: ${c.domain}`)
  const employeeCount = c.employeeCount ?? (c.size ? lowerBound(c.size) : 25)
  if (c.size && c.employeeCount && sizeFor(c.employeeCount) !== c.size)
    throw new SeedError(422, `employeeCount ${c.employeeCount} does not fall in size ${c.size}`)
  const amount = c.revenue?.amount ?? employeeCount * 200_000
  return {
    id: c.id ?? `co_${rng.alnum(16)}`,
    name: c.name,
    domain,
    size: c.size ?? sizeFor(employeeCount),
    employeeCount,
    industry: c.industry,
    location: c.location ?? DEFAULT_LOCATION,
    revenue: {
      amount,
      currency: c.revenue?.currency ?? 'USD',
      range: c.revenue?.range ?? revenueRange(amount),
    },
    technologies: c.technologies,
    socialProfiles: {
      linkedin: c.socialProfiles?.linkedin ?? `https://www.linkedin.com/company/${domain.split('.')[0]}`,
      twitter: c.socialProfiles?.twitter ?? null,
    },
    founded: c.founded ?? 2015,
  }
}

function lowerBound(size: string): number {
  return Number.parseInt(size, 10)
}

function completePerson(
  rng: Rng,
  dir: Directory,
  pending: Map<string, Company>,
  p: SeedBody['people'][number],
): Person {
  let company: Company | undefined
  let companyRef: { name: string; domain: string }
  if (typeof p.company === 'string') {
    const domain = normalizeDomain(p.company)
    company =
      (domain ? pending.get(domain) : undefined) ??
      [...pending.values()].find((c) => c.name.toLowerCase() === p.company.toString().toLowerCase()) ??
      dir.findCompany({ domain: domain ?? undefined, name: p.company }) ??
      undefined
    if (!company)
      throw new SeedError(422, `unknown company ${p.company}: seed it too, or pass { name, domain }`)
    companyRef = { name: company.name, domain: company.domain }
  } else {
    const domain = normalizeDomain(p.company.domain)
    if (!domain) throw new SeedError(422, `not a valid domain: ${p.company.domain}`)
    companyRef = { name: p.company.name, domain }
    company = pending.get(domain) ?? dir.findCompany({ domain }) ?? undefined
  }

  const emails = [...(p.emails ?? [])]
  if (p.email) emails.unshift({ address: p.email, type: 'work', verified: true })
  for (const e of emails)
    if (!EMAIL_RE.test(e.address)) throw new SeedError(422, `not a valid email address: ${e.address}`)
  const phones = [...(p.phones ?? [])]
  if (p.phone) phones.unshift({ number: p.phone, type: 'mobile' })
  const linkedin = p.linkedInUrl ?? p.socialProfiles?.linkedin ?? null
  if (linkedin && !linkedinSlug(linkedin)) throw new SeedError(422, `not a LinkedIn profile URL: ${linkedin}`)

  return {
    id: p.id ?? `per_${rng.alnum(16)}`,
    firstName: p.firstName,
    lastName: p.lastName,
    fullName: `${p.firstName} ${p.lastName}`,
    emails,
    phones,
    jobTitle: p.jobTitle,
    seniority: p.seniority,
    company: companyRef,
    location: p.location ?? company?.location ?? DEFAULT_LOCATION,
    socialProfiles: {
      linkedin,
      twitter: p.socialProfiles?.twitter ?? null,
      github: p.socialProfiles?.github ?? null,
    },
  }
}
