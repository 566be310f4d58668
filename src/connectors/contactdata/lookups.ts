// The two lookups the contact-data service charges for, as data: single and bulk endpoints, what
// makes two lookups the same, and what each costs (a person 1, or 2 with a phone; a company 1;
// a miss 0). The engine runs them through the connection's cache and batcher.
import { defineLookup } from '../../kit/lookup.ts'
import {
  BULK_MAX,
  type CompanyQuery,
  type CompanyResult,
  companyKey,
  type PersonQuery,
  type PersonResult,
  personKey,
} from './schemas.ts'

export const personLookup = defineLookup<PersonQuery, PersonResult>({
  key: 'person',
  maxSize: BULK_MAX,
  sendOne: (http, q) => http.request({ method: 'POST', path: '/person', body: q }),
  sendMany: (http, qs) => http.request({ method: 'POST', path: '/person/bulk', body: qs }),
  cacheKey: personKey,
  // A person is also the answer to a lookup by any of their emails or their profile URL.
  resultKeys: (r) =>
    r.person
      ? [
          ...(r.person.emails ?? []).map((e) => personKey({ email: e.address })),
          ...(r.person.socialProfiles?.linkedin
            ? [personKey({ linkedInUrl: r.person.socialProfiles.linkedin })]
            : []),
        ]
      : [],
  cacheable: (r) => !r.error,
  worstCaseCredits: () => 2,
  creditsOf: (r) => (r.matched && r.person ? ((r.person.phones?.length ?? 0) > 0 ? 2 : 1) : 0),
})

export const companyLookup = defineLookup<CompanyQuery, CompanyResult>({
  key: 'company',
  maxSize: BULK_MAX,
  sendOne: (http, q) => http.request({ method: 'POST', path: '/company', body: q }),
  sendMany: (http, qs) => http.request({ method: 'POST', path: '/company/bulk', body: qs }),
  cacheKey: companyKey,
  // A company found by name is also the answer to a lookup by its domain.
  resultKeys: (r) => (r.company?.domain ? [companyKey({ domain: r.company.domain })] : []),
  cacheable: (r) => !r.error,
  worstCaseCredits: () => 1,
  creditsOf: (r) => (r.matched && r.company ? 1 : 0),
})

/**
 * The most a request sent through the API Call step can cost, held against the caller's budget.
 * `segments` are the endpoint's decoded path segments (kit/endpoint-path.ts), compared without
 * regard to case, so no spelling of /person costs less than /person.
 */
export function worstCaseCredits(method: string, segments: readonly string[], body: unknown): number {
  if (method.toUpperCase() !== 'POST') return 0
  const n = Array.isArray(body) ? Math.min(body.length, BULK_MAX) : 0
  switch (`/${segments.join('/').toLowerCase()}`) {
    case '/person':
      return 2
    case '/company':
      return 1
    case '/person/bulk':
      return 2 * n
    case '/company/bulk':
      return n
    default:
      return 0
  }
}
