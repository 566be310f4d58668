// An agent's triggers: picked from the catalog, configured from their configSchema, with the
// upstream webhook's state (or the poll schedule) and the diagnosis of why one does not fire.
import { type FormEvent, useId, useState } from 'react'
import { del, enc, get, getAll, post } from '../api.ts'
import { choicesOf } from '../choices.ts'
import { Badge, ErrorBox, JsonView, Status, Time, useAction, useLoad } from '../components.tsx'
import { compact, initialValue, invalidFields, SchemaFields } from '../schema-form.tsx'
import type { Agent, Diagnosis, Tool, Trigger } from '../types.ts'
import { useWorkspace } from '../workspace.tsx'

export function TriggersSection({ agent }: { agent: Agent }) {
  const triggers = useLoad(
    (signal) =>
      getAll<'triggers', Trigger>(`/v1/agents/${enc(agent.id)}/triggers`, 'triggers', undefined, signal),
    [agent.id],
  )
  const [adding, setAdding] = useState(false)
  return (
    <section id="agent-triggers" className="panel" aria-labelledby="agent-triggers-title">
      <div className="row spread wrap">
        <h2 id="agent-triggers-title" tabIndex={-1}>
          Triggers
        </h2>
        <button type="button" aria-expanded={adding} onClick={() => setAdding((a) => !a)}>
          New trigger
        </button>
      </div>
      <p className="hint">
        A trigger starts the agent when something happens upstream on a board or repository.
      </p>
      {adding ? (
        <NewTriggerForm
          agent={agent}
          onCreated={async () => {
            setAdding(false)
            await triggers.reload()
          }}
        />
      ) : null}
      <ErrorBox error={triggers.error} title="Triggers" />
      {triggers.data?.triggers.length === 0 ? <p className="muted">No triggers yet.</p> : null}
      <ul className="trigger-list">
        {triggers.data?.triggers.map((t) => (
          <TriggerItem key={t.id} trigger={t} onDeleted={triggers.reload} />
        ))}
      </ul>
    </section>
  )
}

function TriggerItem({ trigger, onDeleted }: { trigger: Trigger; onDeleted: () => Promise<void> }) {
  const ws = useWorkspace()
  const [t, setT] = useState(trigger)
  const [diagnosis, setDiagnosis] = useState<Diagnosis | null>(null)
  const [pollResult, setPollResult] = useState<number | null>(null)
  const refresh = useAction(async () => setT(await get<Trigger>(`/v1/triggers/${enc(t.id)}`)))
  const diagnose = useAction(async () =>
    setDiagnosis(await get<Diagnosis>(`/v1/triggers/${enc(t.id)}/diagnose`)),
  )
  const poll = useAction(async () => {
    const r = await post<{ events: number }>(`/v1/triggers/${enc(t.id)}/poll`)
    setPollResult(r.events)
    await refresh.run()
  })
  const remove = useAction(async () => {
    const r = await del<{ cleanup: { ok: boolean; error?: string } }>(`/v1/triggers/${enc(t.id)}`)
    if (r && !r.cleanup.ok) alertCleanup(r.cleanup.error)
    await onDeleted()
  })
  const headingId = useId()
  return (
    <li className="trigger" aria-labelledby={headingId} data-trigger-id={t.id}>
      <div className="row spread wrap">
        <div>
          <h3 id={headingId}>
            {t.name} {t.instant ? <Badge tone="info">instant</Badge> : <Badge tone="muted">polled</Badge>}
          </h3>
          <p className="muted small">
            <code>{t.trigger}</code> · {ws.connectionLabel(t.connectionId)} · <code>{t.id}</code>
          </p>
          {t.delivery ? (
            <p className="muted small" data-testid="trigger-delivery">
              Delivered by {t.delivery.upstream}
              {t.delivery.reason ? ` — ${t.delivery.reason}` : ''}
            </p>
          ) : null}
        </div>
        <div className="row wrap">
          <button type="button" disabled={refresh.pending} onClick={() => refresh.run()}>
            Refresh state
          </button>
          <button type="button" disabled={diagnose.pending} onClick={() => diagnose.run()}>
            Diagnose
          </button>
          {!t.instant ? (
            <button type="button" disabled={poll.pending} onClick={() => poll.run()}>
              Poll now
            </button>
          ) : null}
          <button type="button" className="danger" disabled={remove.pending} onClick={() => remove.run()}>
            Delete trigger
          </button>
        </div>
      </div>
      <dl className="facts">
        <dt>State</dt>
        <dd>
          <Status value={t.status} />
          {t.paused ? (
            <p className="warn-text small">
              Paused <Time iso={t.paused.at} />: {t.paused.reason}
            </p>
          ) : null}
        </dd>
        <dt>Configuration</dt>
        <dd>
          <code>{JSON.stringify(t.config)}</code>
        </dd>
        {t.webhook ? (
          <>
            <dt>Upstream webhook</dt>
            <dd>
              <Status value={t.webhook.status} /> on <code>{t.webhook.model}</code>
              {t.webhook.upstreamHookId ? (
                <>
                  {' '}
                  · upstream id <code>{t.webhook.upstreamHookId}</code>
                </>
              ) : null}
              {t.webhook.lastError ? (
                <p className="warn-text small">Last error: {t.webhook.lastError}</p>
              ) : null}
            </dd>
          </>
        ) : null}
        {t.poll ? (
          <>
            <dt>Polling</dt>
            <dd>
              every {Math.round(t.poll.intervalMs / 1000)} s · last <Time iso={t.poll.lastPollAt} /> · next{' '}
              <Time iso={t.poll.nextPollAt} />
              {t.poll.lastError ? <p className="warn-text small">Last error: {t.poll.lastError}</p> : null}
            </dd>
          </>
        ) : null}
      </dl>
      {pollResult !== null ? (
        <p role="status" className="small">
          The poll found {pollResult} event{pollResult === 1 ? '' : 's'}.
        </p>
      ) : null}
      <ErrorBox error={refresh.error ?? diagnose.error ?? poll.error ?? remove.error} title="Trigger" />
      {diagnosis ? <DiagnosisView d={diagnosis} /> : null}
    </li>
  )
}

function alertCleanup(error?: string) {
  console.warn(`The upstream webhook could not be removed: ${error ?? 'unknown error'}`)
}

function DiagnosisView({ d }: { d: Diagnosis }) {
  return (
    <section className="diagnosis" aria-label="Diagnosis">
      <p>
        <strong>Diagnosis:</strong> {d.healthy ? <Status value="ok" /> : <Status value="problem" />}{' '}
        {d.healthy ? 'Nothing stops this trigger from firing.' : 'Something stops this trigger from firing.'}
      </p>
      <ul className="diagnosis-checks">
        {d.checks.map((c) => (
          <li key={c.cause}>
            <Status value={c.status} /> <strong>{c.label ?? c.cause}</strong>: {c.message}
            {c.fix ? <div className="small">Fix: {c.fix}</div> : null}
          </li>
        ))}
      </ul>
    </section>
  )
}

function NewTriggerForm({ agent, onCreated }: { agent: Agent; onCreated: () => Promise<void> }) {
  const ws = useWorkspace()
  const withTriggers = ws.connectors.filter((c) => c.triggers.length > 0)
  const [triggerId, setTriggerId] = useState('')
  const trig = ws.trigger(triggerId)
  const usable = ws.connections.filter(
    (c) => agent.connectionIds.includes(c.id) && c.connector === trig?.connector,
  )
  const [connectionId, setConnectionId] = useState('')
  const [config, setConfig] = useState<Record<string, unknown>>({})
  const [target, setTarget] = useState('agent')
  const [pollSeconds, setPollSeconds] = useState('')
  const tools = useLoad(
    (signal) => getAll<'tools', Tool>(`/v1/agents/${enc(agent.id)}/tools`, 'tools', undefined, signal),
    [agent.id],
  )
  const chosenConnection = usable.find((c) => c.id === connectionId) ?? usable[0]
  const create = useAction(async () => {
    const bad = invalidFields(config)
    if (bad.length) throw new Error(`Fix the JSON of ${bad.join(', ')}.`)
    await post(`/v1/agents/${enc(agent.id)}/triggers`, {
      trigger: triggerId,
      connectionId: chosenConnection?.id ?? '',
      config: compact(config),
      target: target === 'agent' ? { type: 'agent' } : { type: 'tool', toolId: target },
      ...(pollSeconds ? { pollIntervalMs: Math.round(Number(pollSeconds) * 1000) } : {}),
    })
    await onCreated()
  })
  const ids = { trigger: useId(), connection: useId(), target: useId(), poll: useId() }
  const submit = (e: FormEvent) => {
    e.preventDefault()
    void create.run()
  }
  // The choices of the config's fields; boards in the agent's scope come first, marked so.
  const listChoices = choicesOf('trigger', triggerId, chosenConnection?.id)
  const choices = async (field: string, parents: Record<string, string>) => {
    const all = await listChoices(field, parents)
    if (field !== 'idBoard') return all
    const inScope = (c: { value: string }) => agent.scope.boards.includes(c.value)
    return [
      ...all.filter(inScope).map((c) => ({ ...c, detail: 'in scope' })),
      ...all.filter((c) => !inScope(c)),
    ]
  }
  return (
    <form className="form panel" onSubmit={submit} aria-label="Add a trigger">
      <div className="field">
        <label htmlFor={ids.trigger}>Trigger</label>
        <select
          id={ids.trigger}
          value={triggerId}
          onChange={(e) => {
            setTriggerId(e.target.value)
            const t = ws.trigger(e.target.value)
            setConfig(t ? ((initialValue(t.configSchema) ?? {}) as Record<string, unknown>) : {})
            setConnectionId('')
          }}
        >
          <option value="">— choose a trigger —</option>
          {withTriggers.map((c) => (
            <optgroup key={c.id} label={c.name}>
              {c.triggers.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                  {t.instant ? ' (Instant)' : ''}
                </option>
              ))}
            </optgroup>
          ))}
        </select>
        {trig ? <p className="hint">{trig.description}</p> : null}
      </div>
      {trig ? (
        <>
          <div className="field">
            <label htmlFor={ids.connection}>Connection</label>
            <select
              id={ids.connection}
              value={chosenConnection?.id ?? ''}
              onChange={(e) => setConnectionId(e.target.value)}
            >
              {usable.length === 0 ? <option value="">None of this agent’s connections fits</option> : null}
              {usable.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.accountName}
                  {c.status === 'lapsed' ? ' (lapsed)' : ''}
                </option>
              ))}
            </select>
            {usable.length === 0 ? (
              <p className="hint">
                Give the agent a {ws.connector(trig.connector)?.name} connection in its settings first.
              </p>
            ) : null}
          </div>
          <fieldset className="inputs">
            <legend>Configuration</legend>
            <SchemaFields
              key={triggerId}
              schema={trig.configSchema}
              value={config}
              onChange={setConfig}
              ctx={{
                pickers: trig.pickers,
                choices,
                choicesBlocked: chosenConnection ? undefined : 'Choose a connection first.',
              }}
            />
          </fieldset>
          <div className="field">
            <label htmlFor={ids.target}>Events go to</label>
            <select id={ids.target} value={target} onChange={(e) => setTarget(e.target.value)}>
              <option value="agent">The agent (its webhook or stream)</option>
              {tools.data?.tools.map((t) => (
                <option key={t.id} value={t.id}>
                  Tool: {t.name}
                </option>
              ))}
            </select>
          </div>
          {!trig.instant ? (
            <div className="field">
              <label htmlFor={ids.poll}>Poll every (seconds)</label>
              <input
                id={ids.poll}
                type="number"
                min={1}
                placeholder="60"
                value={pollSeconds}
                onChange={(e) => setPollSeconds(e.target.value)}
              />
            </div>
          ) : null}
          {trig.sample ? (
            <details>
              <summary>Sample event</summary>
              <JsonView value={trig.sample} />
            </details>
          ) : null}
        </>
      ) : null}
      <ErrorBox error={create.error} title="The trigger could not be added" />
      <button type="submit" className="primary" disabled={!trig || create.pending}>
        {create.pending ? 'Adding…' : 'Add trigger'}
      </button>
    </form>
  )
}
