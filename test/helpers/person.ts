// A person using Patchbay's API as the dashboard does: a cookie jar (the session cookie, as a
// browser keeps it), the CSRF token sign-in answered sent with every change, and the
// Patchbay-Workspace header when a workspace is chosen.

export interface Answer {
  status: number
  body: any
  headers: Headers
}

export class CookieJar {
  readonly cookies = new Map<string, { value: string; attributes: string }>()

  /** Keeps what Set-Cookie headers say (a cookie set to expire is dropped). */
  take(headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair, ...rest] = line.split(';')
      const eq = pair.indexOf('=')
      const name = pair.slice(0, eq).trim()
      const value = pair.slice(eq + 1).trim()
      const attributes = rest.join(';')
      const expires = /expires=([^;]+)/i.exec(attributes)?.[1]
      if (!value || /max-age=0\b/i.test(attributes) || (expires && Date.parse(expires) <= Date.now()))
        this.cookies.delete(name)
      else this.cookies.set(name, { value, attributes })
    }
  }

  header(): string | undefined {
    if (this.cookies.size === 0) return undefined
    return [...this.cookies].map(([k, v]) => `${k}=${v.value}`).join('; ')
  }
}

export class Person {
  readonly jar = new CookieJar()
  csrfToken: string | null = null
  workspaceId: string | null = null
  readonly base: string

  constructor(base: string) {
    this.base = base
  }

  /** Calls the API; `csrf: false` leaves the CSRF header out, a string sends that instead. */
  async api(
    method: string,
    path: string,
    body?: unknown,
    opts: { csrf?: boolean | string; base?: string; headers?: Record<string, string> } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = { ...opts.headers }
    const cookie = this.jar.header()
    if (cookie) headers.cookie = cookie
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (opts.csrf !== false && this.csrfToken)
      headers['x-csrf-token'] = typeof opts.csrf === 'string' ? opts.csrf : this.csrfToken
    if (this.workspaceId) headers['patchbay-workspace'] = this.workspaceId
    const res = await fetch((opts.base ?? this.base) + path, {
      method,
      headers,
      body: body !== undefined ? JSON.stringify(body) : undefined,
      redirect: 'manual',
    })
    this.jar.take(res.headers)
    const text = await res.text()
    let parsed: any = null
    try {
      parsed = text ? JSON.parse(text) : null
    } catch {
      parsed = text
    }
    if (parsed && typeof parsed === 'object' && typeof parsed.csrfToken === 'string')
      this.csrfToken = parsed.csrfToken
    return { status: res.status, body: parsed, headers: res.headers }
  }

  async signUp(email: string, password: string, name: string, invitation?: string): Promise<Answer> {
    return this.api('POST', '/v1/auth/sign-up', {
      email,
      password,
      name,
      ...(invitation ? { invitation } : {}),
    })
  }

  async signIn(email: string, password: string, headers?: Record<string, string>): Promise<Answer> {
    return this.api('POST', '/v1/auth/sign-in', { email, password }, { headers })
  }
}
