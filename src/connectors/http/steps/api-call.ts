import { z } from 'zod'
import { defineStep } from '../../../kit/define.ts'
import { ENDPOINT_MAX_LENGTH, parseEndpointPath } from '../../../kit/endpoint-path.ts'
import { checkCallerHeaders } from '../../../kit/request-headers.ts'

/** Response headers handed back: not cookies (they are the upstream's session, not the agent's). */
const DROPPED = new Set(['set-cookie', 'set-cookie2', 'www-authenticate', 'proxy-authenticate'])

export const httpApiCall = defineStep({
  key: 'api_call',
  name: 'HTTP API Call',
  description:
    "Sends a request to the connection's API (its base address, e.g. a self-hosted code-host's https://host/api/v3) with the connection's authentication applied automatically: method, endpoint (a path below the base address, with an optional query), query parameters, headers and a JSON body. Redirects are not followed. Not paced: add delays for high volume.",
  input: z.object({
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']).describe('HTTP method.'),
    endpoint: z
      .string()
      .min(1)
      .max(ENDPOINT_MAX_LENGTH)
      .describe('Path below the base address, e.g. /repos/acme/api/issues?state=open. Never a full URL.'),
    query: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
      .optional()
      .describe('Query parameters (added to those in the endpoint).'),
    headers: z
      .record(z.string(), z.string().max(8192))
      .default({})
      .describe('Request headers, e.g. {"accept": "application/vnd.codehost+json"}. Never credentials.'),
    body: z
      .unknown()
      .optional()
      .describe('JSON body for POST, PUT, PATCH (and DELETE when the API takes one).'),
  }),
  output: z.object({
    status: z.number().describe('The HTTP status.'),
    headers: z.record(z.string(), z.string()),
    body: z.unknown().describe('The response body (JSON when it is JSON, else text).'),
  }),
  hints: { readOnly: false, destructive: true, idempotent: false },
  passThrough: true,
  run: async (ctx, input) => {
    const headers = checkCallerHeaders(input.headers)
    const parsed = parseEndpointPath(input.endpoint)
    const res = await ctx.http.request({
      passRedirects: true,
      method: input.method,
      path: parsed.path,
      query: { ...parsed.query, ...input.query },
      headers,
      body: input.body,
    })
    const out: Record<string, string> = {}
    for (const [k, v] of Object.entries(res.headers)) if (!DROPPED.has(k)) out[k] = v
    return { status: res.status, headers: out, body: res.data }
  },
})
