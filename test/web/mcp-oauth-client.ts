// What a desktop MCP client brings to an OAuth sign-in (test/web/mcp-oauth*.test.ts): a loopback
// listener the browser is sent back to with the code, and the MCP SDK's OAuthClientProvider that
// keeps its registration, its tokens and the PKCE verifier of the flow under way.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js'

/** Where the browser is sent back with the code: a loopback listener, as a desktop client has. */
export async function startCallback() {
  const waiting: ((url: URL) => void)[] = []
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    res.writeHead(200, { 'content-type': 'text/plain' }).end('You may close this window.')
    waiting.shift()?.(url)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    next: () => new Promise<URL>((r) => waiting.push(r)),
    close: () => new Promise<void>((r) => server.close(() => r())),
  }
}

/** What an MCP client keeps: its registration, its tokens, the PKCE verifier of the flow under way. */
export class ClientState implements OAuthClientProvider {
  client?: OAuthClientInformationMixed
  saved?: OAuthTokens
  verifier?: string
  authorizationUrl?: URL
  readonly redirectUrl: string
  constructor(redirectUrl: string) {
    this.redirectUrl = redirectUrl
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test Desktop Assistant',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }
  }
  clientInformation() {
    return this.client
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    if (!this.verifier) throw new Error('no verifier')
    return this.verifier
  }
}

/** A `tools/list` posted to `/mcp` with the client's access token, as a raw request (its status is what is asserted). */
export function toolsListWithToken(
  state: ClientState,
  mcpUrl: string,
  query = '',
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${mcpUrl}${query}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${state.saved!.access_token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  })
}
