import { z } from 'zod'
import { defineStep } from '../../../kit/define.ts'
import { lookupAll } from '../../../kit/lookup.ts'
import { companyLookup } from '../lookups.ts'
import {
  company,
  companyCriteria,
  companyQuery,
  creditsCharged,
  noCriteria,
  recordError as recordErrorSchema,
  records,
  slimCompany,
  type UpstreamCompany,
} from '../schemas.ts'
import { recordError, throwRecordError } from './outcomes.ts'

const costs =
  "Costs 1 credit per matched company, nothing for a miss; a company already looked up on this connection recently comes from Patchbay's cache for free (cached: true)."

export const enrichCompanies = defineStep({
  key: 'enrich_companies',
  name: 'Enrich Companies',
  description: `Adds firmographic data — size and employee count, industry, location, revenue, technologies used, social profiles, founding year — to companies given by domain or name, one or many (up to 1,000). Results come back in the same order; a company with no match has matched: false. ${costs}`,
  input: z.object({
    companies: records(companyQuery, 'company').describe(
      'The companies to enrich (1 to 1,000), each by domain (preferred) or name.',
    ),
  }),
  output: z.object({
    results: z
      .array(
        z.object({
          matched: z.boolean().describe('False when the service knows no such company (no credits charged).'),
          company: company.nullable(),
          cached: z.boolean().describe('True when served without a new charge.'),
          error: recordErrorSchema,
        }),
      )
      .describe('One result per given company, in the same order.'),
    matched: z.number().int(),
    notMatched: z.number().int(),
    creditsCharged,
  }),
  hints: { readOnly: false, destructive: false, idempotent: true },
  run: async (ctx, input) => {
    const outcomes = await lookupAll(ctx, companyLookup, input.companies)
    const results = outcomes.map(({ result, cached }) => ({
      matched: Boolean(result.matched && result.company),
      company: result.matched && result.company ? slimCompany(result.company) : null,
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

export const findCompany = defineStep({
  key: 'find_company',
  name: 'Find Company',
  description: `Finds one specific company by its domain (such as acme.com, or a website URL) or its name, and returns its firmographic data: size, employee count, industry, location, revenue, technologies, social profiles. No match is a normal result (matched: false, company: null). ${costs} To discover companies by industry, location, size or technologies use Search Companies instead.`,
  input: companyQuery,
  output: z.object({
    matched: z.boolean().describe('False when the service knows no such company (no credits charged).'),
    company: company.nullable(),
    cached: z.boolean().describe('True when served without a new charge.'),
    creditsCharged,
  }),
  hints: { readOnly: false, destructive: false, idempotent: true },
  run: async (ctx, input) => {
    const [{ result, cached }] = await lookupAll(ctx, companyLookup, [input])
    if (result.error) throwRecordError('company', result.error)
    const matched = Boolean(result.matched && result.company)
    return {
      matched,
      company: matched ? slimCompany(result.company!) : null,
      cached,
      creditsCharged: ctx.credits?.charged ?? 0,
    }
  },
})

export const searchCompanies = defineStep({
  key: 'search_companies',
  name: 'Search Companies',
  description:
    'Discovers companies matching criteria — industry, location, company size, technologies used, part of the name — one page at a time, with their firmographic data. Free. Give at least one criterion; use page to read further while hasMore is true. To find the people at a company, use Search Contacts with its domain as company.',
  input: companyCriteria.superRefine((c, ctx) => {
    if (noCriteria(c))
      ctx.addIssue({
        code: 'custom',
        message: 'give at least one search criterion, such as industry or location',
      })
  }),
  output: z.object({
    total: z.number().int().describe('Matching companies in all pages.'),
    page: z.number().int(),
    perPage: z.number().int(),
    hasMore: z.boolean().describe('True when a later page has more results.'),
    results: z.array(company),
  }),
  hints: { readOnly: true, destructive: false, idempotent: true },
  run: async (ctx, input) => {
    const res = await ctx.http.post<{
      total: number
      page: number
      perPage: number
      results: UpstreamCompany[]
    }>('/company/search', input)
    return {
      total: res.total,
      page: res.page,
      perPage: res.perPage,
      hasMore: res.page * res.perPage < res.total,
      results: res.results.map(slimCompany),
    }
  },
})
