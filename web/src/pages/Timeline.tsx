// A run's timeline as a waterfall (GET /v1/timelines/{id}): received → matched → pushed or run →
// steps → upstream requests, each a bar on one time axis, waits before a request hatched. A table
// underneath, so the numbers are read as well as seen.
import { enc, get } from '../api.ts'
import { ErrorBox, Loading, useLoad } from '../components.tsx'
import { href } from '../router.ts'

interface Span {
  id: string
  parentId: string | null
  depth: number
  kind: string
  label: string
  start: string
  offsetMs: number
  durationMs: number
  status: string | null
  waits?: { budgetMs: number; pacingMs: number }
}
interface Timeline {
  id: string
  kind: string
  start: string
  end: string
  durationMs: number
  spans: Span[]
}

const KIND_WORDS: Record<string, string> = {
  upstream: 'Upstream',
  event: 'Event',
  delivery: 'Delivery',
  attempt: 'Attempt',
  tool_run: 'Tool run',
  step: 'Step',
  request: 'Request',
}
const ms = (n: number) => (n >= 1000 ? `${(n / 1000).toFixed(2)} s` : `${Math.round(n * 10) / 10} ms`)
const bad = (s: string | null) => s !== null && (s === 'failed' || s === 'dead' || /^[45]\d\d$/.test(s))

export function TimelinePage({ id }: { id: string }) {
  const tl = useLoad((signal) => get<Timeline>(`/v1/timelines/${enc(id)}`, undefined, signal), [id])
  return (
    <section aria-labelledby="timeline-title">
      <h1 id="timeline-title" tabIndex={-1}>
        Timeline of <code>{id}</code>
      </h1>
      <ErrorBox error={tl.error} title="The timeline could not be loaded" />
      {tl.data ? <Waterfall timeline={tl.data} /> : tl.error ? null : <Loading />}
    </section>
  )
}

export function Waterfall({ timeline }: { timeline: Timeline }) {
  const total = Math.max(timeline.durationMs, 1)
  const pct = (n: number) => `${Math.min(100, Math.max(0, (n / total) * 100))}%`
  const summary = `${timeline.spans.length} spans over ${ms(timeline.durationMs)}, from ${new Date(timeline.start).toLocaleString()}.`
  return (
    <figure className="waterfall panel" aria-label={`Waterfall: ${summary}`} data-testid="waterfall">
      <figcaption className="hint">
        {summary} Waits before a request (rate budget, pacing) are hatched.
      </figcaption>
      <ol className="waterfall-rows">
        {timeline.spans.map((s) => {
          const waits = s.waits ? s.waits.budgetMs + s.waits.pacingMs : 0
          return (
            <li key={s.id} className={`wf-row wf-${s.kind}`} data-kind={s.kind} data-span={s.id}>
              <span className="wf-label" style={{ paddingLeft: `${s.depth * 0.9}rem` }}>
                <span className="wf-kind">{KIND_WORDS[s.kind] ?? s.kind}</span> {s.label}
              </span>
              <span className="wf-track" aria-hidden="true">
                <span
                  className={bad(s.status) ? 'wf-bar wf-bad' : 'wf-bar'}
                  style={{ left: pct(s.offsetMs), width: s.durationMs > 0 ? pct(s.durationMs) : undefined }}
                >
                  {waits > 0 ? (
                    <span
                      className="wf-wait"
                      style={{ width: pct((waits / Math.max(s.durationMs, 0.001)) * total) }}
                    />
                  ) : null}
                </span>
              </span>
              <span className="wf-time">
                +{ms(s.offsetMs)} · {s.durationMs > 0 ? ms(s.durationMs) : 'instant'}
                {waits > 0 && s.waits
                  ? ` (waited ${ms(waits)}: budget ${ms(s.waits.budgetMs)}, pacing ${ms(s.waits.pacingMs)})`
                  : ''}
                {s.status ? ` · ${s.status}` : ''}
              </span>
            </li>
          )
        })}
      </ol>
      <p className="small">
        <a href={href('timeline', timeline.id)}>Link to this timeline</a>
      </p>
    </figure>
  )
}
