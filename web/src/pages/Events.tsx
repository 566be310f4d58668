// Events and deliveries: a live list (polled every 1.5 s), filters, an event's payload and its
// deliveries, each delivery's attempts, and replay.
import { useEffect, useId, useRef, useState } from 'react'
import { enc, get, getAll, post } from '../api.ts'
import {
  Badge,
  ErrorBox,
  JobProgress,
  JsonView,
  Loading,
  Status,
  Time,
  useAction,
  useInterval,
  useLoad,
} from '../components.tsx'
import { href, navigate, type Route } from '../router.ts'
import type { Agent, Delivery, DeliveryBacklog, DeliveryDetail, Job, PatchbayEvent } from '../types.ts'
import { useWorkspace } from '../workspace.tsx'

const POLL_MS = 1500

export function EventsPage({ route }: { route: Route }) {
  if (route.parts[1] === 'delivery' && route.parts[2]) return <DeliveryPage id={route.parts[2]} />
  if (route.parts[1] === 'deliveries') return <DeliveryList />
  if (route.parts[1]) return <EventPage id={route.parts[1]} />
  return <EventList route={route} />
}

function useAgents() {
  return useLoad((signal) => getAll<'agents', Agent>('/v1/agents', 'agents', undefined, signal), [])
}

function summarize(e: PatchbayEvent): string {
  const d = e.data as any
  const card = d?.card?.name ?? d?.action?.data?.card?.name
  const before = d?.listBefore?.name
  const after = d?.listAfter?.name
  if (card && before && after) return `${card}: ${before} → ${after}`
  if (card) return String(card)
  const refs = Object.entries(e.refs ?? {})
    .slice(0, 3)
    .map(([k, v]) => `${k} ${String(v)}`)
  return refs.join(', ')
}

function EventList({ route }: { route: Route }) {
  const ws = useWorkspace()
  const [connector, setConnector] = useState(route.query.get('connector') ?? '')
  const [type, setType] = useState(route.query.get('type') ?? '')
  const [live, setLive] = useState(true)
  const [events, setEvents] = useState<PatchbayEvent[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [fresh, setFresh] = useState<Set<string>>(new Set())
  const [announce, setAnnounce] = useState('')
  const [seenTypes, setSeenTypes] = useState<string[]>([])
  const [older, setOlder] = useState<PatchbayEvent[]>([])
  /** Where the next older page starts: after the live page, or after the older pages loaded. */
  const [liveNext, setLiveNext] = useState<string | null>(null)
  const [olderNext, setOlderNext] = useState<string | null>(null)
  const next = older.length ? olderNext : liveNext
  const known = useRef<Set<string> | null>(null)
  const inFlight = useRef(false)
  /** Bumped when the filters change, so an answer for the old filters is dropped. */
  const generation = useRef(0)
  const ids = { connector: useId(), type: useId(), types: useId() }

  const load = async () => {
    if (inFlight.current) return
    inFlight.current = true
    const gen = generation.current
    try {
      const res = await get<{ events: PatchbayEvent[]; next: string | null }>('/v1/events', {
        connector,
        type,
        limit: PAGE,
      })
      if (gen !== generation.current) return
      setError(null)
      setLiveNext(res.next)
      const prev = known.current
      const added = prev ? res.events.filter((e) => !prev.has(e.id)) : []
      known.current = new Set(res.events.map((e) => e.id))
      setEvents(res.events)
      setSeenTypes((t) => [...new Set([...t, ...res.events.map((e) => e.type)])].sort())
      if (added.length) {
        setFresh(new Set(added.map((e) => e.id)))
        setAnnounce(`${added.length} new event${added.length === 1 ? '' : 's'}`)
      }
    } catch (err) {
      setError(err)
    } finally {
      inFlight.current = false
    }
  }
  // A new filter starts a new list.
  // biome-ignore lint/correctness/useExhaustiveDependencies: load reads the filters
  useEffect(() => {
    generation.current++
    inFlight.current = false
    known.current = null
    setEvents(null)
    setOlder([])
    setLiveNext(null)
    setOlderNext(null)
    setFresh(new Set())
    void load()
  }, [connector, type])
  useInterval(() => void load(), live ? POLL_MS : null)
  const loadOlder = useAction(async () => {
    if (next === null) return
    const gen = generation.current
    const res = await get<{ events: PatchbayEvent[]; next: string | null }>('/v1/events', {
      connector,
      type,
      limit: PAGE,
      cursor: next,
    })
    if (gen !== generation.current) return
    setOlder((o) => [...o, ...res.events])
    setOlderNext(res.next)
  })
  const shown = events ? [...events, ...older.filter((o) => !events.some((e) => e.id === o.id))] : null

  return (
    <section aria-labelledby="events-title">
      <div className="row spread wrap">
        <h1 id="events-title" tabIndex={-1}>
          Events
        </h1>
        <div className="row">
          <span className={live ? 'live-dot on' : 'live-dot'} aria-hidden="true" />
          <button type="button" aria-pressed={live} onClick={() => setLive((l) => !l)}>
            {live ? 'Pause live updates' : 'Resume live updates'}
          </button>
        </div>
      </div>
      <p className="lede">
        Upstream happenings, stored once and delivered to every matching trigger. New events appear here as
        they arrive.
      </p>
      <EventsTabs current="events" />
      <form className="filters row wrap end" aria-label="Filter events" onSubmit={(e) => e.preventDefault()}>
        <div className="field">
          <label htmlFor={ids.connector}>Connector</label>
          <select id={ids.connector} value={connector} onChange={(e) => setConnector(e.target.value)}>
            <option value="">All connectors</option>
            {ws.connectors
              .filter((c) => c.triggers.length > 0)
              .map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name}
                </option>
              ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={ids.type}>Event type</label>
          <input
            id={ids.type}
            list={ids.types}
            placeholder="e.g. updateCard"
            value={type}
            spellCheck={false}
            onChange={(e) => setType(e.target.value.trim())}
          />
          <datalist id={ids.types}>
            {seenTypes.map((t) => (
              <option key={t} value={t} />
            ))}
          </datalist>
        </div>
      </form>
      <p className="visually-hidden" role="status" aria-live="polite">
        {announce}
      </p>
      <ErrorBox error={error} title="Events" />
      {shown === null ? (
        error ? null : (
          <Loading what="Loading events" />
        )
      ) : shown.length === 0 ? (
        <p className="muted">No events yet{connector || type ? ' for these filters' : ''}.</p>
      ) : (
        <div className="table-wrap">
          <table className="events stack">
            <caption className="visually-hidden">Events, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Received</th>
                <th scope="col">Connector</th>
                <th scope="col">Type</th>
                <th scope="col">What</th>
                <th scope="col">Triggers</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((e) => (
                <tr key={e.id} className={fresh.has(e.id) ? 'fresh' : undefined} data-event-id={e.id}>
                  <td data-label="Received">
                    <a href={href('events', e.id)}>
                      <Time iso={e.receivedAt} />
                    </a>
                  </td>
                  <td data-label="Connector">{ws.connector(e.connector)?.name ?? e.connector}</td>
                  <td data-label="Type">
                    <code>{e.type}</code>
                  </td>
                  <td data-label="What">{summarize(e)}</td>
                  <td data-label="Triggers">{e.matchedTriggers}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ErrorBox error={loadOlder.error} title="Older events" />
      {next !== null && shown?.length ? (
        <button type="button" className="more" disabled={loadOlder.pending} onClick={() => loadOlder.run()}>
          {loadOlder.pending ? 'Loading…' : 'Load older events'}
        </button>
      ) : null}
    </section>
  )
}

const PAGE = 50

/** Events and deliveries are two views of the same traffic. */
function EventsTabs({ current }: { current: 'events' | 'deliveries' }) {
  return (
    <nav aria-label="Events and deliveries" className="subnav">
      <a href={href('events')} aria-current={current === 'events' ? 'page' : undefined}>
        Events
      </a>
      <a href={href('events', 'deliveries')} aria-current={current === 'deliveries' ? 'page' : undefined}>
        Deliveries
      </a>
    </nav>
  )
}

/** How far delivery lags on the instance that answers (what its ingress holds back on). */
function Backlog() {
  const backlog = useLoad((signal) => get<DeliveryBacklog>('/v1/delivery-backlog', undefined, signal), [])
  useInterval(() => void backlog.reload(), POLL_MS)
  const b = backlog.data
  if (!b) return null
  return (
    <p className="small">
      <span className="muted">Waiting to be sent: </span>
      {b.backlog} {b.backlog === 1 ? 'delivery' : 'deliveries'}
      {b.backlog > 0 ? <span className="muted"> (oldest {(b.oldestAgeMs / 1000).toFixed(1)} s)</span> : null}
      <span className="muted"> · limit {b.limit}</span>
      {b.holdingBack ? <span className="warn-text"> · new upstream deliveries are asked to wait</span> : null}
    </p>
  )
}

/** Deliveries across events: failed and dead-lettered ones are found here. */
function DeliveryList() {
  const agents = useAgents()
  const [status, setStatus] = useState('')
  const [agentId, setAgentId] = useState('')
  const list = useLoad(
    (signal) =>
      get<{ deliveries: Delivery[]; next: string | null }>(
        '/v1/deliveries',
        { status, agentId, limit: PAGE },
        signal,
      ),
    [status, agentId],
  )
  useInterval(() => void list.reload(), POLL_MS)
  const agentName = (aid: string) => agents.data?.agents.find((a) => a.id === aid)?.name ?? aid
  const ids = { status: useId(), agent: useId() }
  // Every dead delivery (of the chosen agent) sent again, as a job whose progress shows here.
  const [replayJob, setReplayJob] = useState<string | null>(null)
  const replayAll = useAction(async () => {
    const job = await post<Job>('/v1/jobs', {
      kind: 'replay_deliveries',
      status: 'dead',
      ...(agentId ? { agentId } : {}),
    })
    setReplayJob(job.id)
  })
  return (
    <section aria-labelledby="deliveries-title">
      <h1 id="deliveries-title" tabIndex={-1}>
        Deliveries
      </h1>
      <p className="lede">
        Each event on its way to each agent whose trigger matched: pushed to a webhook, read from a stream, or
        run as a tool. Failed ones are retried, then dead-lettered; any can be replayed.
      </p>
      <EventsTabs current="deliveries" />
      <Backlog />
      <form
        className="filters row wrap end"
        aria-label="Filter deliveries"
        onSubmit={(e) => e.preventDefault()}
      >
        <div className="field">
          <label htmlFor={ids.status}>Status</label>
          <select id={ids.status} value={status} onChange={(e) => setStatus(e.target.value)}>
            <option value="">Any status</option>
            <option value="pending">pending</option>
            <option value="delivered">delivered</option>
            <option value="failed">failed</option>
            <option value="dead">dead (dead-lettered)</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor={ids.agent}>Agent</label>
          <select id={ids.agent} value={agentId} onChange={(e) => setAgentId(e.target.value)}>
            <option value="">All agents</option>
            {agents.data?.agents.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </div>
      </form>
      {status === 'dead' && (list.data?.deliveries.length ?? 0) > 0 ? (
        <div className="row">
          <button type="button" disabled={replayAll.pending} onClick={() => void replayAll.run()}>
            Replay all dead deliveries{agentId ? ` of ${agentName(agentId)}` : ''}
          </button>
        </div>
      ) : null}
      {replayJob ? (
        <JobProgress
          key={replayJob}
          id={replayJob}
          label="Replaying dead deliveries"
          noun="deliveries replayed"
          onEnded={() => void list.reload()}
        />
      ) : null}
      <ErrorBox error={replayAll.error} title="Replay failed" />
      <ErrorBox error={list.error} title="Deliveries" />
      {!list.data ? (
        list.error ? null : (
          <Loading what="Loading deliveries" />
        )
      ) : list.data.deliveries.length === 0 ? (
        <p className="muted">No deliveries{status || agentId ? ' for these filters' : ''}.</p>
      ) : (
        <div className="table-wrap">
          <table className="stack">
            <caption className="visually-hidden">Deliveries, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Created</th>
                <th scope="col">Agent</th>
                <th scope="col">Target</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Event</th>
              </tr>
            </thead>
            <tbody>
              {list.data.deliveries.map((d) => (
                <tr key={d.id}>
                  <td data-label="Created">
                    <a href={href('events', 'delivery', d.id)}>
                      <Time iso={d.createdAt} />
                    </a>
                  </td>
                  <td data-label="Agent">{agentName(d.agentId)}</td>
                  <td data-label="Target">{target(d)}</td>
                  <td data-label="Status">
                    <Status value={d.status} />
                    {d.lastError ? <div className="warn-text small">{d.lastError}</div> : null}
                    <NextTry d={d} />
                  </td>
                  <td data-label="Attempts">
                    {d.attempts}
                    {d.lastStatus ? <span className="muted small"> · last {d.lastStatus}</span> : null}
                  </td>
                  <td data-label="Event">
                    <a href={href('events', d.eventId)}>
                      <code>{d.eventId}</code>
                    </a>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}

interface EventDetail extends PatchbayEvent {
  deliveries: Delivery[]
}

function EventPage({ id }: { id: string }) {
  const ws = useWorkspace()
  const agents = useAgents()
  const ev = useLoad((signal) => get<EventDetail>(`/v1/events/${enc(id)}`, undefined, signal), [id])
  const pending = ev.data?.deliveries.some((d) => d.status === 'pending') ?? false
  useInterval(() => void ev.reload(), pending ? POLL_MS : null)
  const agentName = (aid: string) => agents.data?.agents.find((a) => a.id === aid)?.name ?? aid
  if (ev.error && !ev.data) return <ErrorBox error={ev.error} title="Event" />
  if (!ev.data) return <Loading what="Loading the event" />
  const e = ev.data
  return (
    <section aria-labelledby="event-title">
      <p className="crumbs">
        <a href={href('events')}>Events</a> › <code>{e.id}</code>
      </p>
      <h1 id="event-title" tabIndex={-1}>
        <code>{e.type}</code> on {ws.connector(e.connector)?.name ?? e.connector}
      </h1>
      <dl className="facts">
        <dt>What</dt>
        <dd>{summarize(e) || '—'}</dd>
        <dt>Occurred</dt>
        <dd>
          <Time iso={e.occurredAt} />
        </dd>
        <dt>Received</dt>
        <dd>
          <Time iso={e.receivedAt} />
        </dd>
        <dt>Connection</dt>
        <dd>{e.connectionId ? ws.connectionLabel(e.connectionId) : '—'}</dd>
        <dt>Upstream id</dt>
        <dd>
          <code>{e.upstreamId}</code>
        </dd>
        <dt>References</dt>
        <dd>
          <code>{JSON.stringify(e.refs)}</code>
        </dd>
      </dl>
      <h2>Deliveries</h2>
      {e.deliveries.length === 0 ? (
        <p className="muted">No trigger matched this event, so nothing was delivered.</p>
      ) : (
        <ul className="deliveries">
          {e.deliveries.map((d) => (
            <DeliveryItem key={d.id} delivery={d} agentName={agentName(d.agentId)} onChanged={ev.reload} />
          ))}
        </ul>
      )}
      <h2>Payload</h2>
      <JsonView value={e.data} label="Event payload" />
    </section>
  )
}

function target(d: Pick<Delivery, 'target'>): string {
  if (d.target.type === 'webhook') return `webhook ${d.target.url ?? ''}`
  if (d.target.type === 'tool') return `tool ${d.target.toolId ?? ''}`
  return d.target.type
}

function DeliveryItem({
  delivery: d,
  agentName,
  onChanged,
}: {
  delivery: Delivery
  agentName: string
  onChanged: () => Promise<void>
}) {
  const [replayed, setReplayed] = useState(false)
  const replay = useAction(async () => {
    await post(`/v1/deliveries/${enc(d.id)}/replay`)
    setReplayed(true)
    await onChanged()
  })
  return (
    <li className="delivery" data-delivery-id={d.id}>
      <div className="row spread wrap">
        <div>
          <strong>{agentName}</strong> <Status value={d.status} />{' '}
          <span className="muted small">
            {target(d)} · {attemptsText(d)}
            {d.lastStatus ? ` · last answer ${d.lastStatus}` : ''}
          </span>
          {d.lastError ? <p className="warn-text small">{d.lastError}</p> : null}
          <NextTry d={d} />
        </div>
        <div className="row">
          <a href={href('events', 'delivery', d.id)}>Attempts</a>
          <button type="button" disabled={replay.pending} onClick={() => replay.run()}>
            Replay delivery
          </button>
        </div>
      </div>
      {replayed ? (
        <p role="status" className="small">
          Replayed: the delivery is sent again with the same id.
        </p>
      ) : null}
      <ErrorBox error={replay.error} title="Replay failed" />
    </li>
  )
}

function DeliveryPage({ id }: { id: string }) {
  const agents = useAgents()
  const d = useLoad((signal) => get<DeliveryDetail>(`/v1/deliveries/${enc(id)}`, undefined, signal), [id])
  const [replayed, setReplayed] = useState(false)
  const pending = d.data?.status === 'pending'
  useInterval(() => void d.reload(), pending || replayed ? POLL_MS : null)
  const replay = useAction(async () => {
    await post(`/v1/deliveries/${enc(id)}/replay`)
    setReplayed(true)
    await d.reload()
  })
  if (d.error && !d.data) return <ErrorBox error={d.error} title="Delivery" />
  if (!d.data) return <Loading what="Loading the delivery" />
  const x = d.data
  const agentName = agents.data?.agents.find((a) => a.id === x.agentId)?.name ?? x.agentId
  return (
    <section aria-labelledby="delivery-title">
      <p className="crumbs">
        <a href={href('events')}>Events</a> › <a href={href('events', x.eventId)}>{x.eventId}</a> › delivery
      </p>
      <h1 id="delivery-title" tabIndex={-1}>
        Delivery to {agentName}
      </h1>
      <p>
        <Status value={x.status} /> <span className="muted small">{target(x)}</span>{' '}
        {x.deliveredAt ? (
          <>
            · delivered <Time iso={x.deliveredAt} />
          </>
        ) : null}
      </p>
      <div className="row">
        <button type="button" className="primary" disabled={replay.pending} onClick={() => replay.run()}>
          Replay delivery
        </button>
        <button type="button" onClick={() => navigate('events', x.eventId)}>
          Back to the event
        </button>
        <a className="button" href={href('timeline', x.id)}>
          Timeline
        </a>
      </div>
      {replayed ? (
        <p role="status" className="small">
          Replayed: the delivery is sent again with the same id.
        </p>
      ) : null}
      <ErrorBox error={replay.error} title="Replay failed" />
      <h2>Attempts</h2>
      {x.attempts.length === 0 ? (
        <p className="muted">
          No attempts recorded{x.target.type === 'stream' ? ': stream deliveries are read by the agent' : ''}.
        </p>
      ) : (
        <div className="table-wrap">
          <table className="attempts stack">
            <caption className="visually-hidden">Delivery attempts</caption>
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">At</th>
                <th scope="col">Answer</th>
                <th scope="col">Duration</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {x.attempts.map((a) => (
                <tr key={String(a.attempt)}>
                  <td data-label="#">{String(a.attempt)}</td>
                  <td data-label="At">
                    <Time iso={a.at as string} />
                  </td>
                  <td data-label="Answer">
                    {a.status ? (
                      <Badge tone={Number(a.status) < 300 ? 'ok' : 'bad'}>{String(a.status)}</Badge>
                    ) : (
                      <span className="muted">—</span>
                    )}
                  </td>
                  <td data-label="Duration">{`${String(a.durationMs)} ms`}</td>
                  <td data-label="Error">{a.error ? String(a.error) : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>Payload the agent receives</h2>
      <JsonView value={x.payload} label="Delivery payload" />
    </section>
  )
}

function attemptsText(d: Delivery): string {
  return `${d.attempts} attempt${d.attempts === 1 ? '' : 's'}`
}

/** When a pending delivery that failed before is tried again. */
function NextTry({ d }: { d: Delivery }) {
  if (d.status !== 'pending' || !d.nextAttemptAt || d.attempts === 0) return null
  return (
    <div className="small">
      Next try <Time iso={d.nextAttemptAt} />
    </div>
  )
}
