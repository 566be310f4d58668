// Connectors and their connections: connect (a credentials form, an OAuth redirect or a pop-up),
// reconnect a lapsed connection, disconnect.
import { type FormEvent, useEffect, useId, useState } from 'react'
import { ApiError, del, enc, get, post } from '../api.ts'
import { Badge, ErrorBox, Notice, Status, Time, useAction } from '../components.tsx'
import { isOAuth, type OAuthMode, oauthModes, redirectResult, startPopup, startRedirect } from '../oauth.ts'
import type { Route } from '../router.ts'
import { compact, initialValue, invalidFields, SchemaFields } from '../schema-form.tsx'
import type { AuthMethod, Connection, Connector } from '../types.ts'
import { useWorkspace } from '../workspace.tsx'

const secretField = (name: string) => /key|token|secret|password/i.test(name)

let redirectShown = false

export function ConnectionsPage(_: { route: Route }) {
  const ws = useWorkspace()
  const [notice, setNotice] = useState<string | null>(null)
  const [error, setError] = useState<unknown>(null)

  // Back from a redirect sign-in: say what happened, once.
  useEffect(() => {
    if (redirectShown || !redirectResult) return
    redirectShown = true
    const { connectionId, reconnected, error: err } = redirectResult
    if (err)
      setError(
        new ApiError(0, {
          code: 'OAUTH_FAILED',
          message: `The sign-in did not complete: ${err.replace(/\.$/, '')}.`,
          hint: 'Try again, and approve the requested access on the upstream’s page.',
        }),
      )
    else if (connectionId)
      void get<Connection>(`/v1/connections/${enc(connectionId)}`)
        .then((c) => {
          setNotice(
            `${reconnected ? 'Reconnected' : 'Connected'} ${c.accountName} (${ws.connector(c.connector)?.name ?? c.connector}).`,
          )
          return ws.reloadConnections()
        })
        .catch(setError)
  }, [ws])

  const connected = async (c: Connection, verb = 'Connected') => {
    setError(null)
    setNotice(`${verb} ${c.accountName} (${ws.connector(c.connector)?.name ?? c.connector}).`)
    await ws.reloadConnections()
  }

  return (
    <section aria-labelledby="connections-title">
      <h1 id="connections-title" tabIndex={-1}>
        Connections
      </h1>
      <p className="lede">
        Each connector links one kind of upstream account. Connect as many accounts as you need; each is
        listed under its account name.
      </p>
      <Notice>{notice}</Notice>
      <ErrorBox error={error} title="Connection" />
      <div className="cards">
        {ws.connectors.map((c) => (
          <ConnectorCard
            key={c.id}
            connector={c}
            connections={ws.connections.filter((x) => x.connector === c.id)}
            onConnected={connected}
            onDisconnected={async (x) => {
              setNotice(`Disconnected ${x.accountName}.`)
              await ws.reloadConnections()
            }}
            onRestored={() => ws.reloadConnections()}
          />
        ))}
      </div>
    </section>
  )
}

function ConnectorCard({
  connector,
  connections,
  onConnected,
  onDisconnected,
  onRestored,
}: {
  connector: Connector
  connections: Connection[]
  onConnected: (c: Connection, verb?: string) => Promise<void>
  onDisconnected: (c: Connection) => Promise<void>
  onRestored: () => Promise<void>
}) {
  const [open, setOpen] = useState<string | null>(null)
  const titleId = useId()
  return (
    <article className="card connector" aria-labelledby={titleId} data-connector={connector.id}>
      <header className="card-head">
        <h2 id={titleId}>
          {connector.name}{' '}
          {connector.beta ? (
            <Badge tone="info">
              <span title="Functional, open to refinement">beta</span>
            </Badge>
          ) : null}
        </h2>
        <p className="muted small">
          {plural(connector.steps.length, 'tool step')} · {plural(connector.triggers.length, 'trigger')}
        </p>
      </header>
      <p>{connector.description}</p>
      <h3 className="sub">Connected accounts</h3>
      {connections.length === 0 ? (
        <p className="muted">No account connected yet.</p>
      ) : (
        <ul className="connections" aria-label={`${connector.name} connections`}>
          {connections.map((x) => (
            <ConnectionItem
              key={x.id}
              connector={connector}
              connection={x}
              onReconnected={(c) => onConnected(c, 'Reconnected')}
              onDisconnected={onDisconnected}
              onRestored={onRestored}
            />
          ))}
        </ul>
      )}
      <h3 className="sub">Connect an account</h3>
      <div className="row wrap">
        {connector.auth.map((m) => (
          <button
            key={m.id}
            type="button"
            aria-expanded={open === m.id}
            onClick={() => setOpen(open === m.id ? null : m.id)}
          >
            {connectLabel(m)}
          </button>
        ))}
      </div>
      {connector.auth
        .filter((m) => m.id === open)
        .map((m) => (
          <ConnectPanel
            key={m.id}
            connector={connector}
            method={m}
            onDone={async (c, verb) => {
              setOpen(null)
              await onConnected(c, verb)
            }}
          />
        ))}
    </article>
  )
}

/** "Connect with API key"; a method named as an action ("Sign in with …") keeps its name. */
function connectLabel(m: AuthMethod): string {
  return /^(sign in|connect)\b/i.test(m.name) ? m.name : `Connect with ${m.name}`
}

/** The dependants a refused disconnect lists (CONNECTION_IN_USE's details). */
interface InUse {
  agents: Array<{ id: string; name: string }>
  triggers: Array<{ id: string; agentId: string; trigger: string }>
  tools: Array<{ agentId: string; toolId: string; name: string; steps: number[] }>
}

function ConnectionItem({
  connector,
  connection,
  onReconnected,
  onDisconnected,
  onRestored,
}: {
  connector: Connector
  connection: Connection
  onReconnected: (c: Connection) => Promise<void>
  onDisconnected: (c: Connection) => Promise<void>
  onRestored: () => Promise<void>
}) {
  const [mode, setMode] = useState<'idle' | 'reconnect' | 'confirm'>('idle')
  const method = connector.auth.find((m) => m.id === connection.authMethod)
  /** What uses the connection, as the API listed it when a disconnect was refused (409). */
  const [inUse, setInUse] = useState<InUse | null>(null)
  const disconnect = useAction(async (force: boolean) => {
    try {
      await del(`/v1/connections/${enc(connection.id)}${force ? '?force=true' : ''}`)
    } catch (err) {
      if (err instanceof ApiError && err.code === 'CONNECTION_IN_USE') {
        setInUse(err.details as InUse)
        return
      }
      throw err
    }
    await onDisconnected(connection)
  })
  const [restored, setRestored] = useState<string | null>(null)
  const restore = useAction(async () => {
    const r = await post<{
      agents: string[]
      triggers: unknown[]
      toolSteps: Array<{ steps: number[] }>
      failed: Array<{ what: string; message: string }>
    }>(`/v1/connections/${enc(connection.id)}/restore`, {})
    const steps = r.toolSteps.reduce((n, t) => n + t.steps.length, 0)
    setRestored(
      `Restored ${plural(r.triggers.length, 'trigger')}, ${plural(r.agents.length, 'agent')} and ${plural(steps, 'tool step')}.${
        r.failed.length ? ` Not restored: ${r.failed.map((f) => `${f.what} (${f.message})`).join('; ')}` : ''
      }`,
    )
    await onRestored()
  })
  return (
    <li className="connection" data-connection-id={connection.id}>
      <div className="row spread wrap">
        <div>
          <strong className="account">{connection.accountName}</strong> <Status value={connection.status} />
          <div className="muted small">
            {method?.name ?? connection.authMethod} · connected <Time iso={connection.createdAt} /> ·{' '}
            <code>{connection.id}</code>
          </div>
          {Object.keys(connection.details ?? {}).length ? (
            <div className="small connection-details">
              {Object.entries(connection.details ?? {}).map(([k, v], i) => (
                <span key={k} className="detail">
                  {i > 0 ? ' · ' : ''}
                  {k === 'tokenKind' ? v : k === 'repositories' ? `reaches ${v}` : `${k}: ${v}`}
                </span>
              ))}
            </div>
          ) : null}
          {connection.status === 'lapsed' && connection.statusReason ? (
            <p className="small warn-text">
              {connection.lapsedAt ? (
                <>
                  Since <Time iso={connection.lapsedAt} />:{' '}
                </>
              ) : null}
              {connection.statusReason}. Its triggers are paused until it is reconnected.
            </p>
          ) : null}
          {connection.status === 'active' && connection.checkError ? (
            <p className="small warn-text">{connection.checkError}</p>
          ) : null}
          {connection.restorable?.length ? (
            <section className="restorable" aria-label={`Restore ${connection.accountName}`}>
              <p className="small">
                {connection.accountName} was connected before (
                {connection.restorable.map((r) => r.connectionId).join(', ')}) and disconnected while in use:{' '}
                {plural(
                  connection.restorable.reduce((n, r) => n + r.triggers, 0),
                  'trigger',
                )}
                ,{' '}
                {plural(
                  connection.restorable.reduce((n, r) => n + r.agents, 0),
                  'agent',
                )}{' '}
                and{' '}
                {plural(
                  connection.restorable.reduce((n, r) => n + r.toolSteps, 0),
                  'tool step',
                )}{' '}
                can be restored onto this connection.
              </p>
              <button
                type="button"
                className="primary"
                disabled={restore.pending}
                onClick={() => restore.run()}
              >
                Restore triggers and tools
              </button>
              <ErrorBox error={restore.error} title="Restore failed" />
            </section>
          ) : null}
          {restored ? (
            <p role="status" className="small">
              {restored}
            </p>
          ) : null}
        </div>
        <div className="row">
          {connection.status === 'lapsed' ? (
            <button
              type="button"
              className="primary"
              aria-expanded={mode === 'reconnect'}
              onClick={() => setMode(mode === 'reconnect' ? 'idle' : 'reconnect')}
            >
              Reconnect {connection.accountName}
            </button>
          ) : null}
          <button
            type="button"
            className="danger"
            onClick={() => {
              setInUse(null)
              setMode('confirm')
            }}
          >
            Disconnect {connection.accountName}
          </button>
        </div>
      </div>
      {mode === 'confirm' ? (
        <div className="confirm">
          {inUse ? (
            <div role="alert" className="in-use">
              <p>
                <strong>{connection.accountName}</strong> is in use. Disconnecting removes its triggers and
                detaches the agents and tool steps below (they show “connection needed”; connecting the same
                account again offers to restore them).
              </p>
              <ul>
                {inUse.agents.map((a) => (
                  <li key={a.id}>Agent {a.name}</li>
                ))}
                {inUse.triggers.map((t) => (
                  <li key={t.id}>
                    Trigger {t.trigger} of agent {t.agentId}
                  </li>
                ))}
                {inUse.tools.map((t) => (
                  <li key={t.toolId}>
                    Tool {t.name}, step {t.steps.map((i) => i + 1).join(', ')}
                  </li>
                ))}
              </ul>
            </div>
          ) : (
            <p>
              Disconnect <strong>{connection.accountName}</strong>? Its credentials, triggers and upstream
              webhooks are removed.
            </p>
          )}
          <div className="row">
            <button
              type="button"
              className="danger"
              disabled={disconnect.pending}
              onClick={() => disconnect.run(inUse !== null)}
            >
              {inUse ? 'Disconnect anyway' : 'Yes, disconnect'}
            </button>
            <button type="button" onClick={() => setMode('idle')}>
              Cancel
            </button>
          </div>
          <ErrorBox error={disconnect.error} title="Disconnect failed" />
        </div>
      ) : null}
      {mode === 'reconnect' && method ? (
        <ConnectPanel
          connector={connector}
          method={method}
          reconnect={connection}
          onDone={async (c) => {
            setMode('idle')
            await onReconnected(c)
          }}
        />
      ) : null}
    </li>
  )
}

/** One auth method's way in: a generated credentials form, or OAuth sign-in buttons. */
function ConnectPanel({
  connector,
  method,
  reconnect,
  onDone,
}: {
  connector: Connector
  method: AuthMethod
  reconnect?: Connection
  onDone: (c: Connection, verb?: string) => Promise<void>
}) {
  const headingId = useId()
  return (
    <section className="panel" aria-labelledby={headingId}>
      <h4 id={headingId}>{reconnect ? `Reconnect ${reconnect.accountName}` : connectLabel(method)}</h4>
      {method.description ? <p className="small">{method.description}</p> : null}
      {isOAuth(method) ? (
        <OAuthButtons connector={connector} method={method} reconnect={reconnect} onDone={onDone} />
      ) : (
        <CredentialsForm connector={connector} method={method} reconnect={reconnect} onDone={onDone} />
      )}
    </section>
  )
}

function OAuthButtons({
  connector,
  method,
  reconnect,
  onDone,
}: {
  connector: Connector
  method: AuthMethod
  reconnect?: Connection
  onDone: (c: Connection, verb?: string) => Promise<void>
}) {
  const [waiting, setWaiting] = useState<OAuthMode | null>(null)
  const [error, setError] = useState<unknown>(null)
  const modes = oauthModes(connector.id, method)
  const go = async (mode: OAuthMode) => {
    setError(null)
    setWaiting(mode)
    try {
      const opts = { authMethod: method.id, ...(reconnect ? { connectionId: reconnect.id } : {}) }
      if (mode === 'redirect') await startRedirect(connector.id, opts)
      else {
        const { connectionId, reconnected } = await startPopup(connector.id, opts)
        await onDone(
          await get<Connection>(`/v1/connections/${enc(connectionId)}`),
          reconnected || reconnect ? 'Reconnected' : undefined,
        )
      }
    } catch (err) {
      setError(err)
    } finally {
      setWaiting(null)
    }
  }
  return (
    <>
      <div className="row wrap">
        {modes.map((mode) => (
          <button
            key={mode}
            type="button"
            className="primary"
            disabled={waiting !== null}
            onClick={() => go(mode)}
          >
            {mode === 'popup' ? `Sign in to ${connector.name} in a pop-up` : `Sign in to ${connector.name}`}
          </button>
        ))}
      </div>
      {waiting === 'popup' ? (
        <p role="status" className="muted">
          Waiting for the sign-in window…
        </p>
      ) : waiting === 'redirect' ? (
        <p role="status" className="muted">
          Going to {connector.name}…
        </p>
      ) : null}
      <ErrorBox error={error} title="Sign-in failed" />
    </>
  )
}

function CredentialsForm({
  connector,
  method,
  reconnect,
  onDone,
}: {
  connector: Connector
  method: AuthMethod
  reconnect?: Connection
  onDone: (c: Connection, verb?: string) => Promise<void>
}) {
  const schema = method.credentialsSchema!
  const [value, setValue] = useState(() => (initialValue(schema) ?? {}) as Record<string, unknown>)
  const [second, setSecond] = useState(false)
  const secondId = useId()
  const submit = useAction(async () => {
    const bad = invalidFields(value)
    if (bad.length) throw new Error(`Fix the JSON of ${bad.join(', ')}.`)
    const credentials = compact(value)
    const c = reconnect
      ? await post<Connection>(`/v1/connections/${enc(reconnect.id)}/reconnect`, {
          authMethod: method.id,
          credentials,
        })
      : await post<Connection & { reconnected: boolean }>('/v1/connections', {
          connector: connector.id,
          authMethod: method.id,
          credentials,
          ...(second ? { second: true } : {}),
        })
    await onDone(c, 'reconnected' in c && c.reconnected ? 'Reconnected' : undefined)
  })
  const onSubmit = (e: FormEvent) => {
    e.preventDefault()
    void submit.run()
  }
  const props = schema.properties ?? {}
  const hasKeyAndToken = 'key' in props && 'token' in props
  return (
    <form onSubmit={onSubmit} className="form" aria-label={`${connector.name} ${method.name}`}>
      <SchemaFields schema={schema} value={value} onChange={setValue} ctx={{ secret: secretField }} />
      {(connector.id === 'taskboard' || method.tokenPage) && hasKeyAndToken ? (
        <TokenRequestHelper
          connectorId={connector.id}
          apiKey={typeof value.key === 'string' ? value.key : ''}
        />
      ) : null}
      {!reconnect ? (
        <div className="field field-check">
          <input
            id={secondId}
            type="checkbox"
            checked={second}
            onChange={(e) => setSecond(e.target.checked)}
          />
          <label htmlFor={secondId}>Make a second connection if this account is already connected</label>
          <p className="hint">
            Otherwise an account connected before with this method gets these credentials (reconnected in
            place, keeping its triggers and agents).
          </p>
        </div>
      ) : null}
      <ErrorBox error={submit.error} title={reconnect ? 'Reconnect failed' : 'Connect failed'} />
      <button type="submit" className="primary" disabled={submit.pending}>
        {submit.pending ? 'Checking…' : reconnect ? 'Reconnect' : 'Connect'}
      </button>
    </form>
  )
}

/**
 * Getting a task-board token for an API key: Patchbay builds the token request address
 * (POST /v1/connectors/taskboard/token-url); the user approves there and pastes the token back.
 */
function TokenRequestHelper({ connectorId, apiKey }: { connectorId: string; apiKey: string }) {
  const [name, setName] = useState('Patchbay')
  const [expiration, setExpiration] = useState('never')
  const [scope, setScope] = useState('read,write')
  const [url, setUrl] = useState<string | null>(null)
  const build = useAction(async () => {
    setUrl(null)
    const res = await post<{ url: string }>(`/v1/connectors/${connectorId}/token-url`, {
      key: apiKey,
      name,
      expiration,
      scope,
    })
    setUrl(res.url)
  })
  const id = useId()
  return (
    <details className="helper">
      <summary>No token yet? Build the token request address</summary>
      <p className="small">
        Create an extension on the task-board admin page, copy its API key into the field above, then open the
        token request address, approve, and paste the token shown into the token field.
      </p>
      <div className="row wrap">
        <div className="field">
          <label htmlFor={`${id}-name`}>Token name</label>
          <input id={`${id}-name`} value={name} onChange={(e) => setName(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor={`${id}-exp`}>Expiration</label>
          <select id={`${id}-exp`} value={expiration} onChange={(e) => setExpiration(e.target.value)}>
            <option value="never">never (does not expire)</option>
            <option value="30days">30 days</option>
            <option value="1day">1 day</option>
            <option value="1hour">1 hour</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${id}-scope`}>Access</label>
          <select id={`${id}-scope`} value={scope} onChange={(e) => setScope(e.target.value)}>
            <option value="read,write">read,write (boards, lists, cards)</option>
            <option value="read,write,account">read,write,account (also notifications)</option>
          </select>
        </div>
      </div>
      <button type="button" disabled={!apiKey || build.pending} onClick={() => build.run()}>
        Build the token request address
      </button>
      {!apiKey ? <p className="hint">Enter the API key first.</p> : null}
      <ErrorBox error={build.error} title="The address could not be built" />
      {url ? (
        <p>
          <a href={url} target="_blank" rel="noopener noreferrer">
            Open the token request page
          </a>{' '}
          <span className="muted small">(opens in a new tab)</span>
        </p>
      ) : null}
    </details>
  )
}

/** "1 tool step", "12 tool steps". */
function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`
}
