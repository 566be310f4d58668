// End users: the operator's customers, their connections and the agents bound to them, connect
// links, the workspace's end-user settings (allowed origins, notification URL) and the lifecycle
// notices sent there.
import { type FormEvent, useState } from 'react'
import { del, enc, get, patch, post } from '../api.ts'
import { ErrorBox, Loading, ShownOnce, Status, Time, useAction, useLoad } from '../components.tsx'
import { useMcpGrants } from '../mcp-grants.ts'
import { href, navigate } from '../router.ts'
import type { Agent, Connection } from '../types.ts'

interface EndUser {
  id: string
  displayName: string | null
  email: string | null
  createdAt: string
  updatedAt: string
}
interface Settings {
  allowedOrigins: string[]
  notificationUrl: string | null
  notificationSecret?: string
}
interface Notice {
  id: string
  type: string
  status: 'pending' | 'delivered' | 'failed'
  attempts: number
  lastError: string | null
  createdAt: string
  body: { data: { endUserId: string | null; accountName: string; connector: string; reason: string | null } }
}

export function EndUsersPage() {
  const [cursor, setCursor] = useState<string | undefined>(undefined)
  const list = useLoad(
    (signal) =>
      get<{ endUsers: EndUser[]; next: string | null }>('/v1/end-users', { cursor, limit: 50 }, signal),
    [cursor],
  )
  return (
    <section aria-labelledby="end-users-title">
      <h1 id="end-users-title" tabIndex={-1}>
        End users
      </h1>
      <p className="lede">
        Your own customers: each connects accounts through a connect link on Patchbay's hosted page, and
        agents bound to one use only their connections. See the End users documentation page.
      </p>
      <ErrorBox error={list.error} title="End users" />
      {!list.data ? (
        list.error ? null : (
          <Loading />
        )
      ) : list.data.endUsers.length === 0 ? (
        <p className="muted">No end users yet: they appear with the first connect link made for them.</p>
      ) : (
        <div className="table-wrap">
          <table className="stack">
            <caption className="visually-hidden">End users</caption>
            <thead>
              <tr>
                <th scope="col">Id</th>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Added</th>
              </tr>
            </thead>
            <tbody>
              {list.data.endUsers.map((u) => (
                <tr key={u.id}>
                  <th scope="row">
                    <a href={href('end-users', u.id)}>{u.id}</a>
                  </th>
                  <td data-label="Name">{u.displayName ?? '—'}</td>
                  <td data-label="Email">{u.email ?? '—'}</td>
                  <td data-label="Added">
                    <Time iso={u.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.data?.next ? (
        <button type="button" onClick={() => setCursor(list.data?.next ?? undefined)}>
          Next page
        </button>
      ) : null}
      <SettingsPanel />
      <NoticesPanel />
    </section>
  )
}

function SettingsPanel() {
  const settings = useLoad((signal) => get<Settings>('/v1/workspace/settings', undefined, signal), [])
  if (settings.error) return <ErrorBox error={settings.error} title="End-user settings" />
  if (!settings.data) return <Loading what="Loading the settings" />
  return (
    <SettingsForm key={JSON.stringify(settings.data)} initial={settings.data} onSaved={settings.reload} />
  )
}

function SettingsForm({ initial, onSaved }: { initial: Settings; onSaved: () => Promise<void> }) {
  const [origins, setOrigins] = useState(initial.allowedOrigins.join('\n'))
  const [url, setUrl] = useState(initial.notificationUrl ?? '')
  const [secret, setSecret] = useState<string | null>(null)
  const save = useAction(async (rotate: boolean) => {
    const r = await patch<Settings>('/v1/workspace/settings', {
      allowedOrigins: origins
        .split(/[\s,]+/)
        .map((o) => o.trim())
        .filter(Boolean),
      notificationUrl: url.trim() || null,
      ...(rotate ? { rotateNotificationSecret: true } : {}),
    })
    setSecret(r.notificationSecret ?? null)
    if (!r.notificationSecret) await onSaved()
  })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    void save.run(false)
  }
  return (
    <form className="form panel" onSubmit={submit} aria-labelledby="eu-settings-title">
      <h2 id="eu-settings-title">Connect links and notices</h2>
      {/* Held while saving, as an agent's settings: the form starts over from what was saved. */}
      <fieldset className="bare" disabled={save.pending}>
        <div className="field">
          <label htmlFor="eu-origins">Allowed origins (where connect links may return; one a line)</label>
          <textarea
            id="eu-origins"
            rows={3}
            value={origins}
            placeholder="https://app.example.com"
            onChange={(e) => setOrigins(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="eu-url">Notification URL (lifecycle notices are POSTed here, signed)</label>
          <input
            id="eu-url"
            type="url"
            value={url}
            placeholder="https://app.example.com/hooks/patchbay"
            onChange={(e) => setUrl(e.target.value)}
          />
        </div>
      </fieldset>
      {secret ? <ShownOnce label="Notification signing secret" value={secret} /> : null}
      <ErrorBox error={save.error} title="The settings could not be saved" />
      <div className="row wrap">
        <button type="submit" className="primary" disabled={save.pending}>
          {save.pending ? 'Saving…' : 'Save settings'}
        </button>
        {initial.notificationUrl ? (
          <button type="button" disabled={save.pending} onClick={() => void save.run(true)}>
            New signing secret
          </button>
        ) : null}
      </div>
    </form>
  )
}

function NoticesPanel({ endUserId }: { endUserId?: string }) {
  const notices = useLoad(
    (signal) => get<{ notices: Notice[]; next: string | null }>('/v1/notices', { limit: 50 }, signal),
    [],
  )
  const replay = useAction(async (id: string) => {
    await post(`/v1/notices/${enc(id)}/replay`)
    await notices.reload()
  })
  const shown = notices.data?.notices.filter((n) => !endUserId || n.body.data.endUserId === endUserId)
  return (
    <section className="panel" aria-labelledby="eu-notices-title">
      <h2 id="eu-notices-title">Notices sent to the notification URL</h2>
      <ErrorBox error={notices.error ?? replay.error} title="Notices" />
      {!shown ? (
        notices.error ? null : (
          <Loading />
        )
      ) : shown.length === 0 ? (
        <p className="muted">No notices yet.</p>
      ) : (
        <div className="table-wrap">
          <table className="stack">
            <caption className="visually-hidden">Notices</caption>
            <thead>
              <tr>
                <th scope="col">Notice</th>
                <th scope="col">Account</th>
                <th scope="col">Status</th>
                <th scope="col">Sent</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {shown.map((n) => (
                <tr key={n.id}>
                  <th scope="row">{n.type}</th>
                  <td data-label="Account">
                    {n.body.data.accountName} ({n.body.data.connector})
                    {n.body.data.endUserId ? ` · ${n.body.data.endUserId}` : ''}
                    {n.body.data.reason ? <div className="muted">{n.body.data.reason}</div> : null}
                  </td>
                  <td data-label="Status">
                    <Status value={n.status} /> {n.attempts} attempt{n.attempts === 1 ? '' : 's'}
                    {n.lastError ? <div className="muted">{n.lastError}</div> : null}
                  </td>
                  <td data-label="Sent">
                    <Time iso={n.createdAt} />
                  </td>
                  <td>
                    <button type="button" disabled={replay.pending} onClick={() => void replay.run(n.id)}>
                      Replay
                    </button>
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

export function EndUserPage({ id }: { id: string }) {
  const user = useLoad(
    (signal) =>
      get<EndUser & { connections: Connection[]; agents: Agent[] }>(
        `/v1/end-users/${enc(id)}`,
        undefined,
        signal,
      ),
    [id],
  )
  const [link, setLink] = useState<{ url: string; expiresAt: string } | null>(null)
  const [returnTo, setReturnTo] = useState('')
  const [allowMcp, setAllowMcp] = useState(false)
  const makeLink = useAction(async () => {
    const r = await post<{ url: string; expiresAt: string }>('/v1/connect-sessions', {
      endUserId: id,
      ...(returnTo.trim() ? { returnTo: returnTo.trim() } : {}),
      ...(allowMcp ? { allowMcpGrant: true } : {}),
    })
    setLink(r)
  })
  const remove = useAction(async () => {
    await del(`/v1/end-users/${enc(id)}`)
    navigate('end-users')
  })
  if (user.error)
    return (
      <section>
        <h1 tabIndex={-1}>End user {id}</h1>
        <ErrorBox error={user.error} title="End user" />
      </section>
    )
  if (!user.data) return <Loading what="Loading the end user" />
  const u = user.data
  return (
    <section aria-labelledby="end-user-title">
      <p>
        <a href={href('end-users')}>End users</a>
      </p>
      <h1 id="end-user-title" tabIndex={-1}>
        {u.displayName ? `${u.displayName} (${u.id})` : u.id}
      </h1>
      {u.email ? <p className="muted">{u.email}</p> : null}
      <section className="panel" aria-labelledby="eu-connections-title">
        <h2 id="eu-connections-title">Connections</h2>
        {u.connections.length === 0 ? (
          <p className="muted">No connections yet.</p>
        ) : (
          <ul aria-label={`Connections of ${u.id}`}>
            {u.connections.map((c) => (
              <li key={c.id}>
                {c.accountName} ({c.connector}, {c.authMethod}) — <Status value={c.status} />{' '}
                <code>{c.id}</code>
                {c.statusReason ? <div className="muted">{c.statusReason}</div> : null}
              </li>
            ))}
          </ul>
        )}
      </section>
      <section className="panel" aria-labelledby="eu-agents-title">
        <h2 id="eu-agents-title">Agents bound to {u.id}</h2>
        {u.agents.length === 0 ? (
          <p className="muted">No agent acts for this end user yet (give an agent endUserId to bind it).</p>
        ) : (
          <ul>
            {u.agents.map((a) => (
              <li key={a.id}>
                <a href={href('agents', a.id)}>{a.name}</a>
              </li>
            ))}
          </ul>
        )}
      </section>
      <form
        className="form panel"
        aria-labelledby="eu-link-title"
        onSubmit={(e) => {
          e.preventDefault()
          void makeLink.run()
        }}
      >
        <h2 id="eu-link-title">Connect link</h2>
        <p className="muted">
          A single-use link to the hosted connect page, valid 30 minutes: the end user connects an account
          there without any workspace key.
        </p>
        <div className="field">
          <label htmlFor="eu-return">Return to (optional, on an allowed origin)</label>
          <input id="eu-return" type="url" value={returnTo} onChange={(e) => setReturnTo(e.target.value)} />
        </div>
        <div className="field">
          <label>
            <input type="checkbox" checked={allowMcp} onChange={(e) => setAllowMcp(e.target.checked)} /> May
            allow an MCP client instead (pasted on the MCP sign-in page: an agent bound to this end user)
          </label>
        </div>
        {link ? <ShownOnce label="Connect link" value={link.url} /> : null}
        <ErrorBox error={makeLink.error} title="The link could not be made" />
        <button type="submit" className="primary" disabled={makeLink.pending}>
          {makeLink.pending ? 'Making…' : 'Make a connect link'}
        </button>
      </form>
      <EndUserMcpGrants endUserId={u.id} />
      <NoticesPanel endUserId={u.id} />
      <section className="panel" aria-labelledby="eu-danger-title">
        <h2 id="eu-danger-title">Remove</h2>
        <p>
          Removes the end user's connections (their upstream webhooks and credentials), their events and
          connect links; agents bound to them keep the binding but lose the connections.
        </p>
        <ErrorBox error={remove.error} title="The end user could not be removed" />
        <button
          type="button"
          className="danger"
          disabled={remove.pending}
          onClick={() => {
            if (confirm(`Remove end user ${u.id} and their connections?`)) void remove.run()
          }}
        >
          Remove end user
        </button>
      </section>
    </section>
  )
}

/** The MCP clients allowed to act as an agent bound to this end user (by them or a member), revocable. */
function EndUserMcpGrants({ endUserId }: { endUserId: string }) {
  const { grants, revoke, shown: theirs } = useMcpGrants((g) => g.endUserId === endUserId, [endUserId])
  return (
    <section className="panel" aria-labelledby="eu-mcp-title">
      <h2 id="eu-mcp-title">MCP clients</h2>
      <ErrorBox error={grants.error ?? revoke.error} title="MCP clients" />
      {theirs.length > 0 ? (
        <ul aria-label={`MCP clients of ${endUserId}`}>
          {theirs.map((g) => (
            <li key={g.id}>
              {g.client.name ?? g.client.id} as{' '}
              <a href={href('agents', g.agent.id)}>{g.agent.name ?? g.agent.id}</a>, allowed by{' '}
              {g.connectSessionId ? 'the end user (connect link)' : 'a member'} <Time iso={g.createdAt} />{' '}
              <button
                type="button"
                className="danger"
                disabled={revoke.pending}
                onClick={() => revoke.run(g)}
                aria-label={`Revoke ${g.client.name ?? g.client.id}`}
              >
                Revoke
              </button>
            </li>
          ))}
        </ul>
      ) : grants.data ? (
        <p className="muted">No MCP client acts for this end user.</p>
      ) : null}
    </section>
  )
}
