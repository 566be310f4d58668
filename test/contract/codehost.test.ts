// The code-host contract check itself: it must find what is wrong, or a sandbox drifting from the
// published description would pass every test that closes a code host.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startCodehostSandbox } from '../../sandbox/codehost/index.ts'
import type { LoggedRequest } from '../../sandbox/codehost/request-log.ts'
import { checkRequest, checkResponse, checkWebhook } from '../helpers/codehost-contract.ts'

const logged = (over: Partial<LoggedRequest>): LoggedRequest => ({
  method: 'GET',
  path: '/repos/octo-demo/hello-world',
  route: '/repos/:owner/:repo',
  query: {},
  headers: { 'user-agent': 'patchbay-test' },
  body: null,
  bodyRead: true,
  status: 200,
  response: null,
  ...over,
})

test('an answer that breaks its operation’s response schema is reported with the field', async () => {
  const sandbox = await startCodehostSandbox()
  try {
    const res = await fetch(`${sandbox.url}/repos/octo-demo/hello-world`, {
      headers: { authorization: `Bearer ${sandbox.demo.token}`, 'user-agent': 'patchbay-test' },
    })
    const repo = await res.json()
    assert.deepEqual(checkResponse(logged({ response: repo })), [], 'the sandbox’s own answer fits')
    const problems = checkResponse(logged({ response: { ...repo, private: 'no' } }))
    assert.ok(
      problems.some((p) => p.includes('/private') && p.includes('boolean')),
      problems.join('\n'),
    )
  } finally {
    await sandbox.close()
  }
})

test('a request outside the description, or with a parameter it does not take, is reported', () => {
  assert.deepEqual(checkRequest(logged({ path: '/repos/octo-demo/hello-world/telepathy' })), [
    'not in the description: GET /repos/octo-demo/hello-world/telepathy',
  ])
  const problems = checkRequest(
    logged({ path: '/repos/octo-demo/hello-world/issues', route: null, query: { colour: 'red' } }),
  )
  assert.ok(
    problems.some((p) => p.includes('"colour" is not one of')),
    problems.join('\n'),
  )
  assert.deepEqual(checkRequest(logged({ headers: {} })), [
    'GET /repos/octo-demo/hello-world: no User-Agent (the code host answers 403)',
  ])
})

test('a webhook payload missing what its event requires is reported', () => {
  const problems = checkWebhook('issues', { action: 'opened' })
  assert.ok(
    problems.some((p) => p.startsWith('webhook issues$opened') && p.includes("'issue'")),
    problems.join('\n'),
  )
  assert.deepEqual(checkWebhook('telepathy', {}), [
    'webhook telepathy$event: the code host has no such event',
  ])
})
