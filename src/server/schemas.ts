// Schemas of the REST API's own bodies; the OpenAPI document is generated from these.
import { z } from 'zod'
import { ERROR_CODE_LIST } from '../kit/error-codes.ts'

export const ErrorBody = z
  .object({
    error: z.object({
      code: z
        .enum(ERROR_CODE_LIST)
        .describe('Stable, machine-readable error code (the README lists what each means).'),
      message: z.string().describe('What was wrong.'),
      hint: z.string().optional().describe('What to do about it.'),
      retryAfterMs: z.number().optional().describe('When to retry, for RATE_LIMITED.'),
      upstream: z.object({ status: z.number(), body: z.string().optional() }).optional(),
      details: z.unknown().optional(),
    }),
  })
  .describe('The one error body of the API.')

export const errorResponses = {
  400: ErrorBody,
  401: ErrorBody,
  402: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
  429: ErrorBody,
  502: ErrorBody,
  504: ErrorBody,
}

export const ConnectionView = z.object({
  id: z.string(),
  connector: z.string(),
  authMethod: z.string(),
  accountName: z.string().describe('The upstream account the connection is shown under.'),
  accountId: z.string(),
  status: z.enum(['active', 'lapsed']),
  statusReason: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  details: z
    .record(z.string(), z.string())
    .describe(
      "What tells it apart from the account's other connections: a code-host token's kind and reach.",
    ),
})
