// An agent's tools: ordered chains of tool steps whose inputs are templates over the tool's
// input ({{input.x}}), the trigger event ({{event.…}}) and earlier steps ({{steps.N.output.…}}).
// A step's fields that name an upstream resource (a board, its list, a repository's branch) are
// also searchable dropdowns, as on the step's own form, written into the step's input.
import { type FormEvent, useId, useLayoutEffect, useRef, useState } from 'react'
import { del, enc, getAll, patch, post } from '../api.ts'
import { choicesOf } from '../choices.ts'
import { ErrorBox, JsonView, Notice, Status, Time, useAction, useLoad } from '../components.tsx'
import { href } from '../router.ts'
import { SchemaFields } from '../schema-form.tsx'
import type { Agent, JsonSchema, StepSummary, Tool, ToolRun, ToolStepSpec } from '../types.ts'
import { useWorkspace } from '../workspace.tsx'

export function ToolsSection({ agent }: { agent: Agent }) {
  const tools = useLoad(
    (signal) => getAll<'tools', Tool>(`/v1/agents/${enc(agent.id)}/tools`, 'tools', undefined, signal),
    [agent.id],
  )
  const [editing, setEditing] = useState<Tool | 'new' | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  return (
    <section id="agent-tools" className="panel" aria-labelledby="agent-tools-title">
      <div className="row spread wrap">
        <h2 id="agent-tools-title" tabIndex={-1}>
          Tools
        </h2>
        <button
          type="button"
          aria-expanded={editing === 'new'}
          onClick={() => setEditing(editing === 'new' ? null : 'new')}
        >
          New tool
        </button>
      </div>
      <p className="hint">
        A tool is a chain of tool steps run in order as this agent; the first failure ends the run.
      </p>
      <Notice>{notice}</Notice>
      {editing ? (
        <ChainEditor
          key={editing === 'new' ? 'new' : editing.id}
          agent={agent}
          tool={editing === 'new' ? null : editing}
          onCancel={() => setEditing(null)}
          onSaved={async (t) => {
            setEditing(null)
            setNotice(`Tool ${t.name} saved.`)
            await tools.reload()
          }}
        />
      ) : null}
      <ErrorBox error={tools.error} title="Tools" />
      {tools.data?.tools.length === 0 ? <p className="muted">No tools yet.</p> : null}
      <ul className="tool-list">
        {tools.data?.tools.map((t) => (
          <ToolItem
            key={t.id}
            agent={agent}
            tool={t}
            onEdit={() => setEditing(t)}
            onDeleted={async () => {
              setNotice(`Tool ${t.name} deleted.`)
              await tools.reload()
            }}
          />
        ))}
      </ul>
    </section>
  )
}

function ToolItem({
  agent,
  tool,
  onEdit,
  onDeleted,
}: {
  agent: Agent
  tool: Tool
  onEdit: () => void
  onDeleted: () => Promise<void>
}) {
  const ws = useWorkspace()
  const [input, setInput] = useState('{}')
  const [run, setRun] = useState<ToolRun | null>(null)
  const runTool = useAction(async () => {
    let parsed: unknown
    try {
      parsed = JSON.parse(input || '{}')
    } catch {
      throw new Error('The tool input is not valid JSON.')
    }
    setRun(null)
    setRun(await post<ToolRun>(`/v1/agents/${enc(agent.id)}/tools/${enc(tool.id)}/run`, { input: parsed }))
  })
  const remove = useAction(async () => {
    await del(`/v1/agents/${enc(agent.id)}/tools/${enc(tool.id)}`)
    await onDeleted()
  })
  const inputId = useId()
  const headingId = useId()
  return (
    <li className="tool" aria-labelledby={headingId}>
      <div className="row spread wrap">
        <h3 id={headingId}>{tool.name}</h3>
        <div className="row">
          <button type="button" onClick={onEdit}>
            Edit {tool.name}
          </button>
          <button type="button" className="danger" disabled={remove.pending} onClick={() => remove.run()}>
            Delete {tool.name}
          </button>
        </div>
      </div>
      {tool.description ? <p>{tool.description}</p> : null}
      <ol className="chain">
        {tool.steps.map((s, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a chain's steps are its positions
          <li key={i}>
            <strong>{ws.step(s.stepId)?.name ?? s.stepId}</strong>
            {s.name ? <span className="muted"> as {s.name}</span> : null} ·{' '}
            {s.connectionId ? (
              <span className="small">{ws.connectionLabel(s.connectionId)}</span>
            ) : (
              <span className="small warn-text">
                connection needed
                {s.connectionNeeded
                  ? `: ${s.connectionNeeded.accountName} (${s.connectionNeeded.connectionId}) was disconnected`
                  : ''}
              </span>
            )}
            <code className="small block">{JSON.stringify(s.input)}</code>
          </li>
        ))}
      </ol>
      <form
        className="form"
        onSubmit={(e) => {
          e.preventDefault()
          void runTool.run()
        }}
        aria-label={`Run ${tool.name}`}
      >
        <div className="field">
          <label htmlFor={inputId}>Tool input (JSON, read by {'{{input.…}}'})</label>
          <textarea
            id={inputId}
            className="code"
            rows={2}
            spellCheck={false}
            value={input}
            onChange={(e) => setInput(e.target.value)}
          />
        </div>
        <button type="submit" disabled={runTool.pending}>
          {runTool.pending ? 'Running…' : `Run ${tool.name}`}
        </button>
      </form>
      <ErrorBox error={runTool.error ?? remove.error} title="Tool" />
      {run ? <ToolRunView run={run} /> : null}
    </li>
  )
}

function ToolRunView({ run }: { run: ToolRun }) {
  const ws = useWorkspace()
  return (
    <section className="tool-run" aria-label="Tool run" aria-live="polite">
      <p>
        Run <code>{run.id}</code> <Status value={run.status} /> · <Time iso={run.createdAt} /> ·{' '}
        <a href={href('timeline', run.id)}>Timeline</a>
        {run.errorCode ? (
          <>
            {' '}
            · <code className="error-code">{run.errorCode}</code> {run.errorMessage}
          </>
        ) : null}
      </p>
      <ol>
        {run.steps.map((s) => (
          <li key={s.index}>
            <Status value={s.status} /> {ws.step(s.stepId)?.name ?? s.stepId}
            {s.error ? (
              <p className="warn-text small">
                <code>{s.error.code}</code> {s.error.message}
              </p>
            ) : null}
            {s.output !== undefined ? (
              <details>
                <summary>Output of step {s.index}</summary>
                <JsonView value={s.output} />
              </details>
            ) : null}
          </li>
        ))}
      </ol>
    </section>
  )
}

interface DraftStep {
  name: string
  stepId: string
  connectionId: string
  input: string
}

const toDraft = (s: ToolStepSpec): DraftStep => ({
  name: s.name ?? '',
  stepId: s.stepId,
  connectionId: s.connectionId ?? '',
  input: JSON.stringify(s.input, null, 2),
})

/** A skeleton of a step's input: its required fields, each with a template to replace. */
function skeleton(schema: JsonSchema): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const k of schema.required ?? []) {
    const p = schema.properties?.[k] ?? {}
    out[k] = p.default !== undefined ? p.default : `{{input.${k}}}`
  }
  return out
}

function ChainEditor({
  agent,
  tool,
  onSaved,
  onCancel,
}: {
  agent: Agent
  tool: Tool | null
  onSaved: (t: Tool) => Promise<void>
  onCancel: () => void
}) {
  const ws = useWorkspace()
  const [name, setName] = useState(tool?.name ?? '')
  const [description, setDescription] = useState(tool?.description ?? '')
  const [steps, setSteps] = useState<DraftStep[]>(() => tool?.steps.map(toDraft) ?? [])
  const agentConnections = ws.connections.filter((c) => agent.connectionIds.includes(c.id))
  const save = useAction(async () => {
    const body = {
      name,
      description,
      steps: steps.map((s, i) => {
        let input: unknown
        try {
          input = JSON.parse(s.input || '{}')
        } catch {
          throw new Error(`The input of step ${i + 1} is not valid JSON.`)
        }
        return { ...(s.name ? { name: s.name } : {}), stepId: s.stepId, connectionId: s.connectionId, input }
      }),
    }
    const t = tool
      ? await patch<Tool>(`/v1/agents/${enc(agent.id)}/tools/${enc(tool.id)}`, body)
      : await post<Tool>(`/v1/agents/${enc(agent.id)}/tools`, body)
    await onSaved(t)
  })
  const update = (i: number, change: Partial<DraftStep>) =>
    setSteps((all) => all.map((s, j) => (j === i ? { ...s, ...change } : s)))
  const move = (i: number, by: number) =>
    setSteps((all) => {
      const next = [...all]
      const [s] = next.splice(i, 1)
      next.splice(i + by, 0, s)
      return next
    })
  const addStep = () => {
    const c = agentConnections[0]
    const first = c ? ws.connector(c.connector)?.steps[0] : undefined
    setSteps((all) => [
      ...all,
      {
        name: '',
        stepId: first?.id ?? '',
        connectionId: c?.id ?? '',
        input: JSON.stringify(first ? skeleton(first.inputSchema) : {}, null, 2),
      },
    ])
  }
  const ids = { name: useId(), description: useId() }
  const submit = (e: FormEvent) => {
    e.preventDefault()
    void save.run()
  }
  return (
    <form
      className="form panel chain-editor"
      onSubmit={submit}
      aria-label={tool ? `Edit ${tool.name}` : 'New tool'}
    >
      <h3>{tool ? `Edit ${tool.name}` : 'New tool'}</h3>
      <div className="field">
        <label htmlFor={ids.name}>
          Tool name<span className="req"> (required)</span>
        </label>
        <input id={ids.name} value={name} onChange={(e) => setName(e.target.value)} />
      </div>
      <div className="field">
        <label htmlFor={ids.description}>Description</label>
        <textarea
          id={ids.description}
          rows={2}
          value={description}
          onChange={(e) => setDescription(e.target.value)}
        />
      </div>
      <details className="helper">
        <summary>Templates</summary>
        <ul className="small">
          <li>
            <code>{'{{input.x}}'}</code> — the tool’s input field <code>x</code>
          </li>
          <li>
            <code>{'{{event.data.card.id}}'}</code> — the trigger event that started the run
          </li>
          <li>
            <code>{'{{steps.0.output.id}}'}</code> or <code>{'{{steps.<name>.output.id}}'}</code> — an earlier
            step’s output
          </li>
          <li>A string that is exactly one template keeps the value’s type (a number, an object).</li>
        </ul>
      </details>
      <ol className="chain-steps">
        {steps.map((s, i) => (
          <StepEditor
            // biome-ignore lint/suspicious/noArrayIndexKey: a chain's steps are its positions
            key={i}
            index={i}
            count={steps.length}
            step={s}
            agent={agent}
            onChange={(c) => update(i, c)}
            onMove={(by) => move(i, by)}
            onRemove={() => setSteps((all) => all.filter((_, j) => j !== i))}
          />
        ))}
      </ol>
      {agentConnections.length === 0 ? (
        <p className="hint">Give the agent a connection in its settings first; each step runs with one.</p>
      ) : null}
      <button type="button" onClick={addStep}>
        Add step
      </button>
      <ErrorBox error={save.error} title="The tool could not be saved" />
      <div className="row">
        <button
          type="submit"
          className="primary"
          disabled={save.pending || !name.trim() || steps.length === 0}
        >
          {save.pending ? 'Saving…' : 'Save tool'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  )
}

function StepEditor({
  index,
  count,
  step,
  agent,
  onChange,
  onMove,
  onRemove,
}: {
  index: number
  count: number
  step: DraftStep
  agent: Agent
  onChange: (c: Partial<DraftStep>) => void
  onMove: (by: number) => void
  onRemove: () => void
}) {
  const ws = useWorkspace()
  const summary = ws.step(step.stepId)
  const usable = ws.connections.filter(
    (c) => agent.connectionIds.includes(c.id) && (!summary || c.connector === summary.connector),
  )
  const inputRef = useRef<HTMLTextAreaElement>(null)
  // Where the cursor goes once an inserted template is on screen: placed as the new value is
  // rendered (a layout effect), before the browser takes the next key, so a key typed right after
  // the insert button lands after the template, not at the end of the input.
  const caret = useRef<number | null>(null)
  useLayoutEffect(() => {
    const el = inputRef.current
    if (caret.current === null || !el) return
    el.focus()
    el.setSelectionRange(caret.current, caret.current)
    caret.current = null
  })
  const ids = { name: useId(), step: useId(), connection: useId(), input: useId(), insert: useId() }
  let invalid = false
  try {
    JSON.parse(step.input || '{}')
  } catch {
    invalid = true
  }
  const insert = (text: string) => {
    const el = inputRef.current
    if (!el) return
    const start = el.selectionStart ?? el.value.length
    const end = el.selectionEnd ?? start
    const next = el.value.slice(0, start) + text + el.value.slice(end)
    onChange({ input: next })
    // The cursor lands where the path goes on: before the closing braces.
    caret.current = start + (text.endsWith('.}}') ? text.length - 2 : text.length)
  }
  const templates = [
    '{{input.}}',
    '{{event.data.}}',
    ...Array.from({ length: index }, (_, j) => `{{steps.${j}.output.}}`),
  ]
  return (
    <li className="chain-step">
      <fieldset className="nested">
        <legend>Step {index + 1}</legend>
        <div className="row wrap">
          <div className="field">
            <label htmlFor={ids.step}>Tool step</label>
            <select
              id={ids.step}
              value={step.stepId}
              onChange={(e) => {
                const s = ws.step(e.target.value)
                const fits = ws.connection(step.connectionId)?.connector === s?.connector
                const conn = fits
                  ? step.connectionId
                  : (ws.connections.find(
                      (c) => agent.connectionIds.includes(c.id) && c.connector === s?.connector,
                    )?.id ?? '')
                onChange({
                  stepId: e.target.value,
                  connectionId: conn,
                  input: JSON.stringify(s ? skeleton(s.inputSchema) : {}, null, 2),
                })
              }}
            >
              <option value="">— choose a step —</option>
              {ws.connectors.map((c) => (
                <optgroup key={c.id} label={c.name}>
                  {c.steps.map((s) => (
                    <option key={s.id} value={s.id}>
                      {s.name}
                    </option>
                  ))}
                </optgroup>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor={ids.connection}>Connection</label>
            <select
              id={ids.connection}
              value={step.connectionId}
              onChange={(e) => onChange({ connectionId: e.target.value })}
            >
              <option value="">— choose —</option>
              {usable.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.accountName}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor={ids.name}>Step name (optional)</label>
            <input
              id={ids.name}
              value={step.name}
              placeholder="e.g. card"
              onChange={(e) => onChange({ name: e.target.value })}
            />
          </div>
        </div>
        {summary ? (
          <PickedFields
            key={summary.id}
            step={summary}
            connectionId={step.connectionId}
            input={step.input}
            onInput={(input) => onChange({ input })}
          />
        ) : null}
        <div className="field">
          <label htmlFor={ids.input}>Input (JSON with templates)</label>
          <textarea
            id={ids.input}
            ref={inputRef}
            className="code"
            rows={5}
            spellCheck={false}
            aria-invalid={invalid || undefined}
            aria-describedby={ids.insert}
            value={step.input}
            onChange={(e) => onChange({ input: e.target.value })}
          />
          {invalid ? <p className="field-error">Not valid JSON yet.</p> : null}
        </div>
        <div className="row wrap small" id={ids.insert}>
          <span>Insert:</span>
          {templates.map((t) => (
            <button key={t} type="button" className="chip" onClick={() => insert(t)}>
              {t}
            </button>
          ))}
          {summary ? (
            <button
              type="button"
              className="chip"
              onClick={() => onChange({ input: JSON.stringify(skeleton(summary.inputSchema), null, 2) })}
            >
              required fields
            </button>
          ) : null}
        </div>
        {summary ? (
          <details>
            <summary>Input fields of {summary.name}</summary>
            <ul className="small">
              {Object.entries(summary.inputSchema.properties ?? {}).map(([k, p]) => (
                <li key={k}>
                  <code>{k}</code>
                  {(summary.inputSchema.required ?? []).includes(k) ? ' (required)' : ''} — {p.description}
                </li>
              ))}
            </ul>
          </details>
        ) : null}
        <div className="row">
          <button
            type="button"
            disabled={index === 0}
            onClick={() => onMove(-1)}
            aria-label={`Move step ${index + 1} up`}
          >
            Up
          </button>
          <button
            type="button"
            disabled={index === count - 1}
            onClick={() => onMove(1)}
            aria-label={`Move step ${index + 1} down`}
          >
            Down
          </button>
          <button type="button" className="danger" onClick={onRemove} aria-label={`Remove step ${index + 1}`}>
            Remove
          </button>
        </div>
      </fieldset>
    </li>
  )
}

/**
 * The step's fields that name an upstream resource, as searchable dropdowns that follow their
 * parents (the board's lists), reading and writing the step's JSON input. What is typed is kept:
 * an id, or a template such as {{event.data.card.idList}}.
 */
function PickedFields({
  step,
  connectionId,
  input,
  onInput,
}: {
  step: StepSummary
  connectionId: string
  input: string
  onInput: (input: string) => void
}) {
  const ws = useWorkspace()
  const props = step.inputSchema.properties ?? {}
  const fields = step.pickers.filter((p) => !p.helper && props[p.field]).map((p) => p.field)
  if (fields.length === 0) return null
  const schema: JsonSchema = {
    type: 'object',
    properties: Object.fromEntries(fields.map((f) => [f, props[f]])),
    required: (step.inputSchema.required ?? []).filter((f) => fields.includes(f)),
  }
  let value: Record<string, unknown> | null = null
  try {
    const parsed = JSON.parse(input || '{}')
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) value = parsed
  } catch {
    value = null
  }
  const from = ws.connector(step.connector)?.name ?? step.connector
  return (
    <fieldset className="nested picked-fields">
      <legend>Choose from {from}</legend>
      <p className="hint">
        Pick from the account’s own lists, or type an id or a template; the input below follows.
      </p>
      {value ? (
        <SchemaFields
          schema={schema}
          value={value}
          onChange={(v) => onInput(JSON.stringify(v, null, 2))}
          ctx={{
            pickers: step.pickers,
            choices: choicesOf('step', step.id, connectionId || undefined),
            choicesBlocked: connectionId ? undefined : 'Choose a connection first.',
          }}
        />
      ) : (
        <p className="muted small">The input is not a JSON object yet; fix it to pick from lists.</p>
      )}
    </fieldset>
  )
}
