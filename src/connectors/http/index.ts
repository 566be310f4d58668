// The generic http connector: the HTTP API Call step against any API whose base address and
// authentication a connection holds. The spec's answer for self-hosted code-host installations,
// which the code-host connector (made for the public service) does not target.
import { defineConnector } from '../../kit/define.ts'
import { authorizeHttp, customAuth } from './auth.ts'
import { httpApiCall } from './steps/api-call.ts'

export const http = defineConnector({
  id: 'http',
  name: 'HTTP',
  aliases: ['http request', 'generic api', 'self-hosted', 'enterprise server', 'custom api'],
  description:
    'Any HTTP API with custom authentication, e.g. a self-hosted code-host installation: one API Call step below the base address a connection holds.',
  beta: false,
  auth: [customAuth],
  authorize: authorizeHttp,
  baseUrlFrom: (c) => c.baseUrl,
  publicCredentialFields: ['baseUrl', 'authType', 'headerName', 'queryParam', 'name', 'checkPath'],
  identify: async (http, c) => {
    const url = new URL(c.baseUrl)
    let login: string | undefined
    if (c.checkPath) {
      const me = await http.get<Record<string, unknown> | null>(c.checkPath)
      const named = me && typeof me === 'object' ? (me.login ?? me.username ?? me.name) : undefined
      if (typeof named === 'string') login = named
    }
    const where = `${url.host}${url.pathname.replace(/\/$/, '')}`
    return {
      accountName: c.name ?? (login ? `${login} @ ${where}` : where),
      // The address is the account: a reconnect may change the authentication, not the API.
      accountId: `${url.origin}${url.pathname.replace(/\/$/, '')}`,
    }
  },
  steps: [httpApiCall],
  triggers: [],
})
