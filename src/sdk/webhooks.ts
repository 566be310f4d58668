// Verifying Patchbay's pushed deliveries: each is signed with the agent's secret (whsec_…) per
// Standard Webhooks, and checked here with that scheme's own library.
import { Webhook } from 'standardwebhooks'

/** The JSON an agent receives, the same pushed, streamed or replayed. */
export interface DeliveryPayload<Data = unknown> {
  /** The delivery id (also the webhook-id header): deduplicate by it. */
  id: string
  /** The trigger's catalog id, e.g. `taskboard.new_card`. */
  type: string
  timestamp: string
  data: {
    agentId: string
    triggerId: string
    trigger: string | null
    event: {
      id: string
      connector: string
      type: string
      upstreamId: string
      occurredAt: string
      refs: { board?: string; list?: string; card?: string; repository?: string; account?: string }
      data: Data
    }
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
