// Small building blocks shared by the pages.

import { type ReactNode, useCallback, useEffect, useId, useRef, useState } from 'react'
import { ERROR_CODES, type ErrorCodeDefinition } from '../../src/kit/error-codes.ts'
import { ApiError, type ApiErrorCode, enc, get } from './api.ts'
import type { Job } from './types.ts'

/** Loads data on mount and when `deps` change; `reload` fetches again. */
export function useLoad<T>(
  load: (signal: AbortSignal) => Promise<T>,
  deps: unknown[],
): { data: T | undefined; error: unknown; loading: boolean; reload: () => Promise<void> } {
  const [data, setData] = useState<T>()
  const [error, setError] = useState<unknown>(null)
  const [loading, setLoading] = useState(true)
  const loadRef = useRef(load)
  loadRef.current = load
  const controller = useRef<AbortController | null>(null)

  const reload = useCallback(async () => {
    controller.current?.abort()
    const c = new AbortController()
    controller.current = c
    setLoading(true)
    try {
      const v = await loadRef.current(c.signal)
      if (!c.signal.aborted) {
        setData(v)
        setError(null)
      }
    } catch (err) {
      if (!c.signal.aborted) setError(err)
    } finally {
      if (!c.signal.aborted) setLoading(false)
    }
  }, [])

  // The caller names what the load depends on; the effect runs again when any of it changes.
  const depKey = JSON.stringify(deps)
  useEffect(() => {
    void depKey
    void reload()
    return () => controller.current?.abort()
  }, [depKey, reload])

  return { data, error, loading, reload }
}

/** Runs an action, keeping its pending state and error for the button and the message. */
export function useAction<A extends unknown[], R>(
  fn: (...args: A) => Promise<R>,
): { run: (...args: A) => Promise<R | undefined>; pending: boolean; error: unknown; clear: () => void } {
  const [pending, setPending] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const run = async (...args: A) => {
    setPending(true)
    setError(null)
    try {
      return await fn(...args)
    } catch (err) {
      setError(err)
      return undefined
    } finally {
      setPending(false)
    }
  }
  return { run, pending, error, clear: () => setError(null) }
}

/** An API error with its code, message and hint; any other error with its message. */
/** What to do about an error in the dashboard itself (the registry's `dashboard`), if it says. */
function dashboardAction(code: string | null): string | undefined {
  return code ? (ERROR_CODES as Record<string, ErrorCodeDefinition>)[code]?.dashboard : undefined
}

export function ErrorBox({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null
  const e =
    error instanceof ApiError
      ? error
      : { code: null, message: error instanceof Error ? error.message : String(error), hint: undefined }
  return (
    <div className="error" role="alert">
      <p>
        <strong>{title ?? 'Error'}</strong>
        {e.code ? (
          <>
            {' '}
            <code className="error-code">{e.code}</code>
          </>
        ) : null}
      </p>
      <p className="error-message">{e.message}</p>
      {dashboardAction(e.code) ? <p className="error-hint">Here: {dashboardAction(e.code)}</p> : null}
      {e.hint ? <p className="error-hint">Hint: {e.hint}</p> : null}
      {error instanceof ApiError && error.details !== undefined ? (
        <details>
          <summary>Details</summary>
          <JsonView value={error.details} />
        </details>
      ) : null}
    </div>
  )
}

export function JsonView({ value, label }: { value: unknown; label?: string }) {
  return (
    <section className="json-view" aria-label={label ?? 'JSON'}>
      <pre className="json">{value === undefined ? 'undefined' : JSON.stringify(value, null, 2)}</pre>
    </section>
  )
}

export function Badge({
  tone,
  children,
}: {
  tone: 'ok' | 'warn' | 'bad' | 'info' | 'muted'
  children: ReactNode
}) {
  return <span className={`badge badge-${tone}`}>{children}</span>
}

const statusTones: Record<string, 'ok' | 'warn' | 'bad' | 'info' | 'muted'> = {
  active: 'ok',
  delivered: 'ok',
  succeeded: 'ok',
  ok: 'ok',
  registered: 'ok',
  lapsed: 'bad',
  failed: 'bad',
  dead: 'bad',
  problem: 'bad',
  error: 'bad',
  pending: 'warn',
  running: 'warn',
  info: 'info',
}

export function Status({ value }: { value: string }) {
  return <Badge tone={statusTones[value] ?? 'muted'}>{value}</Badge>
}

export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span className="muted">—</span>
  const d = new Date(iso)
  return (
    <time dateTime={iso} title={iso}>
      {d.toLocaleString()}
    </time>
  )
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p className="muted" role="status">
      {what}…
    </p>
  )
}

/** A labelled form control with an optional description tied to it. */
export function Field({
  label,
  hint,
  required,
  children,
}: {
  label: ReactNode
  hint?: ReactNode
  required?: boolean
  children: (props: { id: string; 'aria-describedby'?: string; required?: boolean }) => ReactNode
}) {
  const id = useId()
  const hintId = hint ? `${id}-hint` : undefined
  return (
    <div className="field">
      <label htmlFor={id}>
        {label}
        {required ? <span className="req"> (required)</span> : null}
      </label>
      {children({ id, 'aria-describedby': hintId, required })}
      {hint ? (
        <p className="hint" id={hintId}>
          {hint}
        </p>
      ) : null}
    </div>
  )
}

/** A live region: what it says is announced to screen readers as it changes. */
export function Notice({ tone = 'ok', children }: { tone?: 'ok' | 'info'; children: ReactNode }) {
  if (!children) return null
  return (
    <div className={`notice notice-${tone}`} role="status">
      {children}
    </div>
  )
}

/** A secret shown once (a new key, a signing secret), with a copy button. */
export function ShownOnce({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false)
  return (
    <div className="shown-once" role="status">
      <p>
        <strong>{label}</strong> — shown this once; copy it now.
      </p>
      <div className="row">
        <code className="secret">{value}</code>
        <button
          type="button"
          onClick={async () => {
            try {
              await navigator.clipboard.writeText(value)
              setCopied(true)
            } catch {
              setCopied(false)
            }
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
    </div>
  )
}

/** Repeats `fn` every `ms` (null: paused). */
export function useInterval(fn: () => void, ms: number | null): void {
  const ref = useRef(fn)
  ref.current = fn
  useEffect(() => {
    if (ms === null) return
    const t = setInterval(() => ref.current(), ms)
    return () => clearInterval(t)
  }, [ms])
}

export function shortId(id: string): string {
  return id.length > 14 ? `${id.slice(0, 12)}…` : id
}

/**
 * A job's progress (GET /v1/jobs/{id}: long work such as a replay of many deliveries), read every
 * half second until it ends: a bar, how many of how many, and how it ended. `onEnded` is told once.
 */
export function JobProgress({
  id,
  label,
  noun,
  onEnded,
}: {
  id: string
  label: string
  /** What an item is, in the plural (deliveries replayed, contacts enriched). */
  noun: string
  onEnded?: (job: Job) => void
}) {
  const job = useLoad((signal) => get<Job>(`/v1/jobs/${enc(id)}`, undefined, signal), [id])
  const j = job.data
  const running = !j || j.status === 'queued' || j.status === 'running'
  useInterval(() => void job.reload(), running ? 500 : null)
  const told = useRef(false)
  const onEndedRef = useRef(onEnded)
  onEndedRef.current = onEnded
  useEffect(() => {
    if (j && !running && !told.current) {
      told.current = true
      onEndedRef.current?.(j)
    }
  }, [j, running])
  const barId = useId()
  const pct = j ? (j.total > 0 ? Math.floor((100 * j.done) / j.total) : 100) : 0
  const how =
    !j || j.status === 'queued'
      ? 'waiting to start'
      : j.status === 'running'
        ? 'under way'
        : j.status === 'succeeded'
          ? 'done'
          : j.status
  return (
    <div className="job" data-job-id={id} data-job-status={j?.status ?? 'queued'}>
      <label htmlFor={barId}>{label}</label>
      <progress id={barId} max={j?.total || 1} value={j ? (j.total > 0 ? j.done : 1) : 0}>
        {pct} %
      </progress>
      <p role="status" className="small">
        {j ? `${j.done} of ${j.total} ${noun} (${pct} %), ${how}` : 'Starting…'}
        {j?.errors ? `; ${j.errors} failed` : ''}
      </p>
      {j?.error ? (
        <ErrorBox
          error={new ApiError(0, { code: j.error.code as ApiErrorCode, message: j.error.message })}
          title={label}
        />
      ) : null}
      <ErrorBox error={job.error} title={label} />
    </div>
  )
}
