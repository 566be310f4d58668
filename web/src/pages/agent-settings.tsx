// The parts of an agent's settings shared by the "new agent" form and the agent's page: the
// connections it may use, its scope (picked from what those accounts can see) and its delivery target.
import { useId, useState } from 'react'
import { useDirectory } from '../directory.ts'
import type { Agent, Connection } from '../types.ts'
import { useWorkspace } from '../workspace.tsx'

export type Delivery = Agent['delivery']
/** An agent's scope: a list per place kind the connectors declare (GET /v1/catalog `places`). */
export type Scope = Agent['scope'] & Record<string, string[]>

/** The scope keys this editor has pickers for; any other declared kind is typed in. */
const PICKED = new Set(['boards', 'repositories'])
export type ToolSelection = Agent['toolSelection']

export function ConnectionsPicker({
  value,
  onChange,
  endUserId = null,
}: {
  value: string[]
  onChange: (ids: string[]) => void
  /** The end user the agent acts for: only their connections are offered (null: the workspace's own). */
  endUserId?: string | null
}) {
  const all = useWorkspace()
  const ws = { ...all, connections: all.connections.filter((c) => (c.endUserId ?? null) === endUserId) }
  const toggle = (id: string, on: boolean) => onChange(on ? [...value, id] : value.filter((x) => x !== id))
  return (
    <fieldset className="nested">
      <legend>Connections the agent may use</legend>
      {ws.connections.length === 0 ? <p className="muted">No connections yet.</p> : null}
      <ul className="checks">
        {ws.connections.map((c) => (
          <li key={c.id}>
            <label>
              <input
                type="checkbox"
                checked={value.includes(c.id)}
                onChange={(e) => toggle(c.id, e.target.checked)}
              />{' '}
              {ws.connectionLabel(c.id)}
              {c.status === 'lapsed' ? ' — lapsed' : ''}
            </label>
          </li>
        ))}
      </ul>
    </fieldset>
  )
}

/**
 * Boards and repositories the agent may touch, picked from the chosen connections' own lists
 * (task-board: GET /1/members/me/boards; code-host: the account's repositories), or typed in.
 */
export function ScopeEditor({
  connections,
  value,
  onChange,
}: {
  connections: Connection[]
  value: Scope
  onChange: (s: Scope) => void
}) {
  const dir = useDirectory(connections)
  const ws = useWorkspace()
  const otherKinds = ws.connectors.flatMap((c) => c.places ?? []).filter((p) => !PICKED.has(p.scopeKey))
  const boardId = useId()
  const repoId = useId()
  const [board, setBoard] = useState('')
  const [repo, setRepo] = useState('')
  const boardName = (id: string) => dir.directory.boards.find((b) => b.id === id)?.name
  const has = {
    taskboard: connections.some((c) => c.connector === 'taskboard'),
    codehost: connections.some((c) => c.connector === 'codehost'),
  }
  const toggle = (k: string, item: string, on: boolean) => {
    const now = value[k] ?? []
    onChange({ ...value, [k]: on ? [...new Set([...now, item])] : now.filter((x) => x !== item) })
  }
  const extraBoards = value.boards.filter((b) => !dir.directory.boards.some((x) => x.id === b))
  const extraRepos = value.repositories.filter(
    (r) => !dir.directory.repositories.some((x) => x.fullName === r),
  )
  return (
    <fieldset className="nested scope">
      <legend>Scope: what the agent may touch</legend>
      <p className="hint">An agent touches only the boards and repositories picked here; empty means none.</p>
      {dir.loading ? (
        <p className="muted" role="status">
          Reading the accounts’ boards and repositories…
        </p>
      ) : null}
      {dir.error ? (
        <p className="field-error" role="alert">
          Some lists could not be read: {(dir.error as Error).message}
        </p>
      ) : null}
      <div className="scope-cols">
        <fieldset className="nested">
          <legend>Boards</legend>
          {!has.taskboard && value.boards.length === 0 ? (
            <p className="muted small">Choose a task-board connection to pick from its boards.</p>
          ) : null}
          <ul className="checks">
            {dir.directory.boards.map((b) => (
              <li key={b.id}>
                <label>
                  <input
                    type="checkbox"
                    checked={value.boards.includes(b.id)}
                    onChange={(e) => toggle('boards', b.id, e.target.checked)}
                  />{' '}
                  {b.name} <code className="muted small">{b.id}</code>
                </label>
              </li>
            ))}
            {extraBoards.map((b) => (
              <li key={b}>
                <label>
                  <input type="checkbox" checked onChange={() => toggle('boards', b, false)} />{' '}
                  {boardName(b) ?? b}
                </label>
              </li>
            ))}
          </ul>
          <div className="row">
            <label htmlFor={boardId} className="visually-hidden">
              Board id to add
            </label>
            <input
              id={boardId}
              placeholder="Board id (24 hex)"
              value={board}
              spellCheck={false}
              onChange={(e) => setBoard(e.target.value.trim())}
            />
            <button
              type="button"
              disabled={!board}
              onClick={() => {
                toggle('boards', board, true)
                setBoard('')
              }}
            >
              Add board
            </button>
          </div>
        </fieldset>
        <fieldset className="nested">
          <legend>Repositories</legend>
          {!has.codehost && value.repositories.length === 0 ? (
            <p className="muted small">Choose a code-host connection to pick from its repositories.</p>
          ) : null}
          <ul className="checks">
            {dir.directory.repositories.map((r) => (
              <li key={r.fullName}>
                <label>
                  <input
                    type="checkbox"
                    checked={value.repositories.includes(r.fullName)}
                    onChange={(e) => toggle('repositories', r.fullName, e.target.checked)}
                  />{' '}
                  {r.fullName}
                  {r.private ? <span className="muted small"> (private)</span> : null}
                </label>
              </li>
            ))}
            {extraRepos.map((r) => (
              <li key={r}>
                <label>
                  <input type="checkbox" checked onChange={() => toggle('repositories', r, false)} /> {r}
                </label>
              </li>
            ))}
          </ul>
          <div className="row">
            <label htmlFor={repoId} className="visually-hidden">
              Repository to add
            </label>
            <input
              id={repoId}
              placeholder="owner/repo"
              value={repo}
              spellCheck={false}
              onChange={(e) => setRepo(e.target.value.trim())}
            />
            <button
              type="button"
              disabled={!repo}
              onClick={() => {
                toggle('repositories', repo, true)
                setRepo('')
              }}
            >
              Add repository
            </button>
          </div>
        </fieldset>
        {otherKinds.map((p) => (
          <PlaceList
            key={p.scopeKey}
            scopeKey={p.scopeKey}
            description={p.description}
            values={value[p.scopeKey] ?? []}
            toggle={(item, on) => toggle(p.scopeKey, item, on)}
          />
        ))}
      </div>
      <button type="button" className="link" onClick={dir.refresh}>
        Read the lists again
      </button>
    </fieldset>
  )
}

/** The places of a kind the editor has no picker for: typed in, unticked to remove. */
function PlaceList({
  scopeKey,
  description,
  values,
  toggle,
}: {
  scopeKey: string
  description: string
  values: string[]
  toggle: (item: string, on: boolean) => void
}) {
  const inputId = useId()
  const [typed, setTyped] = useState('')
  const title = scopeKey.charAt(0).toUpperCase() + scopeKey.slice(1)
  return (
    <fieldset className="nested">
      <legend>{title}</legend>
      <p className="muted small">{description}</p>
      <ul className="checks">
        {values.map((v) => (
          <li key={v}>
            <label>
              <input type="checkbox" checked onChange={() => toggle(v, false)} /> {v}
            </label>
          </li>
        ))}
      </ul>
      <div className="row">
        <label htmlFor={inputId} className="visually-hidden">
          {title}: add one
        </label>
        <input
          id={inputId}
          value={typed}
          spellCheck={false}
          onChange={(e) => setTyped(e.target.value.trim())}
        />
        <button
          type="button"
          disabled={!typed}
          onClick={() => {
            toggle(typed, true)
            setTyped('')
          }}
        >
          Add
        </button>
      </div>
    </fieldset>
  )
}

export function DeliveryEditor({ value, onChange }: { value: Delivery; onChange: (d: Delivery) => void }) {
  const urlId = useId()
  const [url, setUrl] = useState(value.type === 'webhook' ? value.url : '')
  return (
    <fieldset className="nested">
      <legend>Delivery target: where the agent’s events go</legend>
      <div className="radios">
        <label>
          <input
            type="radio"
            name={`${urlId}-type`}
            checked={value.type === 'stream'}
            onChange={() => onChange({ type: 'stream' })}
          />{' '}
          Stream (the agent reads its event stream)
        </label>
        <label>
          <input
            type="radio"
            name={`${urlId}-type`}
            checked={value.type === 'webhook'}
            onChange={() => onChange({ type: 'webhook', url })}
          />{' '}
          Webhook (each event is POSTed, signed)
        </label>
      </div>
      {value.type === 'webhook' ? (
        <div className="field">
          <label htmlFor={urlId}>Webhook URL</label>
          <input
            id={urlId}
            type="url"
            inputMode="url"
            placeholder="https://agent.example.com/events"
            value={url}
            spellCheck={false}
            onChange={(e) => {
              setUrl(e.target.value)
              onChange({ type: 'webhook', url: e.target.value })
            }}
          />
        </div>
      ) : null}
    </fieldset>
  )
}

export function describeDelivery(d: Delivery): string {
  return d.type === 'webhook' ? `webhook → ${d.url}` : 'stream'
}

/**
 * What the agent lists over MCP and function calling: everything (the default), or the steps
 * picked here (a whole connector, or single steps), optionally through the discovery tools.
 */
export function ToolSelectionEditor({
  connections,
  value,
  onChange,
}: {
  connections: Connection[]
  value: ToolSelection
  onChange: (s: ToolSelection) => void
}) {
  const ws = useWorkspace()
  const name = useId()
  const usable = ws.connectors.filter((c) => connections.some((x) => x.connector === c.id))
  const steps = value?.steps ?? []
  const setSteps = (next: string[]) => value && onChange({ ...value, steps: [...new Set(next)] })
  return (
    <fieldset className="nested">
      <legend>Tools the agent lists (MCP, function calling)</legend>
      <div className="radios">
        <label>
          <input type="radio" name={`${name}-mode`} checked={!value} onChange={() => onChange(null)} /> Every
          step of its connections and all its tools (the default)
        </label>
        <label>
          <input
            type="radio"
            name={`${name}-mode`}
            checked={!!value}
            onChange={() => onChange({ steps: [], discovery: false })}
          />{' '}
          Only the steps chosen here
        </label>
      </div>
      {value ? (
        <>
          {usable.length === 0 ? (
            <p className="muted small">Choose a connection to pick from its connector’s steps.</p>
          ) : null}
          {usable.map((c) => {
            const whole = steps.includes(c.id)
            return (
              <fieldset key={c.id} className="nested">
                <legend>
                  <label>
                    <input
                      type="checkbox"
                      checked={whole}
                      onChange={(e) =>
                        setSteps(
                          e.target.checked
                            ? [...steps.filter((x) => !x.startsWith(`${c.id}.`)), c.id]
                            : steps.filter((x) => x !== c.id),
                        )
                      }
                    />{' '}
                    Every {c.name} step
                  </label>
                </legend>
                <ul className="checks">
                  {c.steps.map((st) => (
                    <li key={st.id}>
                      <label>
                        <input
                          type="checkbox"
                          disabled={whole}
                          checked={whole || steps.includes(st.id)}
                          onChange={(e) =>
                            setSteps(e.target.checked ? [...steps, st.id] : steps.filter((x) => x !== st.id))
                          }
                        />{' '}
                        {st.name}
                      </label>
                    </li>
                  ))}
                </ul>
              </fieldset>
            )
          })}
          <label>
            <input
              type="checkbox"
              checked={value.discovery}
              onChange={(e) => onChange({ ...value, discovery: e.target.checked })}
            />{' '}
            Discovery mode: list two tools, find_tools and call_tool, that reach all of these
          </label>
        </>
      ) : null}
      <p className="hint">
        A small list costs a model less context; a step left out is refused when called. The agent’s own tools
        stay listed. What the agent may touch is still its scope.
      </p>
    </fieldset>
  )
}
