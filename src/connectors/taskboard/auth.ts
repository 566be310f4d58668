import { z } from 'zod'
import type { AuthMethod, OutgoingRequest } from '../../kit/define.ts'

export const apiKeyToken: AuthMethod = {
  id: 'api_key_token',
  name: 'API key plus token',
  description:
    'For server-to-server automation and service accounts: an API key from the task-board extension admin page and a token approved at {auth_url}/1/authorize.',
  credentials: z.object({
    key: z.string().min(1).describe("The extension's API key."),
    token: z.string().min(1).describe('The token approved for that key.'),
    secret: z
      .string()
      .min(1)
      .optional()
      .describe(
        "The API key's secret, shown beside the key. Needed for instant triggers: it verifies webhook deliveries.",
      ),
  }),
}

// Credentials travel in the Authorization header, never in the query string, so they cannot
// leak through logged URLs.
export function authorizeTaskboard(req: OutgoingRequest, credentials: Record<string, string>): void {
  req.headers.authorization = `OAuth oauth_consumer_key="${credentials.key}", oauth_token="${credentials.token}"`
  // The one path that names the token itself (listing the token's webhooks).
  if (req.path.includes('{token}'))
    req.path = req.path.replace('{token}', encodeURIComponent(credentials.token))
}
