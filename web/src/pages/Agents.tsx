// Agents: the list and the "new agent" form.
import { type FormEvent, useState } from 'react'
import { getAll, post } from '../api.ts'
import { ErrorBox, Loading, ShownOnce, Time, useAction, useLoad } from '../components.tsx'
import { href } from '../router.ts'
import type { Agent } from '../types.ts'
import { useWorkspace } from '../workspace.tsx'
import {
  ConnectionsPicker,
  type Delivery,
  DeliveryEditor,
  describeDelivery,
  type Scope,
  ScopeEditor,
} from './agent-settings.tsx'

export function AgentsPage() {
  const agents = useLoad((signal) => getAll<'agents', Agent>('/v1/agents', 'agents', undefined, signal), [])
  const [creating, setCreating] = useState(false)
  const [created, setCreated] = useState<(Agent & { signingSecret: string }) | null>(null)
  return (
    <section aria-labelledby="agents-title">
      <div className="row spread wrap">
        <h1 id="agents-title" tabIndex={-1}>
          Agents
        </h1>
        <button
          type="button"
          className="primary"
          aria-expanded={creating}
          onClick={() => {
            setCreating((c) => !c)
            setCreated(null)
          }}
        >
          New agent
        </button>
      </div>
      <p className="lede">
        An agent is an automated actor: the boards and repositories it may touch, the connections it may use,
        its triggers and tools, and where its events go.
      </p>
      {created ? (
        <div className="panel">
          <p>
            Agent <a href={href('agents', created.id)}>{created.name}</a> was created.
          </p>
          <ShownOnce label="Webhook signing secret" value={created.signingSecret} />
          <p>
            <a href={href('agents', created.id)} className="button primary">
              Open {created.name}
            </a>
          </p>
        </div>
      ) : null}
      {creating ? (
        <NewAgentForm
          onCreated={async (a) => {
            setCreating(false)
            setCreated(a)
            await agents.reload()
          }}
        />
      ) : null}
      <ErrorBox error={agents.error} title="Agents" />
      {!agents.data ? (
        agents.error ? null : (
          <Loading />
        )
      ) : agents.data.agents.length === 0 ? (
        <p className="muted">No agents yet.</p>
      ) : (
        <div className="table-wrap">
          <table className="stack">
            <caption className="visually-hidden">Agents</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Delivery</th>
                <th scope="col">Connections</th>
                <th scope="col">Scope</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {agents.data.agents.map((a) => (
                <tr key={a.id}>
                  <th scope="row">
                    <a href={href('agents', a.id)}>{a.name}</a>
                  </th>
                  <td data-label="Delivery">{describeDelivery(a.delivery)}</td>
                  <td data-label="Connections">
                    {a.connectionIds.length}
                    {a.connectionsNeeded.length ? (
                      <span className="warn-text small">
                        {' '}
                        · connection needed: {a.connectionsNeeded.map((n) => n.accountName).join(', ')}
                      </span>
                    ) : null}
                  </td>
                  <td data-label="Scope">
                    {a.scope.boards.length} board{a.scope.boards.length === 1 ? '' : 's'},{' '}
                    {a.scope.repositories.length} repositor{a.scope.repositories.length === 1 ? 'y' : 'ies'}
                    {Object.entries(a.scope as Record<string, string[]>)
                      .filter(([k]) => k !== 'boards' && k !== 'repositories')
                      .map(([k, v]) => `, ${v.length} ${k}`)
                      .join('')}
                  </td>
                  <td data-label="Created">
                    <Time iso={a.createdAt} />
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

function NewAgentForm({ onCreated }: { onCreated: (a: Agent & { signingSecret: string }) => Promise<void> }) {
  const ws = useWorkspace()
  const [name, setName] = useState('')
  const [connectionIds, setConnectionIds] = useState<string[]>([])
  const [scope, setScope] = useState<Scope>({ boards: [], repositories: [] })
  const [delivery, setDelivery] = useState<Delivery>({ type: 'stream' })
  const create = useAction(async () => {
    const a = await post<Agent & { signingSecret: string }>('/v1/agents', {
      name,
      connectionIds,
      scope,
      delivery,
    })
    await onCreated(a)
  })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    void create.run()
  }
  return (
    <form className="form panel" onSubmit={submit} aria-labelledby="new-agent-title">
      <h2 id="new-agent-title">New agent</h2>
      <div className="field">
        <label htmlFor="agent-name">
          Name<span className="req"> (required)</span>
        </label>
        <input id="agent-name" value={name} required onChange={(e) => setName(e.target.value)} />
      </div>
      <ConnectionsPicker value={connectionIds} onChange={setConnectionIds} />
      <ScopeEditor
        connections={ws.connections.filter((c) => connectionIds.includes(c.id))}
        value={scope}
        onChange={setScope}
      />
      <DeliveryEditor value={delivery} onChange={setDelivery} />
      <ErrorBox error={create.error} title="The agent could not be created" />
      <button type="submit" className="primary" disabled={create.pending || !name.trim()}>
        {create.pending ? 'Creating…' : 'Create agent'}
      </button>
    </form>
  )
}
