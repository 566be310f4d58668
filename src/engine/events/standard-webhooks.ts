// Signing of outgoing deliveries per the Standard Webhooks scheme: `webhook-id`,
// `webhook-timestamp` and `webhook-signature: v1,<base64 HMAC-SHA256(key, id.timestamp.body)>`.
// Signed with node:crypto here, on the hot path; receivers (and our SDK and tests) verify with
// the scheme's own `standardwebhooks` library, so a mistake on one side would show.
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto'

const keys = new Map<string, KeyObject>()

/** The HMAC key of a signing secret, made once per secret (agents are few, deliveries many). */
function keyOf(secret: string): KeyObject {
  let key = keys.get(secret)
  if (!key) {
    key = createSecretKey(Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64'))
    if (keys.size > 1000) keys.clear()
    keys.set(secret, key)
  }
  return key
}

export function signDelivery(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  const key = keyOf(secret)
  const signature = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': `v1,${signature}`,
  }
}
