// Reading the request bodies of the API. Each reader returns the parsed request or the message of
// the 422 `invalid_request` answer, written the way an API user needs to fix the call.
import {
  type CompanyFilters,
  linkedinSlug,
  normalizeDomain,
  type PersonFilters,
  type PersonQuery,
} from './directory.ts'
import { COMPANY_SIZES } from './records.ts'
import { SENIORITIES } from './wordlists.ts'

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string }

export const MAX_BULK = 100
export const MAX_PER_PAGE = 100
export const DEFAULT_PER_PAGE = 25

const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function fail<T>(message: string): Parsed<T> {
  return { ok: false, message }
}

/** Reads optional string fields; blank strings count as absent, as form-filled bodies send them. */
function strings<K extends string>(
  body: Record<string, unknown>,
  keys: readonly K[],
): Parsed<Partial<Record<K, string>>> {
  const out: Partial<Record<K, string>> = {}
  for (const k of keys) {
    const v = body[k]
    if (v === undefined || v === null) continue
    if (typeof v !== 'string') return fail(`\`${k}\` must be a string`)
    if (v.trim() !== '') out[k] = v.trim()
  }
  return { ok: true, value: out }
}

export function parsePersonRequest(body: unknown): Parsed<PersonQuery> {
  if (!isObject(body)) return fail('The body must be a JSON object')
  const s = strings(body, ['email', 'linkedInUrl', 'firstName', 'lastName', 'company'] as const)
  if (!s.ok) return s
  const { email, linkedInUrl, firstName, lastName, company } = s.value
  const q: PersonQuery = {}
  if (email !== undefined) {
    if (!EMAIL_RE.test(email)) return fail(`\`email\` is not a valid email address: ${email}`)
    q.email = email
  }
  if (linkedInUrl !== undefined) {
    const slug = linkedinSlug(linkedInUrl)
    if (!slug)
      return fail('`linkedInUrl` must be a LinkedIn profile URL, like https://www.linkedin.com/in/jane-doe')
    q.linkedinSlug = slug
  }
  const nameParts = [firstName, lastName, company].filter((v) => v !== undefined).length
  if (nameParts === 3) q.name = { first: firstName!, last: lastName!, company: company! }
  else if (nameParts > 0 && !q.email && !q.linkedinSlug)
    return fail('Matching by name needs all of `firstName`, `lastName` and `company`')
  if (!q.email && !q.linkedinSlug && !q.name)
    return fail('Provide one of: `email`; `linkedInUrl`; `firstName` with `lastName` and `company`')
  return { ok: true, value: q }
}

export function parseCompanyRequest(body: unknown): Parsed<{ domain?: string; name?: string }> {
  if (!isObject(body)) return fail('The body must be a JSON object')
  const s = strings(body, ['domain', 'name'] as const)
  if (!s.ok) return s
  const q: { domain?: string; name?: string } = {}
  if (s.value.domain !== undefined) {
    const domain = normalizeDomain(s.value.domain)
    if (!domain) return fail(`\`domain\` is not a valid domain: ${s.value.domain}`)
    q.domain = domain
  }
  if (s.value.name !== undefined) q.name = s.value.name
  if (!q.domain && !q.name) return fail('Provide `domain` or `name`')
  return { ok: true, value: q }
}

export function parseBulk(body: unknown): Parsed<unknown[]> {
  if (!Array.isArray(body)) return fail('The body must be a JSON array of request objects')
  if (body.length === 0) return fail('The array must hold at least 1 request')
  if (body.length > MAX_BULK)
    return fail(`The array holds ${body.length} requests; at most ${MAX_BULK} are allowed`)
  return { ok: true, value: body }
}

/** A filter given as one value or a list of values, each one of `allowed`. */
function oneOrMany(
  body: Record<string, unknown>,
  key: string,
  allowed: readonly string[] | null,
): Parsed<string[] | undefined> {
  const v = body[key]
  if (v === undefined || v === null) return { ok: true, value: undefined }
  const list = Array.isArray(v) ? v : [v]
  if (list.length === 0) return { ok: true, value: undefined }
  for (const item of list) {
    if (typeof item !== 'string') return fail(`\`${key}\` must be a string or an array of strings`)
    if (allowed && !allowed.includes(item)) return fail(`\`${key}\` must be one of: ${allowed.join(', ')}`)
  }
  return { ok: true, value: list as string[] }
}

function paging(body: Record<string, unknown>): Parsed<{ page: number; perPage: number }> {
  const page = body.page ?? 1
  const perPage = body.perPage ?? DEFAULT_PER_PAGE
  if (typeof page !== 'number' || !Number.isInteger(page) || page < 1)
    return fail('`page` must be an integer of 1 or more')
  if (typeof perPage !== 'number' || !Number.isInteger(perPage) || perPage < 1 || perPage > MAX_PER_PAGE)
    return fail(`\`perPage\` must be an integer from 1 to ${MAX_PER_PAGE}`)
  return { ok: true, value: { page, perPage } }
}

export type SearchRequest<F> = { filters: F; page: number; perPage: number }

function searchBody(body: unknown): Parsed<Record<string, unknown>> {
  // An empty body is a search with no filters, the first page of everything.
  if (body === undefined) return { ok: true, value: {} }
  if (!isObject(body)) return fail('The body must be a JSON object')
  return { ok: true, value: body }
}

export function parsePersonSearch(raw: unknown): Parsed<SearchRequest<PersonFilters>> {
  const b = searchBody(raw)
  if (!b.ok) return b
  const body = b.value
  const s = strings(body, ['jobTitle', 'company', 'location', 'industry'] as const)
  if (!s.ok) return s
  const size = oneOrMany(body, 'companySize', COMPANY_SIZES)
  if (!size.ok) return size
  const seniority = oneOrMany(body, 'seniority', SENIORITIES)
  if (!seniority.ok) return seniority
  const p = paging(body)
  if (!p.ok) return p
  return {
    ok: true,
    value: { filters: { ...s.value, companySize: size.value, seniority: seniority.value }, ...p.value },
  }
}

export function parseCompanySearch(raw: unknown): Parsed<SearchRequest<CompanyFilters>> {
  const b = searchBody(raw)
  if (!b.ok) return b
  const body = b.value
  const s = strings(body, ['industry', 'location', 'name'] as const)
  if (!s.ok) return s
  const size = oneOrMany(body, 'companySize', COMPANY_SIZES)
  if (!size.ok) return size
  const technologies = oneOrMany(body, 'technologies', null)
  if (!technologies.ok) return technologies
  const p = paging(body)
  if (!p.ok) return p
  return {
    ok: true,
    value: { filters: { ...s.value, companySize: size.value, technologies: technologies.value }, ...p.value },
  }
}
