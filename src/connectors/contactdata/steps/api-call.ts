import { z } from 'zod'
import { defineStep } from '../../../kit/define.ts'
import { parseEndpointPath } from '../../../kit/endpoint-path.ts'
import { PatchbayError } from '../../../kit/errors.ts'
import { worstCaseCredits } from '../lookups.ts'

export const contactdataApiCall = defineStep({
  key: 'api_call',
  name: 'Contact-Data API Call',
  description:
    "Sends any request to the contact-data API with the connected account's API key: a method (GET or POST), an endpoint path such as /person, /company/bulk or /account, and a JSON body. Lookups sent this way cost credits as usual and count against the agent's credit budget at their worst case, but bypass Patchbay's cache and coalescing; prefer the ready-made steps. Not paced.",
  input: z.object({
    method: z.enum(['GET', 'POST']).describe('HTTP method.'),
    endpoint: z
      .string()
      .min(1)
      .max(2000)
      .describe(
        'Path below the contact-data API base, such as /person or /account; query parameters may follow ?.',
      ),
    body: z
      .union([z.record(z.string(), z.unknown()), z.array(z.unknown())])
      .optional()
      .describe('JSON body for POST: an object, or an array for the bulk endpoints.'),
  }),
  output: z.object({
    status: z.number().describe('The upstream HTTP status.'),
    body: z.unknown().describe('The upstream response body.'),
    creditsCharged: z.number().int().describe('Credits the upstream charged for this request.'),
  }),
  hints: { readOnly: false, destructive: false, idempotent: false },
  passThrough: true,
  run: async (ctx, input) => {
    const { path, segments, query } = parseEndpointPath(input.endpoint)
    for (const k of Object.keys(query))
      if (/^(x[-_])?api[-_]?key$|^key$/i.test(k))
        throw new PatchbayError(
          'CREDENTIALS_IN_REQUEST',
          `The query parameter "${k}" carries credentials and is refused.`,
          {
            hint: 'The API key comes from the connection; remove the parameter.',
          },
        )
    const body = input.method === 'POST' ? input.body : undefined
    const release = (await ctx.credits?.reserve(worstCaseCredits(input.method, segments, body))) ?? (() => {})
    try {
      const res = await ctx.http.request({ method: input.method, path, query, body, passRedirects: true })
      return { status: res.status, body: res.data, creditsCharged: ctx.credits?.charged ?? 0 }
    } finally {
      release()
    }
  },
})
