// Signing of outgoing deliveries per the Standard Webhooks scheme: `webhook-id`,
// `webhook-timestamp` and `webhook-signature: v1,<base64 HMAC-SHA256(key, id.timestamp.body)>`.
// Signed with node:crypto here, on the hot path; receivers (and our SDK and tests) verify with
// the scheme's own `standardwebhooks` library, so a mistake on one side would show.
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto'

const keys = new Map<string, KeyObject>()
/**
 * Keys kept, as many as the agents whose push targets the deliverer keeps (TARGETS_KEPT): with
 * 1,000, the 10,000 agents of the tenancy benchmark made a key for nearly every push.
 */
const KEYS_KEPT = 100_000

/** The HMAC key of a signing secret, made once per secret (deliveries are many more than agents). */
function keyOf(secret: string): KeyObject {
  let key = keys.get(secret)
  if (!key) {
    key = createSecretKey(Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64'))
    if (keys.size >= KEYS_KEPT) keys.clear()
    keys.set(secret, key)
  }
  return key
}

/**
 * The headers of a signed push. Given several secrets (after a rotation, while the previous one is
 * still valid), `webhook-signature` carries one signature of each, space-separated, as the scheme
 * provides: a receiver holding either secret verifies it.
 */
export function signDelivery(
  secrets: string | string[],
  id: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  const content = `${id}.${timestampSeconds}.${body}`
  const signatures = (Array.isArray(secrets) ? secrets : [secrets]).map(
    (secret) => `v1,${createHmac('sha256', keyOf(secret)).update(content).digest('base64')}`,
  )
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signatures.join(' '),
  }
}
