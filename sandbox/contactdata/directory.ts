// The emulator's records with the indexes lookups need. Starts from the shared generated dataset
// and takes records added through the control API on top; a reset builds a fresh one.
import type { Dataset } from './dataset.ts'
import type { Company, Person } from './records.ts'

export interface PersonQuery {
  email?: string
  linkedinSlug?: string
  name?: { first: string; last: string; company: string }
}

export interface PersonFilters {
  jobTitle?: string
  company?: string
  location?: string
  industry?: string
  companySize?: string[]
  seniority?: string[]
}

export interface CompanyFilters {
  industry?: string
  location?: string
  companySize?: string[]
  technologies?: string[]
  name?: string
}

export interface Page<T> {
  total: number
  page: number
  perPage: number
  results: T[]
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase()
}

/** `https://www.linkedin.com/in/Jane-Doe/?trk=x` → `jane-doe`; null when it is no profile URL. */
export function linkedinSlug(url: string): string | null {
  const m = /^(?:https?:\/\/)?(?:[a-z]{2,3}\.)?linkedin\.com\/in\/([^/?#\s]+)\/?(?:[?#].*)?$/i.exec(
    url.trim(),
  )
  return m ? decodeURIComponent(m[1]).toLowerCase() : null
}

/** `https://www.Acme.com/about` → `acme.com`; null when it cannot be a domain. */
export function normalizeDomain(input: string): string | null {
  const host = input
    .trim()
    .toLowerCase()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
    .replace(/[/?#].*$/, '')
    .replace(/:\d+$/, '')
    .replace(/^www\./, '')
  return /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,63}$/.test(host) ? host : null
}

function normalizeName(name: string): string {
  return name.trim().replace(/\s+/g, ' ').toLowerCase()
}

function paginate<T>(items: T[], page: number, perPage: number): Page<T> {
  const start = (page - 1) * perPage
  return { total: items.length, page, perPage, results: items.slice(start, start + perPage) }
}

export class Directory {
  readonly people: Person[]
  readonly companies: Company[]
  #personByEmail = new Map<string, Person>()
  #personByLinkedin = new Map<string, Person>()
  #peopleByName = new Map<string, Person[]>()
  #companyByDomain = new Map<string, Company>()
  #companyByName = new Map<string, Company>()
  #companyById = new Set<string>()
  #personById = new Set<string>()

  constructor(base: Dataset) {
    this.people = []
    this.companies = []
    for (const c of base.companies) this.#indexCompany(c)
    for (const p of base.people) this.#indexPerson(p)
  }

  findPerson(q: PersonQuery): Person | null {
    if (q.email) {
      const p = this.#personByEmail.get(normalizeEmail(q.email))
      if (p) return p
    }
    if (q.linkedinSlug) {
      const p = this.#personByLinkedin.get(q.linkedinSlug)
      if (p) return p
    }
    if (q.name) {
      const candidates =
        this.#peopleByName.get(`${normalizeName(q.name.first)}|${normalizeName(q.name.last)}`) ?? []
      const company = normalizeName(q.name.company)
      const domain = normalizeDomain(q.name.company)
      const p = candidates.find(
        (c) => normalizeName(c.company.name) === company || c.company.domain === domain,
      )
      if (p) return p
    }
    return null
  }

  findCompany(q: { domain?: string; name?: string }): Company | null {
    if (q.domain) {
      const c = this.#companyByDomain.get(q.domain)
      if (c) return c
    }
    if (q.name) return this.#companyByName.get(normalizeName(q.name)) ?? null
    return null
  }

  companyOf(p: Person): Company | undefined {
    return this.#companyByDomain.get(p.company.domain)
  }

  searchPeople(f: PersonFilters, page: number, perPage: number): Page<Person> {
    const title = f.jobTitle ? normalizeName(f.jobTitle) : null
    const company = f.company ? normalizeName(f.company) : null
    const companyDomain = f.company ? normalizeDomain(f.company) : null
    const industry = f.industry ? normalizeName(f.industry) : null
    const matches = this.people.filter((p) => {
      if (title && !p.jobTitle.toLowerCase().includes(title)) return false
      if (company && p.company.domain !== companyDomain && !p.company.name.toLowerCase().includes(company))
        return false
      if (f.location && !matchesLocation(p.location, f.location)) return false
      if (f.seniority && !f.seniority.includes(p.seniority)) return false
      if (industry || f.companySize) {
        const c = this.companyOf(p)
        if (!c) return false
        if (industry && c.industry.toLowerCase() !== industry) return false
        if (f.companySize && !f.companySize.includes(c.size)) return false
      }
      return true
    })
    return paginate(matches, page, perPage)
  }

  searchCompanies(f: CompanyFilters, page: number, perPage: number): Page<Company> {
    const industry = f.industry ? normalizeName(f.industry) : null
    const name = f.name ? normalizeName(f.name) : null
    const techs = f.technologies?.map((t) => t.toLowerCase())
    const matches = this.companies.filter((c) => {
      if (industry && c.industry.toLowerCase() !== industry) return false
      if (name && !c.name.toLowerCase().includes(name)) return false
      if (f.location && !matchesLocation(c.location, f.location)) return false
      if (f.companySize && !f.companySize.includes(c.size)) return false
      if (techs) {
        const have = new Set(c.technologies.map((t) => t.toLowerCase()))
        if (!techs.every((t) => have.has(t))) return false
      }
      return true
    })
    return paginate(matches, page, perPage)
  }

  /** Why the record cannot be added (an identifier already in use), or null when it can. */
  personConflict(p: Person): string | null {
    if (this.#personById.has(p.id)) return `a person with id ${p.id} already exists`
    for (const e of p.emails)
      if (this.#personByEmail.has(normalizeEmail(e.address))) return `email ${e.address} is already in use`
    const slug = p.socialProfiles.linkedin ? linkedinSlug(p.socialProfiles.linkedin) : null
    if (slug && this.#personByLinkedin.has(slug))
      return `linkedin profile ${p.socialProfiles.linkedin} is already in use`
    return null
  }

  companyConflict(c: Company): string | null {
    if (this.#companyById.has(c.id)) return `a company with id ${c.id} already exists`
    if (this.#companyByDomain.has(c.domain)) return `domain ${c.domain} is already in use`
    if (this.#companyByName.has(normalizeName(c.name))) return `company name ${c.name} is already in use`
    return null
  }

  addPerson(p: Person): void {
    this.#indexPerson(p)
  }

  addCompany(c: Company): void {
    this.#indexCompany(c)
  }

  #indexPerson(p: Person): void {
    this.people.push(p)
    this.#personById.add(p.id)
    for (const e of p.emails) this.#personByEmail.set(normalizeEmail(e.address), p)
    const slug = p.socialProfiles.linkedin ? linkedinSlug(p.socialProfiles.linkedin) : null
    if (slug) this.#personByLinkedin.set(slug, p)
    const key = `${normalizeName(p.firstName)}|${normalizeName(p.lastName)}`
    const list = this.#peopleByName.get(key)
    if (list) list.push(p)
    else this.#peopleByName.set(key, [p])
  }

  #indexCompany(c: Company): void {
    this.companies.push(c)
    this.#companyById.add(c.id)
    this.#companyByDomain.set(c.domain, c)
    this.#companyByName.set(normalizeName(c.name), c)
  }
}

/**
 * A location filter is one or more comma-separated parts ("Berlin", "Texas, United States"); each
 * part must name the record's city, region or country.
 */
function matchesLocation(loc: { city: string; region: string; country: string }, filter: string): boolean {
  const fields = [loc.city, loc.region, loc.country].map((s) => s.toLowerCase())
  return filter
    .split(',')
    .map((s) => normalizeName(s))
    .filter(Boolean)
    .every((part) => fields.includes(part))
}
