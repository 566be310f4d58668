// Verifying Patchbay's pushed deliveries: each is signed with the agent's secret (whsec_…) per
// Standard Webhooks, and checked here with that scheme's own library.
import { Webhook } from 'standardwebhooks'
import type { webhooks } from './api-schema.ts'

/** The body of the `delivery` webhook in the API contract (engine/events/payload.ts is its one schema). */
type ContractPayload = webhooks['delivery']['post'] extends infer Op
  ? Op extends { requestBody: { content: { 'application/json': infer P } } }
    ? P
    : never
  : never

/**
 * The JSON an agent receives, the same pushed, streamed or replayed: the contract's
 * `DeliveryPayload`, with the event's `data` typed as `Data` when the trigger is known.
 */
export type DeliveryPayload<Data = unknown> = Omit<ContractPayload, 'data'> & {
  data: Omit<ContractPayload['data'], 'event'> & {
    event: Omit<ContractPayload['data']['event'], 'data'> & { data: Data }
  }
}

export class DeliveryVerificationError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'DeliveryVerificationError'
  }
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>

/**
 * Checks a delivery's signature and age (5 minutes either way) and returns its payload. Give the
 * body exactly as received (the raw text, not re-serialized JSON). Throws DeliveryVerificationError.
 */
export function verifyDelivery<Data = unknown>(
  secret: string,
  body: string | Buffer,
  headers: HeaderBag,
): DeliveryPayload<Data> {
  const flat: Record<string, string> = {}
  const entries = headers instanceof Headers ? [...headers.entries()] : Object.entries(headers)
  for (const [k, v] of entries) {
    const value = Array.isArray(v) ? v[0] : v
    if (value !== undefined) flat[k.toLowerCase()] = value
  }
  try {
    return new Webhook(secret).verify(body, flat) as DeliveryPayload<Data>
  } catch (err) {
    throw new DeliveryVerificationError(`The delivery could not be verified: ${(err as Error).message}`)
  }
}
