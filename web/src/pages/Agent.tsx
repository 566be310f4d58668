// One agent: its settings (connections, scope, delivery), signing secret, keys, the MCP clients
// signed in as it (OAuth grants), triggers and tools.
import { type FormEvent, useId, useState } from 'react'
import { del, enc, get, getAll, patch, post } from '../api.ts'
import { ErrorBox, Loading, Notice, ShownOnce, Status, Time, useAction, useLoad } from '../components.tsx'
import { useMcpGrants } from '../mcp-grants.ts'
import { href, navigate } from '../router.ts'
import type { Agent, AgentKey } from '../types.ts'
import { useWorkspace } from '../workspace.tsx'
import {
  ConnectionsPicker,
  type Delivery,
  DeliveryEditor,
  type Scope,
  ScopeEditor,
  type ToolSelection,
  ToolSelectionEditor,
} from './agent-settings.tsx'
import { ToolsSection } from './Tools.tsx'
import { TriggersSection } from './Triggers.tsx'

export function AgentPage({ id }: { id: string }) {
  const agent = useLoad((signal) => get<Agent>(`/v1/agents/${enc(id)}`, undefined, signal), [id])
  if (agent.error)
    return (
      <section>
        <p className="crumbs">
          <a href={href('agents')}>Agents</a>
        </p>
        <h1 tabIndex={-1}>Agent</h1>
        <ErrorBox error={agent.error} title="Agent" />
      </section>
    )
  if (!agent.data) return <Loading what="Loading the agent" />
  const a = agent.data
  return (
    <section aria-labelledby="agent-title">
      <p className="crumbs">
        <a href={href('agents')}>Agents</a> › {a.name}
      </p>
      <h1 id="agent-title" tabIndex={-1}>
        {a.name}
      </h1>
      <p className="muted small">
        <code>{a.id}</code> · created <Time iso={a.createdAt} />
      </p>
      <nav aria-label="Agent sections" className="subnav">
        <button type="button" className="link" onClick={jump('agent-settings')}>
          Settings
        </button>
        <button type="button" className="link" onClick={jump('agent-keys')}>
          Keys
        </button>
        <button type="button" className="link" onClick={jump('agent-mcp-grants')}>
          MCP clients
        </button>
        <button type="button" className="link" onClick={jump('agent-triggers')}>
          Triggers
        </button>
        <button type="button" className="link" onClick={jump('agent-tools')}>
          Tools
        </button>
      </nav>
      <Settings key={a.updatedAt} agent={a} onSaved={agent.reload} />
      <Keys agent={a} />
      <McpGrants agent={a} />
      <TriggersSection agent={a} />
      <ToolsSection agent={a} />
      <DangerZone agent={a} />
    </section>
  )
}

/** In-page links without touching the hash route. */
function jump(id: string) {
  return () => {
    const el = document.getElementById(id)
    el?.scrollIntoView({ block: 'start' })
    el?.querySelector<HTMLElement>('h2')?.focus()
  }
}

function Settings({ agent, onSaved }: { agent: Agent; onSaved: () => Promise<void> }) {
  const ws = useWorkspace()
  const [name, setName] = useState(agent.name)
  const [connectionIds, setConnectionIds] = useState(agent.connectionIds)
  const [scope, setScope] = useState<Scope>(agent.scope)
  const [delivery, setDelivery] = useState<Delivery>(agent.delivery)
  const [toolSelection, setToolSelection] = useState<ToolSelection>(agent.toolSelection)
  const [saved, setSaved] = useState(false)
  const [secret, setSecret] = useState<string | null>(null)
  const save = useAction(async () => {
    setSaved(false)
    await patch(`/v1/agents/${enc(agent.id)}`, { name, connectionIds, scope, delivery, toolSelection })
    setSaved(true)
    await onSaved()
  })
  const rotate = useAction(async () => {
    const r = await post<{ signingSecret: string }>(`/v1/agents/${enc(agent.id)}/webhook-secret/rotate`)
    setSecret(r.signingSecret)
  })
  const nameId = useId()
  const submit = (e: FormEvent) => {
    e.preventDefault()
    void save.run()
  }
  return (
    <section id="agent-settings" className="panel" aria-labelledby="agent-settings-title">
      <h2 id="agent-settings-title" tabIndex={-1}>
        Settings
      </h2>
      <form className="form" onSubmit={submit} aria-label="Agent settings">
        {/* Held while saving: the saved agent is read again and the form starts over from it, so an
            edit made meanwhile would be lost without a word. */}
        <fieldset className="bare" disabled={save.pending}>
          <div className="field">
            <label htmlFor={nameId}>Name</label>
            <input id={nameId} value={name} onChange={(e) => setName(e.target.value)} />
          </div>
          {agent.endUserId ? (
            <p className="muted">
              Acts for end user <a href={href('end-users', agent.endUserId)}>{agent.endUserId}</a>: it uses
              only their connections.
            </p>
          ) : null}
          <ConnectionsPicker value={connectionIds} onChange={setConnectionIds} endUserId={agent.endUserId} />
          {agent.connectionsNeeded.map((n) => (
            <p key={n.connectionId} className="small warn-text" role="note">
              Connection needed: {n.accountName} ({n.connector}, {n.connectionId}) was disconnected{' '}
              <Time iso={n.disconnectedAt} />. Connect the account again on the Connections page and restore,
              or tick another {n.connector} connection.
            </p>
          ))}
          <ScopeEditor
            connections={ws.connections.filter((c) => connectionIds.includes(c.id))}
            value={scope}
            onChange={setScope}
          />
          <DeliveryEditor value={delivery} onChange={setDelivery} />
          <ToolSelectionEditor
            connections={ws.connections.filter((c) => connectionIds.includes(c.id))}
            value={toolSelection}
            onChange={setToolSelection}
          />
        </fieldset>
        <ErrorBox error={save.error} title="The settings could not be saved" />
        <Notice>{saved ? 'Settings saved.' : null}</Notice>
        <div className="row wrap">
          <button type="submit" className="primary" disabled={save.pending}>
            {save.pending ? 'Saving…' : 'Save settings'}
          </button>
          <button type="button" disabled={rotate.pending} onClick={() => rotate.run()}>
            Rotate webhook signing secret
          </button>
        </div>
        <ErrorBox error={rotate.error} title="Rotation failed" />
        {secret ? <ShownOnce label="New webhook signing secret" value={secret} /> : null}
      </form>
    </section>
  )
}

function Keys({ agent }: { agent: Agent }) {
  const keys = useLoad(
    (signal) => getAll<'keys', AgentKey>(`/v1/agents/${enc(agent.id)}/keys`, 'keys', undefined, signal),
    [agent.id],
  )
  const [name, setName] = useState('')
  const [created, setCreated] = useState<(AgentKey & { key: string }) | null>(null)
  const create = useAction(async () => {
    const k = await post<AgentKey & { key: string }>(`/v1/agents/${enc(agent.id)}/keys`, name ? { name } : {})
    setCreated(k)
    setName('')
    await keys.reload()
  })
  const revoke = useAction(async (k: AgentKey) => {
    await del(`/v1/agents/${enc(agent.id)}/keys/${enc(k.id)}`)
    await keys.reload()
  })
  const nameId = useId()
  return (
    <section id="agent-keys" className="panel" aria-labelledby="agent-keys-title">
      <h2 id="agent-keys-title" tabIndex={-1}>
        Keys
      </h2>
      <p className="hint">An agent key acts as this agent only: its connections, its scope, its tools.</p>
      <form
        className="row wrap end"
        onSubmit={(e) => {
          e.preventDefault()
          void create.run()
        }}
        aria-label="Create an agent key"
      >
        <div className="field">
          <label htmlFor={nameId}>Key name</label>
          <input
            id={nameId}
            value={name}
            placeholder="e.g. production"
            onChange={(e) => setName(e.target.value)}
          />
        </div>
        <button type="submit" disabled={create.pending}>
          Create key
        </button>
      </form>
      <ErrorBox error={create.error} title="The key could not be created" />
      {created ? (
        <ShownOnce label={`Agent key ${created.name || created.keyPrefix}`} value={created.key} />
      ) : null}
      <ErrorBox error={keys.error ?? revoke.error} title="Keys" />
      {keys.data && keys.data.keys.length > 0 ? (
        <div className="table-wrap">
          <table className="stack">
            <caption className="visually-hidden">Agent keys</caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Name</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.data.keys.map((k) => (
                <tr key={k.id}>
                  <td data-label="Key">
                    <code>{k.keyPrefix}…</code>
                  </td>
                  <td data-label="Name">{k.name || <span className="muted">—</span>}</td>
                  <td data-label="Created">
                    <Time iso={k.createdAt} />
                  </td>
                  <td data-label="Last used">
                    <Time iso={k.lastUsedAt} />
                  </td>
                  <td data-label="Status">
                    {k.revokedAt ? <Status value="revoked" /> : <Status value="active" />}
                  </td>
                  <td>
                    {k.revokedAt ? null : (
                      <button
                        type="button"
                        className="danger"
                        disabled={revoke.pending}
                        onClick={() => revoke.run(k)}
                        aria-label={`Revoke key ${k.keyPrefix}`}
                      >
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : keys.data ? (
        <p className="muted">No keys yet.</p>
      ) : null}
    </section>
  )
}

/** The MCP clients a person allowed to act as this agent (signed in with OAuth), revocable. */
function McpGrants({ agent }: { agent: Agent }) {
  const { grants, revoke, shown: mine } = useMcpGrants((g) => g.agent.id === agent.id, [agent.id])
  return (
    <section id="agent-mcp-grants" className="panel" aria-labelledby="agent-mcp-grants-title">
      <h2 id="agent-mcp-grants-title" tabIndex={-1}>
        MCP clients
      </h2>
      <p className="hint">
        MCP clients (desktop assistants, IDEs) added by the address <code>{`${location.origin}/mcp`}</code>{' '}
        sign in with OAuth: a member chooses this agent on Patchbay’s consent page (or, for an agent bound to
        an end user, that end user with a connect link), and the client acts as it. Revoking ends its access
        at once.
      </p>
      <ErrorBox error={grants.error ?? revoke.error} title="MCP clients" />
      {mine.length > 0 ? (
        <div className="table-wrap">
          <table className="stack">
            <caption className="visually-hidden">MCP clients signed in as this agent</caption>
            <thead>
              <tr>
                <th scope="col">Client</th>
                <th scope="col">Allowed by</th>
                <th scope="col">Granted</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {mine.map((g) => (
                <tr key={g.id}>
                  <td data-label="Client">
                    {g.client.name ?? <span className="muted">unnamed</span>}{' '}
                    <code className="small">{g.client.id}</code>
                  </td>
                  <td data-label="Allowed by">
                    {g.connectSessionId ? `end user ${g.endUserId ?? ''} (connect link)` : 'a member'}
                  </td>
                  <td data-label="Granted">
                    <Time iso={g.createdAt} />
                  </td>
                  <td data-label="Last used">
                    <Time iso={g.lastUsedAt} />
                  </td>
                  <td>
                    <button
                      type="button"
                      className="danger"
                      disabled={revoke.pending}
                      onClick={() => revoke.run(g)}
                      aria-label={`Revoke ${g.client.name ?? g.client.id}`}
                    >
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : grants.data ? (
        <p className="muted">No MCP client has signed in as this agent.</p>
      ) : null}
    </section>
  )
}

function DangerZone({ agent }: { agent: Agent }) {
  const [confirm, setConfirm] = useState(false)
  const remove = useAction(async () => {
    await del(`/v1/agents/${enc(agent.id)}`)
    navigate('agents')
  })
  return (
    <section className="panel danger-zone" aria-labelledby="agent-delete-title">
      <h2 id="agent-delete-title">Delete the agent</h2>
      <p className="hint">Its tools and tool runs go with it; its keys stop working at once.</p>
      {confirm ? (
        <div className="row">
          <button type="button" className="danger" disabled={remove.pending} onClick={() => remove.run()}>
            Yes, delete {agent.name}
          </button>
          <button type="button" onClick={() => setConfirm(false)}>
            Cancel
          </button>
        </div>
      ) : (
        <button type="button" className="danger" onClick={() => setConfirm(true)}>
          Delete {agent.name}
        </button>
      )}
      <ErrorBox error={remove.error} title="The agent could not be deleted" />
    </section>
  )
}
