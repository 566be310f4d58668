// Usage: contact-data credits per connection and per agent (the ledger), agents' budgets, and the
// rate limit that paces each connection.
import { useId, useState } from 'react'
import { enc, get, getAll } from '../api.ts'
import { Badge, ErrorBox, Loading, Time, useLoad } from '../components.tsx'
import type { Agent, Connection } from '../types.ts'
import { useWorkspace } from '../workspace.tsx'

interface Credits {
  summary: {
    credits: number
    charges: number
    byConnection: Array<{
      connectionId: string
      credits: number
      charges: number
      lastRemaining: number | null
    }>
    byAgent: Array<{ agentId: string | null; credits: number; charges: number }>
  }
  entries: Array<{
    id: string
    connectionId: string
    agentId: string | null
    stepId: string
    runId: string
    credits: number
    remaining: number | null
    createdAt: string
  }>
  next: string | null
}

interface Budget {
  agentId: string
  limit: number
  period: string
  spent: number
  remaining: number
}

interface RateLimit {
  connectionId: string
  requests: number | null
  perMs: number | null
  source: 'connection' | 'default' | 'none'
}

export function UsagePage() {
  const ws = useWorkspace()
  const agents = useLoad((signal) => getAll<'agents', Agent>('/v1/agents', 'agents', undefined, signal), [])
  const [connectionId, setConnectionId] = useState('')
  const [agentId, setAgentId] = useState('')
  const credits = useLoad(
    (signal) => get<Credits>('/v1/credits', { connectionId, agentId, limit: 50 }, signal),
    [connectionId, agentId],
  )
  const budgets = useLoad(
    (signal) => getAll<'budgets', Budget>('/v1/credits/budgets', 'budgets', undefined, signal),
    [],
  )
  const agentName = (id: string | null) =>
    id === null ? 'Workspace key' : (agents.data?.agents.find((a) => a.id === id)?.name ?? id)
  const metered = ws.connectors.filter((c) => c.id === 'contactdata' || c.beta).map((c) => c.id)
  const ids = { conn: useId(), agent: useId() }
  return (
    <section aria-labelledby="usage-title">
      <h1 id="usage-title" tabIndex={-1}>
        Usage
      </h1>
      <section className="panel" aria-labelledby="credits-title">
        <h2 id="credits-title">Contact-data credits</h2>
        <p className="hint">
          Each lookup that finds a record costs credits; searches and cached results are free.
        </p>
        <form
          className="filters row wrap end"
          aria-label="Filter credits"
          onSubmit={(e) => e.preventDefault()}
        >
          <div className="field">
            <label htmlFor={ids.conn}>Connection</label>
            <select id={ids.conn} value={connectionId} onChange={(e) => setConnectionId(e.target.value)}>
              <option value="">All connections</option>
              {ws.connections
                .filter((c) => metered.includes(c.connector))
                .map((c) => (
                  <option key={c.id} value={c.id}>
                    {ws.connectionLabel(c.id)}
                  </option>
                ))}
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
        <ErrorBox error={credits.error} title="Credits" />
        {!credits.data ? (
          credits.error ? null : (
            <Loading />
          )
        ) : (
          <>
            <p className="stat">
              <strong>{credits.data.summary.credits}</strong> credits in{' '}
              <strong>{credits.data.summary.charges}</strong> charge
              {credits.data.summary.charges === 1 ? '' : 's'}
            </p>
            <div className="split">
              <div className="table-wrap">
                <table>
                  <caption>Per connection</caption>
                  <thead>
                    <tr>
                      <th scope="col">Connection</th>
                      <th scope="col">Credits</th>
                      <th scope="col">Charges</th>
                      <th scope="col">Balance</th>
                    </tr>
                  </thead>
                  <tbody>
                    {credits.data.summary.byConnection.length === 0 ? (
                      <tr>
                        <td colSpan={4} className="muted">
                          No charges.
                        </td>
                      </tr>
                    ) : null}
                    {credits.data.summary.byConnection.map((r) => (
                      <tr key={r.connectionId}>
                        <th scope="row">{ws.connectionLabel(r.connectionId)}</th>
                        <td>{r.credits}</td>
                        <td>{r.charges}</td>
                        <td>{r.lastRemaining ?? '—'}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <div className="table-wrap">
                <table>
                  <caption>Per agent</caption>
                  <thead>
                    <tr>
                      <th scope="col">Agent</th>
                      <th scope="col">Credits</th>
                      <th scope="col">Charges</th>
                      <th scope="col">Budget</th>
                    </tr>
                  </thead>
                  <tbody>
                    {credits.data.summary.byAgent.length === 0 ? (
                      <tr>
                        <td colSpan={4} className="muted">
                          No charges.
                        </td>
                      </tr>
                    ) : null}
                    {credits.data.summary.byAgent.map((r) => {
                      const b = budgets.data?.budgets.find((x) => x.agentId === r.agentId)
                      return (
                        <tr key={r.agentId ?? 'workspace'}>
                          <th scope="row">{agentName(r.agentId)}</th>
                          <td>{r.credits}</td>
                          <td>{r.charges}</td>
                          <td>{b ? `${b.spent} of ${b.limit} (${b.period})` : '—'}</td>
                        </tr>
                      )
                    })}
                  </tbody>
                </table>
              </div>
            </div>
            {credits.data.entries.length > 0 ? (
              <details>
                <summary>Latest charges ({credits.data.entries.length})</summary>
                <div className="table-wrap">
                  <table>
                    <caption className="visually-hidden">Latest charges</caption>
                    <thead>
                      <tr>
                        <th scope="col">When</th>
                        <th scope="col">Step</th>
                        <th scope="col">Connection</th>
                        <th scope="col">Agent</th>
                        <th scope="col">Credits</th>
                        <th scope="col">Balance after</th>
                      </tr>
                    </thead>
                    <tbody>
                      {credits.data.entries.map((e) => (
                        <tr key={e.id}>
                          <td>
                            <Time iso={e.createdAt} />
                          </td>
                          <td>
                            <code>{e.stepId}</code>
                          </td>
                          <td>{ws.connectionLabel(e.connectionId)}</td>
                          <td>{agentName(e.agentId)}</td>
                          <td>{e.credits}</td>
                          <td>{e.remaining ?? '—'}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              </details>
            ) : null}
          </>
        )}
      </section>
      <section className="panel" aria-labelledby="rate-title">
        <h2 id="rate-title">Rate limits</h2>
        <p className="hint">
          The pace of each connection’s ready-made steps; API Call steps are not paced. Upstream rate limits
          are reported as the upstream states them.
        </p>
        {ws.connections.length === 0 ? <p className="muted">No connections yet.</p> : null}
        <div className="table-wrap">
          <table className="stack">
            <caption className="visually-hidden">Rate limit per connection</caption>
            <thead>
              <tr>
                <th scope="col">Connection</th>
                <th scope="col">Pacing</th>
                <th scope="col">Upstream status</th>
              </tr>
            </thead>
            <tbody>
              {ws.connections.map((c) => (
                <RateLimitRow key={c.id} connection={c} />
              ))}
            </tbody>
          </table>
        </div>
      </section>
    </section>
  )
}

function per(ms: number): string {
  if (ms % 3_600_000 === 0) return ms === 3_600_000 ? 'hour' : `${ms / 3_600_000} hours`
  if (ms % 60_000 === 0) return ms === 60_000 ? 'minute' : `${ms / 60_000} minutes`
  if (ms % 1000 === 0) return ms === 1000 ? 'second' : `${ms / 1000} seconds`
  return `${ms} ms`
}

function RateLimitRow({ connection }: { connection: Connection }) {
  const ws = useWorkspace()
  const rl = useLoad(
    (signal) => get<RateLimit>(`/v1/connections/${enc(connection.id)}/rate-limit`, undefined, signal),
    [connection.id],
  )
  const status = useLoad((signal) => upstreamStatus(connection, signal), [connection.id])
  return (
    <tr>
      <th scope="row">{ws.connectionLabel(connection.id)}</th>
      <td data-label="Pacing">
        {rl.error ? (
          <span className="warn-text">{(rl.error as Error).message}</span>
        ) : !rl.data ? (
          '…'
        ) : rl.data.requests && rl.data.perMs ? (
          <>
            {rl.data.requests} requests per {per(rl.data.perMs)} <Badge tone="muted">{rl.data.source}</Badge>
          </>
        ) : (
          <>
            not paced <Badge tone="muted">{rl.data.source}</Badge>
          </>
        )}
      </td>
      <td data-label="Upstream status">
        {status.loading && !status.data ? (
          '…'
        ) : status.data ? (
          <UpstreamStatus s={status.data} />
        ) : (
          <span className="muted">—</span>
        )}
      </td>
    </tr>
  )
}

interface Budget2 {
  limit: number
  remaining: number
  used: number | null
  resetAt: string
  observedAt?: string
}

interface RateLimitStatus {
  supported: boolean
  tracked: Record<string, Budget2>
  upstream: Record<string, Budget2> | null
  upstreamError?: { code: string; message: string }
}

/**
 * The upstream's own request budgets (code-host: core, search, graphql), as Patchbay read them
 * from responses and as the upstream reports them now (GET /v1/connections/:id/rate-limit-status).
 */
async function upstreamStatus(c: Connection, signal: AbortSignal): Promise<RateLimitStatus | null> {
  try {
    return await get<RateLimitStatus>(`/v1/connections/${enc(c.id)}/rate-limit-status`, undefined, signal)
  } catch {
    return null
  }
}

function UpstreamStatus({ s }: { s: RateLimitStatus }) {
  if (!s.supported) return <span className="muted">not reported by this upstream</span>
  const budgets = s.upstream ?? s.tracked
  const entries = Object.entries(budgets)
  return (
    <>
      {entries.length === 0 ? <span className="muted">nothing read yet</span> : null}
      <ul className="plain">
        {entries.map(([resource, b]) => (
          <li key={resource}>
            <strong>{resource}</strong>: {b.remaining} of {b.limit} left · resets <Time iso={b.resetAt} />
          </li>
        ))}
      </ul>
      {s.upstreamError ? (
        <p className="warn-text small">
          {s.upstreamError.code}: {s.upstreamError.message}
        </p>
      ) : null}
    </>
  )
}
