// /mcp as an OAuth protected resource: a missing or refused credential is answered 401 with the
// Bearer challenge MCP clients read (resource_metadata, and error="invalid_token" for a refused
// token) and Patchbay's own error body; the metadata document names the resource clients add.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import {
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
} from '@modelcontextprotocol/sdk/client/auth.js'
import { startTestService, type TestService } from '../helpers/service.ts'

let t: TestService

before(async () => {
  t = await startTestService()
})
after(() => t.close())

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
}

const postMcp = (headers: Record<string, string>) =>
  fetch(`${t.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(initialize),
  })

test('/mcp without a key: 401, a Bearer challenge naming the resource metadata, and our message', async () => {
  const res = await postMcp({})
  assert.equal(res.status, 401)
  const challenge = res.headers.get('www-authenticate')
  assert.ok(challenge, 'a WWW-Authenticate header')
  assert.match(challenge, /^Bearer /)
  const params = extractWWWAuthenticateParams(res)
  assert.equal(String(params.resourceMetadataUrl), `${t.url}/.well-known/oauth-protected-resource/mcp`)
  assert.equal(params.error, undefined, 'no error attribute when no token was sent (RFC 6750 §3.1)')
  const body = await res.json()
  assert.equal(body.error.code, 'UNAUTHORIZED')
  assert.match(body.error.message, /no API key/)
})

test('/mcp with a wrong key: error="invalid_token" in the challenge, our message in the body', async () => {
  const res = await postMcp({ authorization: 'Bearer pb_agent_not-a-real-key' })
  assert.equal(res.status, 401)
  const params = extractWWWAuthenticateParams(res)
  assert.equal(params.error, 'invalid_token')
  assert.equal(String(params.resourceMetadataUrl), `${t.url}/.well-known/oauth-protected-resource/mcp`)
  const body = await res.json()
  assert.equal(body.error.code, 'UNAUTHORIZED')
  assert.match(body.error.message, /not known/)
})

test('the REST API answers 401 without the MCP challenge', async () => {
  const res = await fetch(`${t.url}/v1/agents`)
  assert.equal(res.status, 401)
  assert.equal(res.headers.get('www-authenticate'), null)
})

test('the protected resource metadata, at the path-inserted and the root well-known address', async () => {
  // The MCP SDK's own discovery (what clients run after the 401) finds and parses it.
  const found = await discoverOAuthProtectedResourceMetadata(new URL(`${t.url}/mcp`))
  assert.equal(found.resource, `${t.url}/mcp`)
  assert.deepEqual(found.scopes_supported, ['mcp'])
  assert.deepEqual(found.bearer_methods_supported, ['header'])
  const root = await fetch(`${t.url}/.well-known/oauth-protected-resource`)
  assert.equal(root.status, 200)
  assert.equal((await root.json()).resource, `${t.url}/mcp`)
})
