// Identifiers in the code-host's formats. Node ids encode their kind and database id so that
// GraphQL `node(id:)` can find the object again without an index.
import { createHash } from 'node:crypto'
import type { Rng } from '../common/rng.ts'

export function nodeId(prefix: string, id: number | string): string {
  return `${prefix}_${Buffer.from(`${prefix}:${id}`).toString('base64url')}`
}

export function parseNodeId(value: string): { prefix: string; id: string } | null {
  const cut = value.indexOf('_')
  if (cut < 1) return null
  const prefix = value.slice(0, cut)
  let decoded: string
  try {
    decoded = Buffer.from(value.slice(cut + 1), 'base64url').toString('utf8')
  } catch {
    return null
  }
  if (!decoded.startsWith(`${prefix}:`)) return null
  return { prefix, id: decoded.slice(prefix.length + 1) }
}

export function sha1(text: string | Buffer): string {
  return createHash('sha1').update(text).digest('hex')
}

export const ZERO_SHA = '0000000000000000000000000000000000000000'

export function classicToken(rng: Rng): string {
  return `chp_${rng.alnum(36)}`
}

export function oauthToken(rng: Rng): string {
  return `cho_${rng.alnum(36)}`
}

export function fineGrainedToken(rng: Rng): string {
  return `codehost_pat_${rng.alnum(22)}_${rng.alnum(59)}`
}

export function guid(rng: Rng): string {
  const h = rng.hex(32)
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`
}
