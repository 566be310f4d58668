import { z } from 'zod'
import { defineStep } from '../../../kit/define.ts'
import { lookupAll } from '../../../kit/lookup.ts'
import { personLookup } from '../lookups.ts'
import {
  contact,
  contactSummary,
  creditsCharged,
  noCriteria,
  personCriteria,
  personQuery,
  recordError as recordErrorSchema,
  records,
  slimPerson,
  summarizePerson,
  type UpstreamPerson,
} from '../schemas.ts'
import { recordError, throwRecordError } from './outcomes.ts'

const costs =
  "Costs 1 credit per matched contact (2 when a phone number is returned), nothing for a miss; a contact already looked up on this connection recently comes from Patchbay's cache for free (cached: true)."

export const enrichContacts = defineStep({
  key: 'enrich_contacts',
  name: 'Enrich Contacts',
  description: `Adds verified email addresses, phone numbers and professional details (job title, seniority, company, location, social profiles) to contacts you already know something about — one record or many (up to 1,000). Each record needs an email, a LinkedIn profile URL, or firstName + lastName + company. Results come back in the same order; a record with no match has matched: false. ${costs} To discover contacts by job title, industry or location, use Search Contacts (free) first.`,
  input: z.object({
    contacts: records(personQuery, 'contact').describe(
      'The contacts to enrich (1 to 1,000); each identified by email, linkedInUrl, or firstName + lastName + company.',
    ),
  }),
  output: z.object({
    results: z
      .array(
        z.object({
          matched: z.boolean().describe('False when the service knows no such person (no credits charged).'),
          contact: contact.nullable(),
          cached: z
            .boolean()
            .describe('True when served without a new charge (cache, or a lookup already under way).'),
          error: recordErrorSchema,
        }),
      )
      .describe('One result per given contact, in the same order.'),
    matched: z.number().int().describe('How many contacts matched.'),
    notMatched: z.number().int().describe('How many did not (misses and errors).'),
    creditsCharged,
  }),
  hints: { readOnly: false, destructive: false, idempotent: true },
  run: async (ctx, input) => {
    const outcomes = await lookupAll(ctx, personLookup, input.contacts)
    const results = outcomes.map(({ result, cached }) => ({
      matched: Boolean(result.matched && result.person),
      contact: result.matched && result.person ? slimPerson(result.person) : null,
      cached,
      error: recordError(result.error),
    }))
    const matched = results.filter((r) => r.matched).length
    return {
      results,
      matched,
      notMatched: results.length - matched,
      creditsCharged: ctx.credits?.charged ?? 0,
    }
  },
})

export const findContact = defineStep({
  key: 'find_contact',
  name: 'Find Contact',
  description: `Finds one specific person from identifying input — an email address, a LinkedIn profile URL, or firstName + lastName + company — and returns their email addresses, phone numbers and professional details. No match is a normal result (matched: false, contact: null). ${costs} To discover people by criteria (job title, industry, location, company size, seniority) use Search Contacts instead.`,
  input: personQuery,
  output: z.object({
    matched: z.boolean().describe('False when the service knows no such person (no credits charged).'),
    contact: contact.nullable(),
    cached: z.boolean().describe('True when served without a new charge.'),
    creditsCharged,
  }),
  hints: { readOnly: false, destructive: false, idempotent: true },
  run: async (ctx, input) => {
    const [{ result, cached }] = await lookupAll(ctx, personLookup, [input])
    if (result.error) throwRecordError('person', result.error)
    const matched = Boolean(result.matched && result.person)
    return {
      matched,
      contact: matched ? slimPerson(result.person!) : null,
      cached,
      creditsCharged: ctx.credits?.charged ?? 0,
    }
  },
})

export const searchContacts = defineStep({
  key: 'search_contacts',
  name: 'Search Contacts',
  description:
    "Discovers people matching criteria — job title, company, location, industry, company size, seniority — one page at a time. Free: results carry names, titles, companies, locations and LinkedIn URLs but no email addresses or phone numbers (hasEmail / hasPhone say whether enrichment would find them). Pass a result's linkedInUrl (or firstName, lastName and company) to Find Contact or Enrich Contacts for contact details. Give at least one criterion; use page to read further while hasMore is true.",
  input: personCriteria.superRefine((c, ctx) => {
    if (noCriteria(c))
      ctx.addIssue({
        code: 'custom',
        message: 'give at least one search criterion, such as jobTitle or industry',
      })
  }),
  output: z.object({
    total: z.number().int().describe('Matching people in all pages.'),
    page: z.number().int(),
    perPage: z.number().int(),
    hasMore: z.boolean().describe('True when a later page has more results.'),
    results: z.array(contactSummary),
  }),
  hints: { readOnly: true, destructive: false, idempotent: true },
  run: async (ctx, input) => {
    const res = await ctx.http.post<{
      total: number
      page: number
      perPage: number
      results: UpstreamPerson[]
    }>('/person/search', input)
    return {
      total: res.total,
      page: res.page,
      perPage: res.perPage,
      hasMore: res.page * res.perPage < res.total,
      results: res.results.map(summarizePerson),
    }
  },
})
