// The dashboard's only way to Patchbay: the REST API under /v1, as a signed-in person (the session
// cookie, its CSRF token on every write, and the chosen workspace in Patchbay-Workspace) or with a
// workspace key as a Bearer token (for automation).
import type { ApiErrorCode as ContractErrorCode } from '../../src/sdk/errors.ts'

const KEY_STORAGE = 'patchbay.key'
const SESSION_STORAGE = 'patchbay.session'

/** A signed-in person's tab: the session's CSRF token and the workspace chosen. */
export interface PersonSession {
  csrfToken: string
  workspaceId: string | null
}

export function storedSession(): PersonSession | null {
  const raw = sessionStorage.getItem(SESSION_STORAGE)
  return raw ? (JSON.parse(raw) as PersonSession) : null
}

export function storeSession(s: PersonSession | null): void {
  if (s) {
    sessionStorage.setItem(SESSION_STORAGE, JSON.stringify(s))
    // The workspace chosen last is kept for the next sign-in too.
    if (s.workspaceId) localStorage.setItem('patchbay.workspace', s.workspaceId)
  } else sessionStorage.removeItem(SESSION_STORAGE)
}

/** The workspace chosen last in this browser (a preference, not a secret). */
export const lastWorkspace = (): string | null => localStorage.getItem('patchbay.workspace')

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY_STORAGE)
}

export function storeKey(key: string | null): void {
  if (key) sessionStorage.setItem(KEY_STORAGE, key)
  else sessionStorage.removeItem(KEY_STORAGE)
}

/**
 * A code of the API's error registry (from the API contract, as the SDK's), HTTP_<status> for an
 * answer that is not the API's, or one the dashboard gives for what happens on its side: the
 * service could not be reached, a sign-in pop-up was blocked or closed.
 */
export type ApiErrorCode = ContractErrorCode | 'NETWORK_ERROR' | 'POPUP_BLOCKED' | 'POPUP_CLOSED'

/** The API's one error body, `{"error":{"code","message","hint"?,…}}`, as a thrown value. */
export class ApiError extends Error {
  readonly status: number
  readonly code: ApiErrorCode
  readonly hint?: string
  readonly retryAfterMs?: number
  readonly details?: unknown
  readonly upstream?: { status: number; body?: string }

  constructor(
    status: number,
    body: {
      code?: ApiErrorCode
      message?: string
      hint?: string
      retryAfterMs?: number
      details?: unknown
      upstream?: { status: number; body?: string }
    },
  ) {
    super(body.message ?? `The request failed with status ${status}.`)
    this.status = status
    this.code = body.code ?? `HTTP_${status}`
    this.hint = body.hint
    this.retryAfterMs = body.retryAfterMs
    this.details = body.details
    this.upstream = body.upstream
  }
}

let onUnauthorized: (() => void) | null = null

/** Called when the stored key is refused (401), so the app can ask for a key again. */
export function setUnauthorizedHandler(fn: (() => void) | null): void {
  onUnauthorized = fn
}

export type Query = Record<string, string | number | boolean | undefined | null>

export function withQuery(path: string, query?: Query): string {
  if (!query) return path
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries(query))
    if (v !== undefined && v !== null && v !== '') params.set(k, String(v))
  const s = params.toString()
  return s ? `${path}?${s}` : path
}

export async function api<T = any>(
  method: string,
  path: string,
  body?: unknown,
  opts: { key?: string; query?: Query; signal?: AbortSignal } = {},
): Promise<T> {
  const key = opts.key ?? storedKey()
  const headers: Record<string, string> = { accept: 'application/json' }
  if (key) headers.authorization = `Bearer ${key}`
  else {
    const session = storedSession()
    if (session) {
      if (method !== 'GET') headers['x-csrf-token'] = session.csrfToken
      if (session.workspaceId) headers['patchbay-workspace'] = session.workspaceId
    }
  }
  if (body !== undefined) headers['content-type'] = 'application/json'
  let res: Response
  try {
    res = await fetch(withQuery(path, opts.query), {
      method,
      headers,
      body: body !== undefined ? JSON.stringify(body) : undefined,
      signal: opts.signal,
      credentials: 'same-origin',
    })
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err
    throw new ApiError(0, {
      code: 'NETWORK_ERROR',
      message: 'Patchbay could not be reached.',
      hint: 'Check that the service is running, then try again.',
    })
  }
  const text = await res.text()
  let parsed: any = null
  if (text) {
    try {
      parsed = JSON.parse(text)
    } catch {
      parsed = null
    }
  }
  if (!res.ok) {
    if (res.status === 401 && opts.key === undefined) onUnauthorized?.()
    throw new ApiError(res.status, parsed?.error ?? { message: text || res.statusText })
  }
  return parsed as T
}

export const get = <T = any>(path: string, query?: Query, signal?: AbortSignal) =>
  api<T>('GET', path, undefined, { query, signal })

/**
 * A whole list: its pages one after another (`cursor` the previous page's `next`, until it is
 * null), as one answer `{ [items]: all of them }`.
 */
export async function getAll<K extends string, T>(
  path: string,
  items: K,
  query: Query = {},
  signal?: AbortSignal,
): Promise<Record<K, T[]>> {
  const all: T[] = []
  for (let cursor: string | undefined; ; ) {
    const page = await get<Record<K, T[]> & { next: string | null }>(
      path,
      { ...query, limit: 200, cursor },
      signal,
    )
    all.push(...page[items])
    if (!page.next) return { [items]: all } as Record<K, T[]>
    cursor = page.next
  }
}
export const post = <T = any>(path: string, body: unknown = {}) => api<T>('POST', path, body)
export const patch = <T = any>(path: string, body: unknown) => api<T>('PATCH', path, body)
export const put = <T = any>(path: string, body: unknown) => api<T>('PUT', path, body)
export const del = <T = any>(path: string) => api<T>('DELETE', path)

export const enc = encodeURIComponent
