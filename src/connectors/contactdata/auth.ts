import { z } from 'zod'
import type { AuthMethod, ClassifiedError, OutgoingRequest } from '../../kit/define.ts'

export const apiKey: AuthMethod = {
  id: 'api_key',
  name: 'API key',
  description:
    "The contact-data account's API key, generated in its account settings under API and integrations. Patchbay checks it with the account endpoint and lists the connection under the account's name.",
  credentials: z.object({
    apiKey: z
      .string()
      .trim()
      .min(1)
      .max(512)
      .describe('The API key (treated as a password; never shown again).'),
  }),
}

/** The key travels in the X-Api-Key header, never in a query string. */
export function authorizeContactdata(req: OutgoingRequest, credentials: Record<string, string>): void {
  req.headers['x-api-key'] = credentials.apiKey
}

/** Out of credits (402) is a condition of its own, with its own remedy. */
export function classifyContactdataError(status: number): ClassifiedError | undefined {
  if (status === 402)
    return {
      code: 'INSUFFICIENT_CREDITS',
      hint: 'The contact-data account has too few credits for this lookup; nothing was charged. Add credits to the account (its billing settings), or use Search Contacts / Search Companies, which are free, meanwhile.',
    }
  return undefined
}

/** `x-credits-charged` and `x-credits-remaining` on every reply. */
export function readCredits(
  headers: Record<string, string>,
): { charged: number; remaining?: number } | undefined {
  const charged = Number(headers['x-credits-charged'])
  if (headers['x-credits-charged'] === undefined || !Number.isFinite(charged)) return undefined
  const remaining = Number(headers['x-credits-remaining'])
  return {
    charged,
    remaining:
      headers['x-credits-remaining'] !== undefined && Number.isFinite(remaining) ? remaining : undefined,
  }
}
