// The shell: sign-in as a person (email and password, or single sign-on) or with a workspace key,
// then the navigation, the workspace switcher and the page the hash names.
import { type FormEvent, type InputHTMLAttributes, type ReactNode, useEffect, useRef, useState } from 'react'
import {
  ApiError,
  type ApiErrorCode,
  api,
  get,
  lastWorkspace,
  type PersonSession,
  setUnauthorizedHandler,
  storedKey,
  storedSession,
  storeKey,
  storeSession,
} from './api.ts'
import { ErrorBox, Loading, useLoad } from './components.tsx'
import { AgentPage } from './pages/Agent.tsx'
import { AgentsPage } from './pages/Agents.tsx'
import { ConnectionsPage } from './pages/Connections.tsx'
import { EndUserPage, EndUsersPage } from './pages/EndUsers.tsx'
import { EventsPage } from './pages/Events.tsx'
import { OverviewPage } from './pages/Overview.tsx'
import { StepsPage } from './pages/Steps.tsx'
import { TimelinePage } from './pages/Timeline.tsx'
import { UsagePage } from './pages/Usage.tsx'
import { type Me, WorkspacePage } from './pages/Workspace.tsx'
import { href, type Route, useRoute } from './router.ts'
import type { Connector } from './types.ts'
import { WorkspaceProvider } from './workspace.tsx'

const sections = [
  { id: 'overview', label: 'Overview' },
  { id: 'connections', label: 'Connections' },
  { id: 'steps', label: 'Tool steps' },
  { id: 'agents', label: 'Agents' },
  { id: 'events', label: 'Events' },
  { id: 'end-users', label: 'End users' },
  { id: 'usage', label: 'Usage' },
  { id: 'workspace', label: 'Workspace' },
] as const

/** The workspace a person's requests act on: the one chosen before, if still theirs, else their first. */
function pickWorkspace(me: Me): string | null {
  const chosen = storedSession()?.workspaceId ?? lastWorkspace()
  return me.workspaces.find((w) => w.id === chosen)?.id ?? me.workspaces[0]?.id ?? null
}

export function App() {
  const [key, setKey] = useState<string | null>(() => storedKey())
  const [me, setMe] = useState<Me | null>(null)
  const [checked, setChecked] = useState(() => storedKey() !== null)
  const [expired, setExpired] = useState(false)
  const signedInAs = (who: Me) => {
    storeSession({ csrfToken: who.csrfToken, workspaceId: pickWorkspace(who) })
    setMe(who)
    setExpired(false)
  }
  useEffect(() => {
    setUnauthorizedHandler(() => {
      storeKey(null)
      storeSession(null)
      setKey(null)
      setMe(null)
      setExpired(true)
    })
    return () => setUnauthorizedHandler(null)
  }, [])
  // A session cookie from an earlier sign-in (or single sign-on coming back): who is signed in.
  // biome-ignore lint/correctness/useExhaustiveDependencies: asked again only when the key changes
  useEffect(() => {
    if (key) return
    api<Me>('GET', '/v1/me', undefined, { key: '' })
      .then(signedInAs, () => storeSession(null))
      .finally(() => setChecked(true))
  }, [key])
  const route = useRoute()
  const claim = /^#claim-owner=(.+)$/.exec(location.hash)?.[1]
  if (claim && !key)
    return checked ? (
      <ClaimOwnerPage token={decodeURIComponent(claim)} me={me} onSignedIn={signedInAs} />
    ) : (
      <Loading what="Checking your sign-in" />
    )
  if (route.parts[0] === 'reset-password' && route.parts[1] && !key)
    return <ResetPasswordPage token={route.parts[1]} onSignedIn={signedInAs} />
  if (route.parts[0] === 'invitations' && route.parts[1] && !key)
    return <InvitationPage token={route.parts[1]} me={me} onSignedIn={signedInAs} />
  if (!checked) return <Loading what="Checking your sign-in" />
  if (!key && !me)
    return (
      <SignIn
        expired={expired}
        onSignedIn={(k) => {
          storeKey(k)
          setExpired(false)
          setKey(k)
        }}
        onPerson={signedInAs}
      />
    )
  return (
    <Signed
      key={key ?? storedSession()?.workspaceId ?? 'person'}
      me={key ? null : me}
      onMe={(who) => signedInAs(who)}
      onWorkspace={(id) => {
        const s = storedSession() as PersonSession
        storeSession({ ...s, workspaceId: id })
        setMe((m) => (m ? { ...m } : m))
      }}
      onSignOut={async () => {
        if (!key) await api('POST', '/v1/auth/sign-out', {}).catch(() => {})
        storeKey(null)
        storeSession(null)
        setKey(null)
        setMe(null)
      }}
    />
  )
}

function SignIn({
  onSignedIn,
  onPerson,
  expired,
}: {
  onSignedIn: (key: string) => void
  onPerson: (me: Me) => void
  expired: boolean
}) {
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
    <SignInFrame>
      {expired ? <p role="alert">Your sign-in ended or the key was refused; sign in again.</p> : null}
      <PersonSignIn onPerson={onPerson} />
      <form onSubmit={submit} aria-labelledby="signin-title">
        <h2 id="signin-title">Or sign in with a key</h2>
        <p>
          For automation and the first start: a workspace key (<code>pb_ws_…</code>) printed once on the first
          start, or set with <code>PATCHBAY_ADMIN_KEY</code>. The key stays in this browser tab only.
        </p>
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
          {pending ? 'Checking…' : 'Sign in with the key'}
        </button>
      </form>
    </SignInFrame>
  )
}

/** Email and password (and single sign-on when offered): the person's session cookie. */
function PersonSignIn({ onPerson }: { onPerson: (me: Me) => void }) {
  const sso = useLoad(
    (s) => get<{ sso: boolean; signup: string; passwordReset: boolean }>('/v1/auth/sso', undefined, s),
    [],
  )
  const [mode, setMode] = useState<'in' | 'up' | 'forgot'>('in')
  const [account, setAccount] = useState(noAccount)
  const { email, password, name } = account
  const [error, setError] = useState<unknown>(null)
  const [pending, setPending] = useState(false)
  const submit = async (e: FormEvent) => {
    e.preventDefault()
    setPending(true)
    setError(null)
    try {
      const who =
        mode === 'in'
          ? await api<Me>('POST', '/v1/auth/sign-in', { email: email.trim(), password }, { key: '' })
          : await api<Me>(
              'POST',
              '/v1/auth/sign-up',
              { email: email.trim(), password, name: name.trim() },
              { key: '' },
            )
      onPerson(who)
    } catch (err) {
      setError(err)
    } finally {
      setPending(false)
    }
  }
  if (mode === 'forgot') return <ForgotPassword email={email} onBack={() => setMode('in')} />
  return (
    <form onSubmit={submit} aria-labelledby="person-signin-title">
      <h2 id="person-signin-title">{mode === 'in' ? 'Sign in' : 'Create an account'}</h2>
      <AccountFields
        idPrefix="person"
        account={account}
        onChange={setAccount}
        askName={mode === 'up'}
        newPassword={mode === 'up'}
      />
      <ErrorBox error={error} title={mode === 'in' ? 'Sign-in failed' : 'The account was not made'} />
      <button type="submit" className="primary" disabled={pending || !email.trim() || !password}>
        {pending ? 'Signing in…' : mode === 'in' ? 'Sign in' : 'Create account'}
      </button>
      {sso.data?.sso ? (
        <p>
          <a className="button" href={`/v1/auth/sso/start?returnTo=${encodeURIComponent('/#/connections')}`}>
            Sign in with single sign-on
          </a>
        </p>
      ) : null}
      {sso.data?.signup === 'open' ? (
        <p>
          <button type="button" className="link" onClick={() => setMode(mode === 'in' ? 'up' : 'in')}>
            {mode === 'in' ? 'No account yet? Create one' : 'Have an account? Sign in'}
          </button>
        </p>
      ) : null}
      {mode === 'in' && sso.data?.passwordReset ? (
        <p>
          <button type="button" className="link" onClick={() => setMode('forgot')}>
            Forgot your password?
          </button>
        </p>
      ) : null}
    </form>
  )
}

/** Asks for a reset link by mail (the answer is the same whether the email has an account). */
function ForgotPassword({ email: given, onBack }: { email: string; onBack: () => void }) {
  const [email, setEmail] = useState(given)
  const [sent, setSent] = useState<string | null>(null)
  const [error, setError] = useState<unknown>(null)
  const submit = async (e: FormEvent) => {
    e.preventDefault()
    setError(null)
    try {
      const res = await api<{ message: string }>(
        'POST',
        '/v1/auth/password-reset',
        { email: email.trim() },
        { key: '' },
      )
      setSent(res.message)
    } catch (err) {
      setError(err)
    }
  }
  return (
    <form onSubmit={submit} aria-labelledby="forgot-title">
      <h2 id="forgot-title">Reset your password</h2>
      <p>We mail a link to choose a new password to the account's email.</p>
      <div className="field">
        <label htmlFor="forgot-email">Email</label>
        <input
          id="forgot-email"
          type="email"
          autoComplete="username"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
      </div>
      <ErrorBox error={error} title="No link was mailed" />
      {sent ? <p role="status">{sent}</p> : null}
      <button type="submit" className="primary" disabled={!email.trim()}>
        Mail me a link
      </button>
      <p>
        <button type="button" className="link" onClick={onBack}>
          Back to sign in
        </button>
      </p>
    </form>
  )
}

/** A mailed reset link (#/reset-password/<token>): a new password, then signed in. */
function ResetPasswordPage({ token, onSignedIn }: { token: string; onSignedIn: (me: Me) => void }) {
  const [password, setPassword] = useState('')
  const [error, setError] = useState<unknown>(null)
  const submit = async (e: FormEvent) => {
    e.preventDefault()
    setError(null)
    try {
      const who = await api<Me>('POST', '/v1/auth/password-reset/confirm', { token, password }, { key: '' })
      location.hash = href('connections')
      onSignedIn(who)
    } catch (err) {
      setError(err)
    }
  }
  return (
    <SignInFrame>
      <form onSubmit={submit} aria-labelledby="reset-title">
        <h2 id="reset-title">Choose a new password</h2>
        <p>Every session of your account ends; you are signed in here with the new password.</p>
        <div className="field">
          <label htmlFor="reset-password">New password</label>
          <input
            id="reset-password"
            type="password"
            autoComplete="new-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </div>
        <ErrorBox error={error} title="The password was not changed" />
        <button type="submit" className="primary" disabled={!password}>
          Set the new password
        </button>
      </form>
    </SignInFrame>
  )
}

/**
 * The owner-setup link printed at start (#claim-owner=<token>): the first person becomes the owner,
 * signed in already (POST /v1/workspaces/claim) or making their account (POST /v1/auth/claim-owner).
 */
function ClaimOwnerPage({
  token,
  me,
  onSignedIn,
}: {
  token: string
  me: Me | null
  onSignedIn: (me: Me) => void
}) {
  const [account, setAccount] = useState(noAccount)
  const { email, password, name } = account
  const [error, setError] = useState<unknown>(null)
  const claim = async () => {
    if (me) {
      const claimed = await api<{ id: string }>('POST', '/v1/workspaces/claim', { token })
      const who = await api<Me>('GET', '/v1/me', undefined, { key: '' })
      storeSession({ csrfToken: who.csrfToken, workspaceId: claimed.id })
      return who
    }
    const body = { token, email: email.trim(), password, name: name.trim() }
    return api<Me>('POST', '/v1/auth/claim-owner', body, { key: '' })
  }
  const submit = async (e: FormEvent) => {
    e.preventDefault()
    setError(null)
    try {
      const who = await claim()
      location.hash = href('connections')
      onSignedIn(who)
    } catch (err) {
      setError(err)
    }
  }
  return (
    <SignInFrame>
      <form onSubmit={submit} aria-labelledby="claim-title">
        <h2 id="claim-title">Become the owner of this workspace</h2>
        <p>This link was printed when Patchbay started. Whoever uses it first owns the workspace.</p>
        {me ? (
          <p>Signed in as {me.person.email}.</p>
        ) : (
          <AccountFields idPrefix="claim" account={account} onChange={setAccount} askName newPassword />
        )}
        <ErrorBox error={error} title="Not claimed" />
        <button type="submit" className="primary" disabled={!me && (!email.trim() || !password)}>
          {me ? 'Own the workspace' : 'Create account and own the workspace'}
        </button>
      </form>
    </SignInFrame>
  )
}

/** An invitation link (#/invitations/<token>): accept it signed in, or make the invited account. */
function InvitationPage({
  token,
  me,
  onSignedIn,
}: {
  token: string
  me: Me | null
  onSignedIn: (me: Me) => void
}) {
  const [account, setAccount] = useState(noAccount)
  const { email, password, name } = account
  const [error, setError] = useState<unknown>(null)
  const [done, setDone] = useState<string | null>(null)
  const accept = async () => {
    setError(null)
    try {
      await api('POST', `/v1/invitations/${encodeURIComponent(token)}/accept`, {})
      const who = await api<Me>('GET', '/v1/me', undefined, { key: '' })
      onSignedIn(who)
      setDone('You joined the workspace.')
    } catch (err) {
      setError(err)
    }
  }
  const signUp = async (e: FormEvent) => {
    e.preventDefault()
    setError(null)
    try {
      const who = await api<Me>(
        'POST',
        '/v1/auth/sign-up',
        { email: email.trim(), password, name: name.trim(), invitation: token },
        { key: '' },
      )
      onSignedIn(who)
      setDone('Your account was made and joined the workspace.')
    } catch (err) {
      setError(err)
    }
  }
  return (
    <SignInFrame>
      <section aria-labelledby="invitation-title">
        <h2 id="invitation-title">An invitation to a workspace</h2>
        {done ? (
          <p role="status">
            {done} <a href={href('connections')}>Open the dashboard</a>
          </p>
        ) : me ? (
          <>
            <p>Signed in as {me.person.email}.</p>
            <button type="button" className="primary" onClick={accept}>
              Accept the invitation
            </button>
          </>
        ) : (
          <form onSubmit={signUp}>
            <p>
              Make your account with the email the invitation was sent to, or{' '}
              <a href={href('connections')}>sign in</a> first and open the link again.
            </p>
            <AccountFields idPrefix="inv" account={account} onChange={setAccount} askName newPassword />
            <button type="submit" className="primary" disabled={!email.trim() || !password}>
              Create account and join
            </button>
          </form>
        )}
        <ErrorBox error={error} title="The invitation was not accepted" />
      </section>
    </SignInFrame>
  )
}

function Signed({
  me,
  onMe,
  onWorkspace,
  onSignOut,
}: {
  me: Me | null
  onMe: (me: Me) => void
  onWorkspace: (id: string) => void
  onSignOut: () => void
}) {
  if (me && me.workspaces.length === 0) return <FirstWorkspace me={me} onMe={onMe} onSignOut={onSignOut} />
  return <Shell me={me} onWorkspace={onWorkspace} onSignOut={onSignOut} />
}

/** A person in no workspace yet: makes one (they own it), or waits for an invitation. */
function FirstWorkspace({ me, onMe, onSignOut }: { me: Me; onMe: (me: Me) => void; onSignOut: () => void }) {
  const [name, setName] = useState('')
  const [error, setError] = useState<unknown>(null)
  const submit = async (e: FormEvent) => {
    e.preventDefault()
    setError(null)
    try {
      const made = await api<{ id: string }>('POST', '/v1/workspaces', { name: name.trim() })
      const who = await api<Me>('GET', '/v1/me')
      storeSession({ csrfToken: who.csrfToken, workspaceId: made.id })
      onMe(who)
    } catch (err) {
      setError(err)
    }
  }
  return (
    <SignInFrame>
      <form onSubmit={submit} aria-labelledby="first-workspace-title">
        <h2 id="first-workspace-title">Create your first workspace</h2>
        <p>
          Signed in as {me.person.email}. A workspace holds connections, agents, keys and events; you will own
          it and can invite others. Invited to one? Open the invitation link instead.
        </p>
        <div className="field">
          <label htmlFor="workspace-name">Workspace name</label>
          <input id="workspace-name" value={name} onChange={(e) => setName(e.target.value)} />
        </div>
        <ErrorBox error={error} title="The workspace was not made" />
        <button type="submit" className="primary" disabled={!name.trim()}>
          Create workspace
        </button>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </form>
    </SignInFrame>
  )
}

function Shell({
  me,
  onWorkspace,
  onSignOut,
}: {
  me: Me | null
  onWorkspace: (id: string) => void
  onSignOut: () => void
}) {
  const workspaceId = me ? (storedSession()?.workspaceId ?? null) : null
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
        {me && me.workspaces.length > 0 ? (
          <div className="workspace-switcher">
            <label htmlFor="workspace-switcher">Workspace</label>
            <select
              id="workspace-switcher"
              value={workspaceId ?? ''}
              onChange={(e) => onWorkspace(e.target.value)}
            >
              {me.workspaces.map((w) => (
                <option key={w.id} value={w.id}>
                  {w.name} ({w.role})
                </option>
              ))}
            </select>
          </div>
        ) : null}
        {me ? <span className="who">{me.person.email}</span> : null}
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
            <Page route={route} section={section} me={me} workspaceId={workspaceId} />
          </WorkspaceProvider>
        )}
      </main>
    </div>
  )
}

function Page({
  route,
  section,
  me,
  workspaceId,
}: {
  route: Route
  section: string
  me: Me | null
  workspaceId: string | null
}) {
  switch (section) {
    case 'workspace':
      return <WorkspacePage route={route} me={me} workspaceId={workspaceId} />
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
    case 'end-users':
      return route.parts[1] ? <EndUserPage id={route.parts[1]} /> : <EndUsersPage />
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

/** The frame of every page shown before the dashboard: sign-in, invitations, owner setup. */
function SignInFrame({ children }: { children: ReactNode }) {
  return (
    <main className="signin">
      <h1>
        <span className="logo" aria-hidden="true" />
        Patchbay
      </h1>
      {children}
    </main>
  )
}

type Account = { name: string; email: string; password: string }
const noAccount: Account = { name: '', email: '', password: '' }

/** Name (when making an account), email and password: sign-in, sign-up, invitations, owner setup. */
function AccountFields({
  idPrefix,
  account,
  onChange,
  askName = false,
  newPassword = false,
}: {
  idPrefix: string
  account: Account
  onChange: (account: Account) => void
  askName?: boolean
  newPassword?: boolean
}) {
  const field = (key: keyof Account, label: string, props: InputHTMLAttributes<HTMLInputElement>) => (
    <div className="field">
      <label htmlFor={`${idPrefix}-${key}`}>{label}</label>
      <input
        id={`${idPrefix}-${key}`}
        {...props}
        value={account[key]}
        onChange={(e) => onChange({ ...account, [key]: e.target.value })}
      />
    </div>
  )
  return (
    <>
      {askName ? field('name', 'Name', { autoComplete: 'name' }) : null}
      {field('email', 'Email', { type: 'email', autoComplete: 'username' })}
      {field('password', 'Password', {
        type: 'password',
        autoComplete: newPassword ? 'new-password' : 'current-password',
      })}
    </>
  )
}
