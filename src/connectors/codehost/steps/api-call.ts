import { z } from 'zod'
import { defineStep } from '../../../kit/define.ts'
import { parseEndpointPath } from '../../../kit/endpoint-path.ts'
import { PatchbayError } from '../../../kit/errors.ts'
import { checkCallerHeaders } from '../../../kit/request-headers.ts'
import { CODEHOST_MEDIA_TYPE } from '../auth.ts'

/** application/vnd.codehost+json, or one of its variants (…codehost.raw+json, …codehost.star+json). */
const VENDOR_TYPE = /(^|,)\s*application\/vnd\.codehost(\.[a-z0-9-]+)?\+json\s*(;[^,]*)?(?=,|$)/i

/** Response headers worth handing back: pagination, rate limits, where a new thing lives. */
const KEPT = /^(link|location|etag|x-ratelimit-.*|retry-after|x-oauth-scopes|x-accepted-oauth-scopes)$/

export const codehostApiCall = defineStep({
  key: 'api_call',
  name: 'Code-Host API Call',
  description:
    'Sends any request to the code-host API as the connected account: method, endpoint (a path such as /repos/{owner}/{repo}/issues?state=open), headers and a JSON body. The header accept: application/vnd.codehost+json is required. Not paced: add delays for high volume; a spent rate limit comes back as RATE_LIMITED with retryAfterMs. For an agent, the path must name a repository in its scope (/repos/{owner}/{repo}/…).',
  input: z.object({
    method: z.enum(['GET', 'POST', 'PUT', 'DELETE', 'PATCH']).describe('HTTP method.'),
    endpoint: z
      .string()
      .min(1)
      .max(4096)
      .describe(
        'Path below the code-host API base, with its query, e.g. /repos/octo-demo/hello-world/pulls?state=open.',
      ),
    headers: z
      .record(z.string(), z.string().max(8192))
      .default({})
      .describe(
        'Request headers; must include "accept": "application/vnd.codehost+json". Never authorization.',
      )
      // Forms start from this, so a first call from the dashboard already carries the header.
      .meta({ examples: [{ accept: 'application/vnd.codehost+json' }] }),
    body: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('JSON body for POST, PUT, PATCH (and DELETE when the endpoint takes one).'),
  }),
  output: z.object({
    status: z.number().describe('The upstream HTTP status.'),
    headers: z
      .record(z.string(), z.string())
      .describe('Link (pagination), x-ratelimit-*, location and etag.'),
    body: z.unknown().describe('The upstream response body.'),
  }),
  hints: { readOnly: false, destructive: true, idempotent: false },
  passThrough: true,
  run: async (ctx, input) => {
    const headers = checkCallerHeaders(input.headers)
    const accept = headers.accept
    if (!accept || !VENDOR_TYPE.test(accept))
      throw new PatchbayError(
        'ACCEPT_HEADER_REQUIRED',
        `Please enter a value for 'response_body' field. The Code-Host API Call needs the header accept: ${CODEHOST_MEDIA_TYPE} (the code-host's media type), and ${accept ? `the request had accept: ${accept}` : 'the request had no accept header'}; nothing was sent.`,
        { hint: `Add "accept": "${CODEHOST_MEDIA_TYPE}" to headers and run the step again.` },
      )
    const parsed = parseEndpointPath(input.endpoint)
    if (Object.keys(parsed.query).some((k) => ['access_token', 'client_secret'].includes(k.toLowerCase())))
      throw new PatchbayError(
        'CREDENTIALS_IN_REQUEST',
        'The endpoint query carries credentials (access_token or client_secret) and is refused.',
        {
          hint: 'Credentials come from the connection; remove the parameter.',
        },
      )
    const res = await ctx.http.request({
      passRedirects: true,
      method: input.method,
      path: parsed.path,
      query: parsed.query,
      headers,
      body: input.body,
    })
    const kept: Record<string, string> = {}
    for (const [k, v] of Object.entries(res.headers)) if (KEPT.test(k)) kept[k] = v
    return { status: res.status, headers: kept, body: res.data }
  },
})
