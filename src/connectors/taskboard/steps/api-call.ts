import { z } from 'zod'
import { defineStep } from '../../../kit/define.ts'
import { ENDPOINT_MAX_LENGTH, parseEndpointPath } from '../../../kit/endpoint-path.ts'
import { PatchbayError } from '../../../kit/errors.ts'

const authChoice = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('connection').describe('Use the selected connection.') }),
    z.object({
      type: z
        .literal('api_key_token')
        .describe('Use an API key plus token given here (server-to-server use).'),
      key: z.string().min(1).describe('Task-board API key.'),
      token: z.string().min(1).describe('Task-board token for that key.'),
    }),
  ])
  .default({ type: 'connection' })
  .describe('Authentication: the connected account, or an API key plus token. Never echoed back or stored.')

/**
 * A board's or card's page address (`/b/{shortLink}/{slug}`, `/c/{shortLink}/…`, with `.json` as
 * the web pages serve their data) read as the API request that answers the same: the board or
 * card with what its page holds.
 */
const PAGE = /^\/([bc])\/([A-Za-z0-9]{8}|[0-9a-f]{24})(?:\/[^/]*?)?(\.json)?\/?$/
const PAGE_QUERY = {
  b: { lists: 'all', cards: 'all', labels: 'all', members: 'all', checklists: 'all', actions: 'all' },
  c: { attachments: 'true', checklists: 'all', members: 'true', actions: 'all' },
} as const
function pageAddress(path: string): { path: string; query: Record<string, string> } | undefined {
  const m = PAGE.exec(path)
  if (!m) return undefined
  const kind = m[1] as 'b' | 'c'
  return {
    path: `/1/${kind === 'b' ? 'boards' : 'cards'}/${m[2]}`,
    query: m[3] ? { ...PAGE_QUERY[kind] } : {},
  }
}

export const taskboardApiCall = defineStep({
  key: 'api_call',
  name: 'Task-Board API Call',
  description:
    "Sends any request to the task-board API with the connection's credentials (or an API key plus token). The endpoint is a path such as /1/boards/{id}/lists; /1 is added when missing. A board's or card's page address path (/b/{shortLink}/…, /c/{shortLink}/…, also with .json) reads that board or card. Not paced: add delays for high volume.",
  input: z.object({
    auth: authChoice,
    method: z.enum(['GET', 'POST', 'PUT', 'DELETE']).describe('HTTP method.'),
    endpoint: z
      .string()
      .min(1)
      .max(ENDPOINT_MAX_LENGTH)
      .describe('Path below the task-board API base, e.g. /1/cards/{id}.'),
    body: z.record(z.string(), z.unknown()).optional().describe('JSON body for POST and PUT.'),
    query: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
      .optional()
      .describe('Query parameters.'),
  }),
  output: z.object({
    status: z.number().describe('The upstream HTTP status.'),
    body: z.unknown().describe('The upstream response body.'),
  }),
  hints: { readOnly: false, destructive: true, idempotent: false },
  passThrough: true,
  inlineCredentials: (input) =>
    input.auth.type === 'api_key_token' ? { key: input.auth.key, token: input.auth.token } : undefined,
  inlineCredentialsField: 'auth',
  run: async (ctx, input) => {
    const parsed = parseEndpointPath(input.endpoint)
    const page = pageAddress(parsed.path)
    const path = page
      ? page.path
      : parsed.path === '/1' || parsed.path.startsWith('/1/')
        ? parsed.path
        : `/1${parsed.path}`
    const query = { ...page?.query, ...parsed.query, ...input.query }
    for (const k of Object.keys(query)) {
      if (['key', 'token', 'oauth_token', 'oauth_consumer_key'].includes(k.toLowerCase()))
        throw new PatchbayError(
          'CREDENTIALS_IN_REQUEST',
          `The query parameter "${k}" carries credentials and is refused.`,
          {
            hint: 'Credentials come from the connection or the auth field; remove the parameter.',
          },
        )
    }
    const res = await ctx.http.request({
      method: input.method,
      path,
      query,
      body: input.body,
      passRedirects: true,
    })
    return { status: res.status, body: res.data }
  },
})
