// The workspace's people and access: members and invitations, workspace keys, the audit log, the
// person's own sessions, and the workspace's settings. Each tab is one part of the API
// (/v1/workspaces/{id}/members and …/invitations, /v1/keys, /v1/audit, /v1/me/sessions,
// /v1/workspaces/{id}); what a role may not do is refused by the API and shown in words.
import { type FormEvent, useState } from 'react'
import { del, enc, get, getAll, patch, post } from '../api.ts'
import { ErrorBox, Field, Loading, Notice, ShownOnce, Time, useAction, useLoad } from '../components.tsx'
import { href, type Route } from '../router.ts'

const ROLES = ['owner', 'admin', 'member', 'viewer'] as const

const tabs = [
  { id: 'members', label: 'Members' },
  { id: 'keys', label: 'Keys' },
  { id: 'audit', label: 'Audit log' },
  { id: 'sessions', label: 'My sessions and password' },
  { id: 'settings', label: 'Settings' },
] as const

export interface Me {
  person: { id: string; email: string; name: string }
  workspaces: Array<{ id: string; name: string; role: string }>
  csrfToken: string
}

export function WorkspacePage({
  route,
  me,
  workspaceId: chosen,
}: {
  route: Route
  me: Me | null
  workspaceId: string | null
}) {
  const tab = route.parts[1] ?? 'members'
  // With a workspace key there is no choice: the key's own workspace.
  const own = useLoad(
    (s) =>
      chosen
        ? Promise.resolve(null)
        : get<{ workspaces: Array<{ id: string; name: string; role: string | null }> }>(
            '/v1/workspaces',
            undefined,
            s,
          ),
    [chosen],
  )
  const workspaceId = chosen ?? own.data?.workspaces[0]?.id ?? null
  const ws =
    me?.workspaces.find((w) => w.id === workspaceId) ??
    (own.data?.workspaces[0]
      ? { ...own.data.workspaces[0], role: own.data.workspaces[0].role ?? 'key' }
      : null)
  return (
    <section>
      <h1 tabIndex={-1}>{ws ? `Workspace: ${ws.name}` : 'Workspace'}</h1>
      {ws ? <p>Your role here: {ws.role}.</p> : null}
      <nav aria-label="Workspace" className="tabs">
        <ul>
          {tabs.map((t) => (
            <li key={t.id}>
              <a href={href('workspace', t.id)} aria-current={tab === t.id ? 'page' : undefined}>
                {t.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      {tab === 'members' ? (
        workspaceId ? (
          <Members workspaceId={workspaceId} />
        ) : (
          <Loading what="Loading the workspace" />
        )
      ) : tab === 'keys' ? (
        <Keys />
      ) : tab === 'audit' ? (
        <Audit />
      ) : tab === 'sessions' ? (
        me ? (
          <Sessions />
        ) : (
          <p>Sessions belong to a signed-in person.</p>
        )
      ) : (
        <Settings workspaceId={workspaceId} />
      )}
    </section>
  )
}

function RoleSelect({ id, value, onChange }: { id?: string; value: string; onChange: (v: string) => void }) {
  return (
    <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
      {ROLES.map((r) => (
        <option key={r} value={r}>
          {r}
        </option>
      ))}
    </select>
  )
}

interface Member {
  personId: string
  email: string
  name: string
  role: string
}
interface Invitation {
  id: string
  email: string
  role: string
  status: string
  expiresAt: string
}

function Members({ workspaceId }: { workspaceId: string }) {
  const base = `/v1/workspaces/${enc(workspaceId)}`
  const members = useLoad(
    (s) => getAll<'members', Member>(`${base}/members`, 'members', undefined, s),
    [workspaceId],
  )
  const invitations = useLoad(
    (s) =>
      getAll<'invitations', Invitation>(`${base}/invitations`, 'invitations', undefined, s).catch(() => ({
        invitations: [],
      })),
    [workspaceId],
  )
  const [email, setEmail] = useState('')
  const [role, setRole] = useState('member')
  const [made, setMade] = useState<{ url: string; mailed: boolean; email: string } | null>(null)
  const invite = useAction(async (e: FormEvent) => {
    e.preventDefault()
    const r = await post<{ url: string; mailed: boolean }>(`${base}/invitations`, {
      email: email.trim(),
      role,
    })
    setMade({ url: r.url, mailed: r.mailed, email: email.trim() })
    setEmail('')
    await invitations.reload()
  })
  const change = useAction(async (personId: string, next: string) => {
    await patch(`${base}/members/${enc(personId)}`, { role: next })
    await members.reload()
  })
  const remove = useAction(async (personId: string) => {
    await del(`${base}/members/${enc(personId)}`)
    await members.reload()
  })
  const revoke = useAction(async (id: string) => {
    await del(`${base}/invitations/${enc(id)}`)
    await invitations.reload()
  })
  return (
    <div>
      <h2>Members</h2>
      <ErrorBox error={members.error ?? change.error ?? remove.error} title="Members" />
      {!members.data ? (
        <Loading what="Loading the members" />
      ) : (
        <table>
          <caption className="sr-only">Members of this workspace</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {members.data.members.map((m) => (
              <tr key={m.personId}>
                <td>{m.name}</td>
                <td>{m.email}</td>
                <td>
                  <label className="sr-only" htmlFor={`role-${m.personId}`}>
                    Role of {m.email}
                  </label>
                  <RoleSelect
                    id={`role-${m.personId}`}
                    value={m.role}
                    onChange={(v) => change.run(m.personId, v)}
                  />
                </td>
                <td>
                  <button
                    type="button"
                    onClick={() => remove.run(m.personId)}
                    aria-label={`Remove ${m.email}`}
                  >
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Invite someone</h2>
      <form onSubmit={(e) => invite.run(e)}>
        <Field label="Email" required>
          {(p) => <input {...p} type="email" value={email} onChange={(e) => setEmail(e.target.value)} />}
        </Field>
        <Field label="Role">{(p) => <RoleSelect id={p.id} value={role} onChange={setRole} />}</Field>
        <ErrorBox error={invite.error} title="The invitation was not made" />
        <button type="submit" className="primary" disabled={invite.pending || !email.trim()}>
          {invite.pending ? 'Inviting…' : 'Invite'}
        </button>
      </form>
      {made ? (
        <Notice>
          {made.mailed
            ? `The invitation was mailed to ${made.email}.`
            : `No mail was sent: copy the link to ${made.email}.`}{' '}
          <span>
            Link: <code className="invitation-link">{made.url}</code>
          </span>
        </Notice>
      ) : null}
      <h2>Invitations</h2>
      <ErrorBox error={revoke.error} title="Invitations" />
      {invitations.data && invitations.data.invitations.length > 0 ? (
        <ul className="plain">
          {invitations.data.invitations.map((i) => (
            <li key={i.id}>
              {i.email} as {i.role} — {i.status}, until <Time iso={i.expiresAt} />{' '}
              {i.status === 'pending' ? (
                <button type="button" onClick={() => revoke.run(i.id)}>
                  Revoke
                </button>
              ) : null}
            </li>
          ))}
        </ul>
      ) : (
        <p>No invitations.</p>
      )}
    </div>
  )
}

interface WorkspaceKey {
  id: string
  name: string
  role: string
  prefix: string
  createdAt: string
  createdBy: string | null
  expiresAt: string | null
  lastUsedAt: string | null
  revokedAt: string | null
}

function Keys() {
  const keys = useLoad((s) => getAll<'keys', WorkspaceKey>('/v1/keys', 'keys', undefined, s), [])
  const [name, setName] = useState('')
  const [role, setRole] = useState('member')
  const [expires, setExpires] = useState('')
  const [shown, setShown] = useState<string | null>(null)
  const create = useAction(async (e: FormEvent) => {
    e.preventDefault()
    const r = await post<{ key: string }>('/v1/keys', {
      name: name.trim(),
      role,
      ...(expires ? { expiresAt: new Date(expires).toISOString() } : {}),
    })
    setShown(r.key)
    setName('')
    await keys.reload()
  })
  const revoke = useAction(async (id: string) => {
    await del(`/v1/keys/${enc(id)}`)
    await keys.reload()
  })
  return (
    <div>
      <h2>Workspace keys</h2>
      <p>A key acts on this workspace only, with its role (at most yours). It is shown once.</p>
      <form onSubmit={(e) => create.run(e)}>
        <Field label="Name" required hint="Where it is used, e.g. the deploy pipeline.">
          {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} />}
        </Field>
        <Field label="Role">{(p) => <RoleSelect id={p.id} value={role} onChange={setRole} />}</Field>
        <Field label="Expires (optional)">
          {(p) => <input {...p} type="date" value={expires} onChange={(e) => setExpires(e.target.value)} />}
        </Field>
        <ErrorBox error={create.error} title="The key was not made" />
        <button type="submit" className="primary" disabled={create.pending || !name.trim()}>
          Create key
        </button>
      </form>
      {shown ? <ShownOnce label="The new key" value={shown} /> : null}
      <ErrorBox error={keys.error ?? revoke.error} title="Keys" />
      {!keys.data ? (
        <Loading what="Loading the keys" />
      ) : (
        <table>
          <caption className="sr-only">Workspace keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Key</th>
              <th scope="col">Made by</th>
              <th scope="col">Last used</th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.data.keys.map((k) => (
              <tr key={k.id}>
                <td>{k.name}</td>
                <td>{k.role}</td>
                <td>
                  <code>{k.prefix}…</code>
                </td>
                <td>{k.createdBy ?? '—'}</td>
                <td>
                  <Time iso={k.lastUsedAt} />
                </td>
                <td>{k.expiresAt ? <Time iso={k.expiresAt} /> : 'never'}</td>
                <td>
                  {k.revokedAt ? (
                    'revoked'
                  ) : (
                    <button type="button" onClick={() => revoke.run(k.id)} aria-label={`Revoke ${k.name}`}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  )
}

interface AuditEntry {
  id: string
  at: string
  actor: { kind: string; id: string | null; label: string | null }
  action: string
  object: { kind: string | null; id: string | null }
  outcome: 'ok' | 'refused'
  address: string | null
}

function Audit() {
  const [filters, setFilters] = useState({ actor: '', action: '', object: '' })
  const [pages, setPages] = useState<AuditEntry[][]>([])
  const [next, setNext] = useState<string | null>(null)
  const first = useLoad(
    async (s) => {
      const r = await get<{ entries: AuditEntry[]; next: string | null }>(
        '/v1/audit',
        { actor: filters.actor, action: filters.action, object: filters.object, limit: 50 },
        s,
      )
      setPages([r.entries])
      setNext(r.next)
      return r
    },
    [filters],
  )
  const more = useAction(async () => {
    if (!next) return
    const r = await get<{ entries: AuditEntry[]; next: string | null }>('/v1/audit', {
      actor: filters.actor,
      action: filters.action,
      object: filters.object,
      limit: 50,
      cursor: next,
    })
    setPages((p) => [...p, r.entries])
    setNext(r.next)
  })
  const [draft, setDraft] = useState(filters)
  const entries = pages.flat()
  return (
    <div>
      <h2>Audit log</h2>
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault()
          setFilters(draft)
        }}
      >
        <Field label="Who (person or key id)">
          {(p) => (
            <input
              {...p}
              value={draft.actor}
              onChange={(e) => setDraft({ ...draft, actor: e.target.value })}
            />
          )}
        </Field>
        <Field label="Action (e.g. member.added)">
          {(p) => (
            <input
              {...p}
              value={draft.action}
              onChange={(e) => setDraft({ ...draft, action: e.target.value })}
            />
          )}
        </Field>
        <Field label="Object id">
          {(p) => (
            <input
              {...p}
              value={draft.object}
              onChange={(e) => setDraft({ ...draft, object: e.target.value })}
            />
          )}
        </Field>
        <button type="submit">Filter</button>
      </form>
      <ErrorBox error={first.error ?? more.error} title="The audit log could not be read" />
      {!first.data ? (
        <Loading what="Loading the audit log" />
      ) : entries.length === 0 ? (
        <p>
          Nothing recorded{filters.actor || filters.action || filters.object ? ' for these filters' : ''}.
        </p>
      ) : (
        <table className="audit">
          <caption className="sr-only">Audit log, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">Action</th>
              <th scope="col">Object</th>
              <th scope="col">Outcome</th>
              <th scope="col">From</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((a) => (
              <tr key={a.id}>
                <td>
                  <Time iso={a.at} />
                </td>
                <td>{a.actor.label ?? a.actor.id ?? a.actor.kind}</td>
                <td>
                  <code>{a.action}</code>
                </td>
                <td>{a.object.id ? `${a.object.kind ?? ''} ${a.object.id}` : '—'}</td>
                <td>{a.outcome}</td>
                <td>{a.address ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next ? (
        <button type="button" onClick={() => more.run()} disabled={more.pending}>
          Older entries
        </button>
      ) : null}
    </div>
  )
}

interface SessionView {
  id: string
  current: boolean
  createdAt: string
  lastSeenAt: string
  address: string | null
  userAgent: string | null
}

function Sessions() {
  const sessions = useLoad(
    (s) => getAll<'sessions', SessionView>('/v1/me/sessions', 'sessions', undefined, s),
    [],
  )
  const end = useAction(async (id: string) => {
    await del(`/v1/me/sessions/${enc(id)}`)
    await sessions.reload()
  })
  const all = useAction(async () => {
    await post('/v1/me/sessions/end-all', {})
    location.reload()
  })
  return (
    <div>
      <h2>My sessions</h2>
      <ErrorBox error={sessions.error ?? end.error ?? all.error} title="Sessions" />
      {!sessions.data ? (
        <Loading what="Loading your sessions" />
      ) : (
        <ul className="plain">
          {sessions.data.sessions.map((s) => (
            <li key={s.id}>
              {s.current ? <strong>This browser</strong> : (s.userAgent ?? 'Another browser')} — from{' '}
              {s.address ?? 'an unknown address'}, last seen <Time iso={s.lastSeenAt} />{' '}
              {s.current ? null : (
                <button type="button" onClick={() => end.run(s.id)}>
                  End
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <button type="button" onClick={() => all.run()}>
        Sign out everywhere
      </button>
      <ChangePassword onChanged={() => sessions.reload()} />
    </div>
  )
}

/** The signed-in person's password: the current one, then the new; their other sessions end. */
function ChangePassword({ onChanged }: { onChanged: () => void }) {
  const [current, setCurrent] = useState('')
  const [next, setNext] = useState('')
  const [done, setDone] = useState<string | null>(null)
  const change = useAction(async (e: FormEvent) => {
    e.preventDefault()
    setDone(null)
    const res = await post<{ otherSessionsEnded: number }>('/v1/me/password', {
      currentPassword: current,
      newPassword: next,
    })
    setCurrent('')
    setNext('')
    setDone(
      `Your password was changed; ${res.otherSessionsEnded} other session${res.otherSessionsEnded === 1 ? '' : 's'} ended.`,
    )
    onChanged()
  })
  return (
    <form onSubmit={(e) => change.run(e)} aria-labelledby="password-title">
      <h2 id="password-title">My password</h2>
      <Field label="Current password" required>
        {(p) => (
          <input
            {...p}
            type="password"
            autoComplete="current-password"
            value={current}
            onChange={(e) => setCurrent(e.target.value)}
          />
        )}
      </Field>
      <Field label="New password" required>
        {(p) => (
          <input
            {...p}
            type="password"
            autoComplete="new-password"
            value={next}
            onChange={(e) => setNext(e.target.value)}
          />
        )}
      </Field>
      <ErrorBox error={change.error} title="The password was not changed" />
      {done ? <Notice>{done}</Notice> : null}
      <button type="submit" className="primary" disabled={change.pending || !current || !next}>
        Change password
      </button>
    </form>
  )
}

function Settings({ workspaceId }: { workspaceId: string | null }) {
  const ws = useLoad(
    (s) =>
      workspaceId
        ? get<{ id: string; name: string; role: string | null; settings: Record<string, unknown> }>(
            `/v1/workspaces/${enc(workspaceId)}`,
            undefined,
            s,
          )
        : Promise.resolve(null),
    [workspaceId],
  )
  const [name, setName] = useState<string | null>(null)
  const [saved, setSaved] = useState(false)
  const save = useAction(async (e: FormEvent) => {
    e.preventDefault()
    if (!workspaceId || name === null) return
    await patch(`/v1/workspaces/${enc(workspaceId)}`, { name: name.trim() })
    setSaved(true)
    await ws.reload()
  })
  const [confirm, setConfirm] = useState('')
  const remove = useAction(async () => {
    if (!workspaceId) return
    await del(`/v1/workspaces/${enc(workspaceId)}`)
    location.hash = href('connections')
    location.reload()
  })
  if (!workspaceId) return <p>Workspace settings are changed by a signed-in person.</p>
  if (ws.error) return <ErrorBox error={ws.error} title="The workspace could not be loaded" />
  if (!ws.data) return <Loading what="Loading the workspace" />
  return (
    <div>
      <h2>Settings</h2>
      <form onSubmit={(e) => save.run(e)}>
        <Field label="Name" required>
          {(p) => <input {...p} value={name ?? ws.data!.name} onChange={(e) => setName(e.target.value)} />}
        </Field>
        <ErrorBox error={save.error} title="Not saved" />
        <button type="submit" className="primary" disabled={save.pending}>
          Save
        </button>
      </form>
      {saved ? <Notice>Saved.</Notice> : null}
      <h2>Delete this workspace</h2>
      <p>
        Owners only. Removes its connections (upstream webhooks unregistered, secrets destroyed), agents,
        keys, triggers, tools, events and runs. Type its name to confirm.
      </p>
      <Field label="Workspace name">
        {(p) => <input {...p} value={confirm} onChange={(e) => setConfirm(e.target.value)} />}
      </Field>
      <ErrorBox error={remove.error} title="Not deleted" />
      <button
        type="button"
        className="danger"
        disabled={confirm !== ws.data.name}
        onClick={() => remove.run()}
      >
        Delete workspace
      </button>
    </div>
  )
}
