import { defineConnector } from '../../kit/define.ts'
import { apiKey, authorizeContactdata, classifyContactdataError, readCredits } from './auth.ts'
import { contactdataApiCall } from './steps/api-call.ts'
import { enrichCompanies, findCompany, searchCompanies } from './steps/companies.ts'
import { enrichContacts, findContact, searchContacts } from './steps/people.ts'

export const contactdata = defineConnector({
  id: 'contactdata',
  name: 'Contact-Data',
  aliases: ['contact-data', 'contact data', 'enrichment'],
  description:
    'Enrichment and search of people (contacts) and companies for B2B sales: verified emails, phone numbers, professional and firmographic details. Lookups cost credits; search is free. Beta.',
  beta: true,
  auth: [apiKey],
  // The upstream's default plan allows 60 requests a minute; set a connection's own limit for
  // other plans (PUT /v1/connections/{id}/rate-limit).
  pacing: { points: 60, durationMs: 60_000 },
  authorize: authorizeContactdata,
  identify: async (http) => {
    const account = await http.get<{ name: string }>('/account')
    // The account has no other id; reconnecting with a new key of the same account keeps the connection.
    return { accountName: account.name, accountId: account.name }
  },
  classifyError: classifyContactdataError,
  metering: { read: readCredits },
  lookups: { cacheTtlMs: 24 * 60 * 60 * 1000, cacheMaxEntries: 10_000, coalesceWindowMs: 5 },
  steps: [
    enrichContacts,
    findContact,
    searchContacts,
    enrichCompanies,
    findCompany,
    searchCompanies,
    contactdataApiCall,
  ],
  triggers: [],
})
