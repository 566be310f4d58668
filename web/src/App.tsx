// The shell: sign-in with a workspace key, then the navigation and the page the hash names.
import { type FormEvent, useEffect, useRef, useState } from 'react'
import { ApiError, type ApiErrorCode, api, get, setUnauthorizedHandler, storedKey, storeKey } from './api.ts'
import { ErrorBox, Loading, useLoad } from './components.tsx'
import { AgentPage } from './pages/Agent.tsx'
import { AgentsPage } from './pages/Agents.tsx'
import { ConnectionsPage } from './pages/Connections.tsx'
import { EventsPage } from './pages/Events.tsx'
import { OverviewPage } from './pages/Overview.tsx'
import { StepsPage } from './pages/Steps.tsx'
import { TimelinePage } from './pages/Timeline.tsx'
import { UsagePage } from './pages/Usage.tsx'
import { href, type Route, useRoute } from './router.ts'
import type { Connector } from './types.ts'
import { WorkspaceProvider } from './workspace.tsx'

const sections = [
  { id: 'overview', label: 'Overview' },
  { id: 'connections', label: 'Connections' },
  { id: 'steps', label: 'Tool steps' },
  { id: 'agents', label: 'Agents' },
  { id: 'events', label: 'Events' },
  { id: 'usage', label: 'Usage' },
] as const

export function App() {
  const [key, setKey] = useState<string | null>(() => storedKey())
  const [expired, setExpired] = useState(false)
  useEffect(() => {
    setUnauthorizedHandler(() => {
      storeKey(null)
      setKey(null)
      setExpired(true)
    })
    return () => setUnauthorizedHandler(null)
  }, [])
  if (!key)
    return (
      <SignIn
        expired={expired}
        onSignedIn={(k) => {
          storeKey(k)
          setExpired(false)
          setKey(k)
        }}
      />
    )
  return (
    <Signed
      key={key}
      onSignOut={() => {
        storeKey(null)
        setKey(null)
      }}
    />
  )
}

function SignIn({ onSignedIn, expired }: { onSignedIn: (key: string) => void; expired: boolean }) {
  const [value, setValue] = useState('')
  const [error, setError] = useState<unknown>(null)
  const [pending, setPending] = useState(false)
  const submit = async (e: FormEvent) => {
    e.preventDefault()
    const key = value.trim()
    if (!key) return
    setPending(true)
    setError(null)
    try {
      // Listing agents needs a workspace key: an unknown key answers 401, an agent key 403.
      try {
        await api('GET', '/v1/agents', undefined, { key })
      } catch (err) {
        if (err instanceof ApiError && err.code === 'AGENT_KEY_FORBIDDEN')
          throw new ApiError(403, {
            code: 'AGENT_KEY_FORBIDDEN',
            message: 'This is an agent key; the dashboard needs a workspace (admin) key.',
            hint: 'Use the workspace key printed on the first start (or PATCHBAY_ADMIN_KEY).',
          })
        throw err
      }
      onSignedIn(key)
    } catch (err) {
      setError(err)
    } finally {
      setPending(false)
    }
  }
  return (
    <main className="signin">
      <h1>
        <span className="logo" aria-hidden="true" />
        Patchbay
      </h1>
      <form onSubmit={submit} aria-labelledby="signin-title">
        <h2 id="signin-title">Sign in</h2>
        <p>
          Enter a workspace key (<code>pb_admin_…</code>). It is printed once on the first start, or set with{' '}
          <code>PATCHBAY_ADMIN_KEY</code>. The key stays in this browser tab only.
        </p>
        {expired ? <p role="alert">The key was refused; sign in again.</p> : null}
        <div className="field">
          <label htmlFor="workspace-key">Workspace key</label>
          <input
            id="workspace-key"
            type="password"
            autoComplete="off"
            spellCheck={false}
            value={value}
            onChange={(e) => setValue(e.target.value)}
          />
        </div>
        <ErrorBox error={error} title="Sign-in failed" />
        <button type="submit" className="primary" disabled={pending || !value.trim()}>
          {pending ? 'Checking…' : 'Sign in'}
        </button>
      </form>
    </main>
  )
}

function Signed({ onSignOut }: { onSignOut: () => void }) {
  const route = useRoute()
  const catalog = useLoad((signal) => get<{ connectors: Connector[] }>('/v1/catalog', undefined, signal), [])
  const section = route.parts[0] ?? 'connections'
  const mainRef = useRef<HTMLElement>(null)
  const [navOpen, setNavOpen] = useState(false)

  // Moving between pages puts the focus on the new page's heading, for keyboard and screen readers.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when the page changes
  useEffect(() => {
    setNavOpen(false)
    const h = mainRef.current?.querySelector('h1')
    if (h instanceof HTMLElement && document.activeElement !== document.body) h.focus()
  }, [route.parts.join('/')])

  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <a className="brand" href={href('connections')}>
          <span className="logo" aria-hidden="true" />
          Patchbay
        </a>
        <button
          type="button"
          className="nav-toggle"
          aria-expanded={navOpen}
          aria-controls="main-nav"
          onClick={() => setNavOpen((o) => !o)}
        >
          Menu
        </button>
        <nav id="main-nav" aria-label="Main" className={navOpen ? 'main-nav open' : 'main-nav'}>
          <ul>
            {sections.map((s) => (
              <li key={s.id}>
                <a href={href(s.id)} aria-current={section === s.id ? 'page' : undefined}>
                  {s.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" className="signout" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main id="main" ref={mainRef} tabIndex={-1}>
        {catalog.error ? (
          <ErrorBox error={catalog.error} title="The catalog could not be loaded" />
        ) : !catalog.data ? (
          <Loading what="Loading the catalog" />
        ) : (
          <WorkspaceProvider connectors={catalog.data.connectors}>
            <Page route={route} section={section} />
          </WorkspaceProvider>
        )}
      </main>
    </div>
  )
}

function Page({ route, section }: { route: Route; section: string }) {
  switch (section) {
    case 'connections':
      return <ConnectionsPage route={route} />
    case 'steps':
      return <StepsPage route={route} />
    case 'agents':
      return route.parts[1] ? <AgentPage id={route.parts[1]} /> : <AgentsPage />
    case 'events':
      return <EventsPage route={route} />
    case 'usage':
      return <UsagePage />
    case 'overview':
      return <OverviewPage />
    case 'timeline':
      return route.parts[1] ? <TimelinePage id={route.parts[1]} /> : <OverviewPage />
    default:
      return (
        <section>
          <h1 tabIndex={-1}>Not found</h1>
          <p>
            There is no page “{route.parts.join('/')}”. Go to <a href={href('connections')}>Connections</a>.
          </p>
        </section>
      )
  }
}

export function isApiError(e: unknown, code?: ApiErrorCode): e is ApiError {
  return e instanceof ApiError && (!code || e.code === code)
}
