// Reading an upstream's webhook delivery into events, written once for the ingress (a delivery
// as it arrives) and the inbox drain (one kept raw): the connector parses it, then the result is
// checked. A signature proves who sent a delivery, not that its structure is sane: a body nested
// thousands of levels deep cannot be written back as JSON (the stack runs out), and an id that is
// an object cannot be a key. Such a delivery is refused (400) before the upstream gets its 200,
// so it never shares a commit with good ones; the drain sets such a row aside.
import type { IncomingDelivery, NormalizedEvent, WebhookSupport } from '../../../kit/define.ts'

/** What a delivery holds, read and checked. */
export type ReadDelivery =
  | { kind: 'events'; deliveryId: string; events: NormalizedEvent[] }
  /** A handshake (a ping): nothing to record. */
  | { kind: 'ignored'; reason: string }
  /** The connector could not parse it (the reason is the parser's). */
  | { kind: 'unreadable'; reason: string }
  /** Parsed, but its structure is not one that can be stored (deliveryShapeProblem). */
  | { kind: 'unstorable'; problem: string }

/** Parses a delivery with its connector's webhook support, and checks what came out. */
export function readDelivery(hooks: Pick<WebhookSupport, 'parse'>, delivery: IncomingDelivery): ReadDelivery {
  let parsed: ReturnType<WebhookSupport['parse']>
  try {
    parsed = hooks.parse(delivery)
  } catch (err) {
    return { kind: 'unreadable', reason: (err as Error).message }
  }
  if ('ignore' in parsed) return { kind: 'ignored', reason: parsed.ignore }
  const problem = deliveryShapeProblem(parsed)
  if (problem) return { kind: 'unstorable', problem }
  return { kind: 'events', deliveryId: parsed.deliveryId, events: parsed.events }
}

/** Deeper than any upstream's payload (task-board actions ~6, code-host events ~10). */
export const MAX_DEPTH = 64
/** Upstream ids are short (24 hex, a GUID, a number): a longer one is not an id. */
const MAX_ID_LENGTH = 256

/** Why a parsed delivery cannot be stored as it is, or null when it can. */
export function deliveryShapeProblem(parsed: { deliveryId: unknown; events: unknown }): string | null {
  if (!isId(parsed.deliveryId)) return `its delivery id is ${describe(parsed.deliveryId)}, not a string id`
  if (!Array.isArray(parsed.events)) return 'it holds no list of events'
  for (const e of parsed.events as NormalizedEvent[]) {
    if (!isId(e?.id)) return `an event id is ${describe(e?.id)}, not a string id`
    if (typeof e.type !== 'string' || e.type.length > MAX_ID_LENGTH)
      return `the event type is ${describe(e.type)}, not a string`
    if (e.occurredAt !== undefined && e.occurredAt !== null && typeof e.occurredAt !== 'string')
      return `the event time is ${describe(e.occurredAt)}, not a string`
    for (const [k, v] of Object.entries(e.refs ?? {}))
      if (v !== undefined && v !== null && !isId(v)) return `refs.${k} is ${describe(v)}, not a string id`
    if (depthOver(e.data, MAX_DEPTH) !== null) return `its data is nested more than ${MAX_DEPTH} levels deep`
  }
  return null
}

const isId = (v: unknown): v is string => typeof v === 'string' && v !== '' && v.length <= MAX_ID_LENGTH

function describe(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'an array'
  if (typeof v === 'string') return v === '' ? 'empty' : `a string of ${v.length} characters`
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`
}

/**
 * Walks a value without recursion (a hostile value is exactly what would overflow the stack) and
 * answers the depth at which it passes `max`, or null when it stays within.
 */
function depthOver(value: unknown, max: number): number | null {
  const stack: Array<[unknown, number]> = [[value, 0]]
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!
    if (v === null || typeof v !== 'object') continue
    if (depth >= max) return depth
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1])
  }
  return null
}
