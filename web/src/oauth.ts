// OAuth sign-in from the dashboard: a full-page redirect (task-board) or a pop-up (code-host).
// POST /v1/connections/oauth/start gives the upstream's authorize address; the callback comes back
// to this page with ?connectionId=… / ?error=… (redirect) or posts {type:'patchbay:oauth', …} to
// this window (pop-up).
import { ApiError, post } from './api.ts'
import type { AuthMethod } from './types.ts'

export type OAuthMode = 'redirect' | 'popup'

const defaultModes: Record<string, OAuthMode> = { codehost: 'popup', taskboard: 'redirect' }

/** True for an auth method the user signs in to upstream (no credentials typed here). */
export function isOAuth(method: AuthMethod): boolean {
  return !method.credentialsSchema
}

/** The sign-in flows a method offers, as the catalog says or by the connector's custom. */
export function oauthModes(connectorId: string, method: AuthMethod): OAuthMode[] {
  const known = (x: unknown): x is OAuthMode => x === 'redirect' || x === 'popup'
  if (Array.isArray(method.modes)) {
    const modes = method.modes.filter(known)
    if (modes.length) return modes
  }
  for (const k of ['mode', 'flow'] as const) if (known(method[k])) return [method[k] as OAuthMode]
  return [defaultModes[connectorId] ?? 'redirect']
}

interface StartAnswer {
  authorizeUrl: string
  state: string
}

/** The address the upstream sends the browser back to after a redirect sign-in. */
export function returnAddress(): string {
  return `${location.origin}${location.pathname}#/connections`
}

export async function startRedirect(
  connector: string,
  opts: { authMethod?: string; connectionId?: string } = {},
): Promise<never> {
  const res = await post<StartAnswer>('/v1/connections/oauth/start', {
    connector,
    mode: 'redirect',
    returnTo: returnAddress(),
    ...opts,
  })
  location.assign(res.authorizeUrl)
  // The page is going away.
  return new Promise<never>(() => {})
}

/**
 * Opens the pop-up at once (inside the click, so it is not blocked), then points it at the
 * upstream's sign-in page, and resolves with the connection id the callback page posts back.
 */
export async function startPopup(
  connector: string,
  opts: { authMethod?: string; connectionId?: string } = {},
): Promise<{ connectionId: string; reconnected: boolean }> {
  const popup = window.open('', 'patchbay-oauth', 'popup,width=600,height=760')
  if (!popup)
    throw new ApiError(0, {
      code: 'POPUP_BLOCKED',
      message: 'The sign-in pop-up was blocked by the browser.',
      hint: 'Allow pop-ups for this page, then press the button again.',
    })
  let res: StartAnswer
  try {
    // returnTo names this page, whose origin the pop-up's message is posted to.
    res = await post<StartAnswer>('/v1/connections/oauth/start', {
      connector,
      mode: 'popup',
      returnTo: `${location.origin}${location.pathname}`,
      ...opts,
    })
  } catch (err) {
    popup.close()
    throw err
  }
  popup.location.href = res.authorizeUrl
  popup.focus()
  return new Promise<{ connectionId: string; reconnected: boolean }>((resolve, reject) => {
    let closedAt = 0
    const done = () => {
      window.removeEventListener('message', onMessage)
      clearInterval(timer)
    }
    const onMessage = (ev: MessageEvent) => {
      // Only what our own pop-up says counts.
      if (ev.source !== popup) return
      const data = ev.data as {
        type?: string
        connectionId?: string
        reconnected?: boolean
        error?: string
      } | null
      if (data?.type !== 'patchbay:oauth') return
      done()
      if (!popup.closed) popup.close()
      if (data.connectionId)
        resolve({ connectionId: data.connectionId, reconnected: data.reconnected === true })
      else
        reject(
          new ApiError(0, {
            code: 'OAUTH_FAILED',
            message: `The sign-in did not complete: ${data.error ?? 'no connection was made'}.`,
            hint: 'Try again; if the upstream asked for approval, approve the requested access.',
          }),
        )
    }
    // A window closed without a word: give a message already on its way a moment, then give up.
    const timer = setInterval(() => {
      if (!popup.closed) return
      if (!closedAt) closedAt = Date.now()
      else if (Date.now() - closedAt > 1500) {
        done()
        reject(
          new ApiError(0, {
            code: 'POPUP_CLOSED',
            message: 'The sign-in window was closed before the account was connected.',
            hint: 'Press the button again and finish signing in.',
          }),
        )
      }
    }, 500)
    window.addEventListener('message', onMessage)
  })
}

/** What a redirect sign-in left in this page's address (read once, when the page loads). */
export const redirectResult = takeRedirectResult()

function takeRedirectResult(): { connectionId?: string; reconnected?: boolean; error?: string } | null {
  const search = new URLSearchParams(location.search)
  const hashQuery = new URLSearchParams(location.hash.split('?')[1] ?? '')
  const connectionId = search.get('connectionId') ?? hashQuery.get('connectionId') ?? undefined
  const error =
    search.get('error_description') ??
    hashQuery.get('error_description') ??
    search.get('error') ??
    hashQuery.get('error') ??
    undefined
  if (!connectionId && !error) return null
  const reconnected = (search.get('reconnected') ?? hashQuery.get('reconnected')) === 'true'
  const hash = location.hash.split('?')[0] || '#/connections'
  history.replaceState(null, '', `${location.pathname}${hash}`)
  return { connectionId, reconnected, error }
}
