// OpenTelemetry traces: off unless OTEL_EXPORTER_OTLP_ENDPOINT (or …_TRACES_ENDPOINT) is set. Then
// the API, the SDK and the OTLP/HTTP exporter are loaded by dynamic import; until then nothing of
// them is, and every hook below is one check of a module variable.
//
// Spans go to the exporter in batches in the background: a backend that does not answer never
// holds a request up. Spans it refuses, or that find the queue full, are dropped and counted
// (`tracingCounts`, /metrics `patchbay_trace_spans_dropped_total`), with one warning a minute.
//
// What a span carries is chosen here and at each call site from safe values only: ids, methods,
// route templates (identifiers as {id}), statuses, counts and waits. Never a credential, a query
// string, a header, an error's text or a payload.
import type * as Api from '@opentelemetry/api'

/** A span's context, kept to parent later work on (a delivery made now, sent later). */
export type TraceContext = Api.Context
export type Attributes = Record<string, string | number | boolean | undefined>

let api: typeof Api | null = null
let tracer: Api.Tracer | null = null
let propagator: Api.TextMapPropagator | null = null

/** Spans handed to the exporter, exported, and dropped (backend unreachable, or the queue full). */
export const tracingCounts = { ended: 0, exported: 0, dropped: 0 }

/** Spans waiting for export past this many are dropped (and counted). */
const MAX_QUEUED = 4096

export const tracingOn = (): boolean => tracer !== null

export interface TracingOptions {
  url: string
  serviceName: string
  version: string
  log: { warn(obj: object, msg: string): void }
}

/** Loads the SDK and starts exporting; returns what stops it (flushing what is queued). */
export async function startTracing(opts: TracingOptions): Promise<{ shutdown(): Promise<void> }> {
  const [otel, sdk, hooks, core, resources, otlp] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/exporter-trace-otlp-http'),
  ])
  const inner = new otlp.OTLPTraceExporter({ url: opts.url, timeoutMillis: 5_000 })
  let queued = 0
  let warnedAt = 0
  const dropped = (n: number, why: string) => {
    tracingCounts.dropped += n
    if (Date.now() - warnedAt > 60_000) {
      warnedAt = Date.now()
      opts.log.warn({ dropped: tracingCounts.dropped, why }, 'trace spans dropped')
    }
  }
  const exporter: import('@opentelemetry/sdk-trace').SpanExporter = {
    export(spans, done) {
      inner.export(spans, (result) => {
        queued -= spans.length
        if (result.code === 0) tracingCounts.exported += spans.length
        else dropped(spans.length, `the trace backend at ${opts.url} did not take them`)
        done(result)
      })
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush(),
  }
  const batch = new sdk.BatchSpanProcessor({
    exporter,
    maxQueueSize: MAX_QUEUED * 2,
    scheduledDelayMillis: 500,
    exportTimeoutMillis: 10_000,
  })
  // Counts what is waiting, and drops (counted) past MAX_QUEUED instead of growing.
  const counting: import('@opentelemetry/sdk-trace').SpanProcessor = {
    onStart: (span, ctx) => batch.onStart(span, ctx),
    onEnd(span) {
      tracingCounts.ended++
      if (queued >= MAX_QUEUED) return dropped(1, 'the export queue is full')
      queued++
      batch.onEnd(span)
    },
    shutdown: () => batch.shutdown(),
    forceFlush: () => batch.forceFlush(),
  }
  const provider = new sdk.TracerProvider({
    resource: resources.resourceFromAttributes({
      'service.name': opts.serviceName,
      'service.version': opts.version,
    }),
    spanProcessors: [counting],
  })
  otel.context.setGlobalContextManager(new hooks.AsyncLocalStorageContextManager().enable())
  otel.trace.setGlobalTracerProvider(provider)
  propagator = new core.W3CTraceContextPropagator()
  otel.propagation.setGlobalPropagator(propagator)
  api = otel
  tracer = provider.getTracer('patchbay', opts.version)
  return {
    async shutdown() {
      tracer = null
      await provider.shutdown().catch(() => {})
      otel.trace.disable()
      otel.context.disable()
      otel.propagation.disable()
      api = null
      propagator = null
    },
  }
}

const clean = (attrs: Attributes): Api.Attributes => {
  const out: Api.Attributes = {}
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) out[k] = v
  return out
}

export interface OpenSpan {
  set(attrs: Attributes): void
  /** Ends it; `error` (an error code, never a message) marks it failed. */
  end(error?: string | null): void
  context: TraceContext
}

/**
 * Runs `fn` inside a span (the active one for what it calls); without tracing, just runs it.
 * `parent` puts the span under a context kept earlier instead of the active one.
 */
export async function inSpan<T>(
  name: string,
  attrs: Attributes,
  fn: (span: OpenSpan | null) => Promise<T>,
  opts: {
    parent?: TraceContext | null
    kind?: 'server' | 'client' | 'producer' | 'consumer' | 'internal'
  } = {},
): Promise<T> {
  if (!tracer || !api) return fn(null)
  const span = open(name, attrs, opts)!
  try {
    const out = await api.context.with(span.context, () => fn(span))
    span.end()
    return out
  } catch (err) {
    span.end((err as { code?: string }).code ?? 'ERROR')
    throw err
  }
}

/** Opens a span (not made active); null without tracing. */
export function openSpan(
  name: string,
  attrs: Attributes,
  opts: {
    parent?: TraceContext | null
    kind?: 'server' | 'client' | 'producer' | 'consumer' | 'internal'
    startTime?: number
  } = {},
): OpenSpan | null {
  if (!tracer || !api) return null
  return open(name, attrs, opts)
}

function open(
  name: string,
  attrs: Attributes,
  opts: { parent?: TraceContext | null; kind?: string; startTime?: number },
): OpenSpan {
  const a = api!
  const kinds: Record<string, Api.SpanKind> = {
    server: a.SpanKind.SERVER,
    client: a.SpanKind.CLIENT,
    producer: a.SpanKind.PRODUCER,
    consumer: a.SpanKind.CONSUMER,
    internal: a.SpanKind.INTERNAL,
  }
  const parent = opts.parent ?? a.context.active()
  const span = tracer!.startSpan(
    name,
    { attributes: clean(attrs), kind: kinds[opts.kind ?? 'internal'], startTime: opts.startTime },
    parent,
  )
  return {
    context: a.trace.setSpan(parent, span),
    set: (more) => span.setAttributes(clean(more)),
    end(error) {
      if (error) {
        span.setAttribute('patchbay.error_code', error)
        span.setStatus({ code: a.SpanStatusCode.ERROR, message: error })
      }
      span.end()
    },
  }
}

/** A span already over (its times measured by the caller), under `parent`. */
export function closedSpan(
  name: string,
  attrs: Attributes,
  startMs: number,
  endMs: number,
  parent: TraceContext | null,
): void {
  if (!tracer || !api) return
  tracer
    .startSpan(name, { attributes: clean(attrs), startTime: startMs }, parent ?? api.context.active())
    .end(endMs)
}

/** The active context, to parent later work on; null without tracing. */
export function activeContext(): TraceContext | null {
  return api ? api.context.active() : null
}

/** Runs `fn` with `ctx` active (as it is without tracing or a context). */
export function withContext<T>(ctx: TraceContext | null | undefined, fn: () => T): T {
  return api && ctx ? api.context.with(ctx, fn) : fn()
}

/** A context from a request's W3C `traceparent` (and `tracestate`); null without tracing. */
export function contextFromHeaders(
  headers: Record<string, string | string[] | undefined>,
): TraceContext | null {
  if (!api || !propagator) return null
  return propagator.extract(api.ROOT_CONTEXT, headers, {
    get: (carrier, key) => carrier[key],
    keys: (carrier) => Object.keys(carrier),
  })
}

/** Adds `traceparent` (and `tracestate`) of `ctx` (or the active context) to outgoing headers. */
export function injectHeaders(headers: Record<string, string>, ctx?: TraceContext | null): void {
  if (!api || !propagator) return
  propagator.inject(ctx ?? api.context.active(), headers, {
    set: (carrier, key, value) => {
      carrier[key] = value
    },
  })
}
