// An agent's event stream (GET /v1/agents/:id/stream, Server-Sent Events) as an async iterator.
// When the connection drops it reconnects with Last-Event-ID, so nothing is missed or repeated.
import { PatchbayApiError } from './errors.ts'
import type { DeliveryPayload } from './webhooks.ts'

export interface StreamedDelivery<Data = unknown> {
  /** The stream position (the SSE id): resume after it with `lastEventId`. */
  seq: number
  delivery: DeliveryPayload<Data>
}

export interface StreamOptions {
  /** Resume after this position (a previous StreamedDelivery's seq). */
  lastEventId?: number | string
  /** Reconnect when the connection ends (default true). */
  reconnect?: boolean
  /** Wait before reconnecting, unless the server's `retry:` says otherwise (default 2000 ms). */
  retryMs?: number
  signal?: AbortSignal
  /** Told when the stream is (re)connected and when it is lost. */
  onStatus?: (status: {
    state: 'connected' | 'reconnecting'
    lastEventId: string | null
    error?: Error
  }) => void
}

export interface SseEvent {
  id: string | null
  event: string
  data: string
  retry: number | null
}

/** Parses an SSE byte stream into events (the WHATWG rules: fields, comments, multi-line data). */
export async function* parseSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder()
  let buffer = ''
  let data: string[] = []
  let event = ''
  let id: string | null = null
  let retry: number | null = null
  const line = function* (text: string): Generator<SseEvent> {
    if (text === '') {
      if (data.length > 0) yield { id, event: event || 'message', data: data.join('\n'), retry }
      data = []
      event = ''
      retry = null
      return
    }
    if (text.startsWith(':')) return
    const colon = text.indexOf(':')
    const field = colon < 0 ? text : text.slice(0, colon)
    let value = colon < 0 ? '' : text.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (field === 'data') data.push(value)
    else if (field === 'event') event = value
    else if (field === 'id' && !value.includes('\0')) id = value
    else if (field === 'retry' && /^\d+$/.test(value)) retry = Number(value)
  }
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true })
    for (;;) {
      const i = buffer.search(/\r\n|\r|\n/)
      // A lone CR at the end may be the first half of a CRLF still on its way.
      if (i < 0 || (buffer[i] === '\r' && i === buffer.length - 1)) break
      const text = buffer.slice(0, i)
      buffer = buffer.slice(buffer[i] === '\r' && buffer[i + 1] === '\n' ? i + 2 : i + 1)
      yield* line(text)
    }
  }
}

/**
 * Follows the stream. `open` makes the request (with the Last-Event-ID header when resuming);
 * refusals (a wrong key, an unknown agent) are thrown as PatchbayApiError and not retried.
 */
export async function* followStream(
  open: (lastEventId: string | null, signal: AbortSignal | undefined) => Promise<Response>,
  o: StreamOptions = {},
): AsyncGenerator<StreamedDelivery> {
  let last = o.lastEventId === undefined ? null : String(o.lastEventId)
  let wait = o.retryMs ?? 2000
  for (;;) {
    let error: Error | undefined
    let res: Response | undefined
    try {
      res = await open(last, o.signal)
      if (!res.ok) throw await PatchbayApiError.from(res)
      if (!res.body) throw new Error('the stream has no body')
      o.onStatus?.({ state: 'connected', lastEventId: last })
      for await (const ev of parseSse(res.body as unknown as AsyncIterable<Uint8Array>)) {
        if (ev.retry !== null) wait = ev.retry
        if (ev.event !== 'delivery') continue
        if (ev.id !== null) last = ev.id
        if (o.signal?.aborted) return
        yield { seq: Number(ev.id), delivery: JSON.parse(ev.data) }
      }
    } catch (err) {
      if (o.signal?.aborted) return
      if (err instanceof PatchbayApiError && err.status < 500) throw err
      if (o.reconnect === false) throw err
      error = err as Error
    } finally {
      // Let go of the connection whichever way the loop ended (an abort, a break, an error).
      res?.body?.cancel().catch(() => {})
    }
    if (o.signal?.aborted) return
    if (o.reconnect === false) return
    o.onStatus?.({ state: 'reconnecting', lastEventId: last, error })
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, wait)
      o.signal?.addEventListener(
        'abort',
        () => {
          clearTimeout(timer)
          resolve()
        },
        { once: true },
      )
    })
    if (o.signal?.aborted) return
  }
}
