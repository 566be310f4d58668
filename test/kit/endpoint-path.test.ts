import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseEndpointPath } from '../../src/kit/endpoint-path.ts'
import { PatchbayError } from '../../src/kit/errors.ts'

test('a plain path passes, with its query string split off', () => {
  assert.deepEqual(parseEndpointPath('/1/boards/abc/lists?filter=open'), {
    path: '/1/boards/abc/lists',
    query: { filter: 'open' },
  })
})

const refused: Array<[string, RegExp]> = [
  ['https://evil.example/1/cards', /is a URL/],
  ['//evil.example/1/cards', /empty segment/],
  ['/1/../admin', /relative segment/],
  ['/1/%2e%2e/admin', /relative segment/],
  ['/1/%252e%252e/admin', /relative segment/],
  ['/1/cards/%2F%2Fx', /empty segment/],
  ['/1/cards\\x', /backslash/],
  ['/1/cards/%5cx', /backslash/],
  ['/1/cards\r\nHost: evil', /line break/],
  ['/1/cards/%0d%0aHost:evil', /line break/],
  ['1/cards', /must start with \//],
  ['', /empty/],
  ['/1/cards#frag', /fragment/],
  ['/1/%zz', /malformed percent/],
  ['/_sandbox/reset', /control API/],
  ['/%5fsandbox/reset', /control API/],
]

for (const [endpoint, why] of refused) {
  test(`the endpoint ${JSON.stringify(endpoint)} is refused with INVALID_ENDPOINT`, () => {
    assert.throws(
      () => parseEndpointPath(endpoint),
      (err: unknown) =>
        err instanceof PatchbayError &&
        err.code === 'INVALID_ENDPOINT' &&
        err.status === 400 &&
        why.test(err.message),
    )
  })
}
