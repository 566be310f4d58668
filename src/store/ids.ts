import { randomBytes } from 'node:crypto'

/** A prefixed random identifier: `con_3kq9…`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`
}

export const nowIso = () => new Date().toISOString()

export const isoAt = (ms: number) => new Date(ms).toISOString()
