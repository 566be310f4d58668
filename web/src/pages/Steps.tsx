// The tool step search bar (a connector's name finds its steps) and a step's generated form,
// run with a chosen connection.
import { type FormEvent, useEffect, useId, useState } from 'react'
import { get, post } from '../api.ts'
import { choicesOf, useFieldErrors } from '../choices.ts'
import { Badge, ErrorBox, JsonView, Loading, useAction, useLoad } from '../components.tsx'
import { href, type Route } from '../router.ts'
import { compact, initialValue, invalidFields, SchemaFields } from '../schema-form.tsx'
import type { StepSummary } from '../types.ts'
import { useWorkspace } from '../workspace.tsx'

let lastQuery = ''

export function StepsPage({ route }: { route: Route }) {
  const stepId = route.parts[1]
  return stepId ? <StepRunner stepId={stepId} /> : <StepSearch />
}

function StepSearch() {
  const ws = useWorkspace()
  const [q, setQ] = useState(lastQuery)
  const [debounced, setDebounced] = useState(lastQuery)
  useEffect(() => {
    lastQuery = q
    const t = setTimeout(() => setDebounced(q), 150)
    return () => clearTimeout(t)
  }, [q])
  const found = useLoad(
    (signal) => get<{ steps: StepSummary[] }>('/v1/steps', { q: debounced }, signal),
    [debounced],
  )
  const steps = found.data?.steps ?? []
  return (
    <section aria-labelledby="steps-title">
      <h1 id="steps-title" tabIndex={-1}>
        Tool steps
      </h1>
      <p className="lede">
        Find a connector’s steps by its name (“task”, “code”, “contact”) or a step’s name, then run one with a
        connection.
      </p>
      <search className="searchbar">
        <label htmlFor="step-search">Search tool steps</label>
        <input
          id="step-search"
          type="search"
          placeholder="task-board, Create Card, enrich…"
          autoComplete="off"
          value={q}
          onChange={(e) => setQ(e.target.value)}
          aria-controls="step-results"
        />
      </search>
      <ErrorBox error={found.error} title="Search failed" />
      <p className="muted small" role="status" aria-live="polite">
        {found.loading && !found.data
          ? 'Searching…'
          : `${steps.length} step${steps.length === 1 ? '' : 's'} found`}
      </p>
      <ul id="step-results" className="step-results" aria-label="Tool steps found">
        {steps.map((s) => (
          <li key={s.id}>
            <a href={href('steps', s.id)} className="step-link">
              <span className="step-name">{s.name}</span>
              <span className="muted small">
                {ws.connector(s.connector)?.name ?? s.connector} · <code>{s.id}</code>
              </span>
            </a>
            <HintBadges step={s} />
          </li>
        ))}
      </ul>
    </section>
  )
}

function HintBadges({ step }: { step: StepSummary }) {
  return (
    <span className="badges">
      {step.passThrough ? <Badge tone="info">API call</Badge> : null}
      {step.hints.readOnly ? <Badge tone="ok">read-only</Badge> : null}
      {step.hints.destructive ? <Badge tone="warn">changes data</Badge> : null}
      {step.hints.idempotent ? <Badge tone="muted">idempotent</Badge> : null}
    </span>
  )
}

function StepRunner({ stepId }: { stepId: string }) {
  const loaded = useLoad(
    (signal) => get<StepSummary>(`/v1/steps/${encodeURIComponent(stepId)}`, undefined, signal),
    [stepId],
  )
  if (loaded.error) return <ErrorBox error={loaded.error} title="Step" />
  if (!loaded.data) return <Loading what="Loading the step" />
  return <StepForm key={stepId} step={loaded.data} />
}

interface RunResult {
  output: unknown
  meta: { runId: string; durationMs: number; attempts: number }
}

function StepForm({ step }: { step: StepSummary }) {
  const ws = useWorkspace()
  const connector = ws.connector(step.connector)
  const conns = ws.connections.filter((c) => c.connector === step.connector)
  const [connectionId, setConnectionId] = useState(
    () => (conns.find((c) => c.status === 'active') ?? conns[0])?.id ?? '',
  )
  const [initial] = useState(() => (initialValue(step.inputSchema) ?? {}) as Record<string, unknown>)
  const [value, setValue] = useState(initial)
  const [result, setResult] = useState<RunResult | null>(null)
  const [formKey, setFormKey] = useState(0)
  const sent = compact(value)
  const validation = useFieldErrors(step.inputSchema, sent, initial)
  const run = useAction(async () => {
    setResult(null)
    const bad = invalidFields(value)
    if (bad.length) throw new Error(`Fix the JSON of ${bad.join(', ')} before running.`)
    if (!validation.check())
      throw new Error(
        `Fix the ${validation.count === 1 ? 'field' : `${validation.count} fields`} marked below before running.`,
      )
    setResult(
      await post<RunResult>(`/v1/steps/${encodeURIComponent(step.id)}/run`, {
        connectionId: connectionId || undefined,
        input: sent,
      }),
    )
  })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    void run.run()
  }
  const connId = useId()
  return (
    <section aria-labelledby="step-title">
      <p className="crumbs">
        <a href={href('steps')}>Tool steps</a> › {connector?.name ?? step.connector}
      </p>
      <h1 id="step-title" tabIndex={-1}>
        {step.name}
      </h1>
      <p className="muted">
        <code>{step.id}</code> <HintBadges step={step} />
      </p>
      <p>{step.description}</p>
      <div className="split">
        <form onSubmit={submit} className="form" aria-label={`Run ${step.name}`}>
          <div className="field">
            <label htmlFor={connId}>Connection</label>
            <select id={connId} value={connectionId} onChange={(e) => setConnectionId(e.target.value)}>
              {conns.length === 0 ? (
                <option value="">No {connector?.name ?? step.connector} connection</option>
              ) : null}
              {conns.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.accountName}
                  {c.status === 'lapsed' ? ' (lapsed)' : ''}
                </option>
              ))}
            </select>
            {conns.length === 0 ? (
              <p className="hint">
                <a href={href('connections')}>Connect a {connector?.name ?? step.connector} account</a> first.
              </p>
            ) : null}
          </div>
          <fieldset className="inputs">
            <legend>Input</legend>
            <SchemaFields
              key={formKey}
              schema={step.inputSchema}
              value={value}
              onChange={setValue}
              ctx={{
                pickers: step.pickers,
                choices: choicesOf('step', step.id, connectionId || undefined),
                choicesBlocked: connectionId ? undefined : 'Choose a connection first.',
                errors: validation.errors,
              }}
            />
          </fieldset>
          <div className="row">
            <button type="submit" className="primary" disabled={run.pending}>
              {run.pending ? 'Running…' : `Run ${step.name}`}
            </button>
            <button
              type="button"
              onClick={() => {
                setValue(initial)
                validation.reset()
                setFormKey((k) => k + 1)
                setResult(null)
                run.clear()
              }}
            >
              Clear
            </button>
          </div>
        </form>
        <div className="result" aria-live="polite">
          <h2>Result</h2>
          <ErrorBox error={run.error} title="The step failed" />
          {result ? (
            <div className="run-output" data-testid="step-output">
              <p className="muted small">
                Run <code>{result.meta.runId}</code> · {result.meta.durationMs} ms · {result.meta.attempts}{' '}
                attempt
                {result.meta.attempts === 1 ? '' : 's'} ·{' '}
                <a href={href('timeline', result.meta.runId)}>Timeline</a>
              </p>
              <JsonView value={result.output} label="Step output" />
            </div>
          ) : !run.error ? (
            <p className="muted">Run the step to see its output here.</p>
          ) : null}
        </div>
      </div>
    </section>
  )
}
