import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseEndpointPath } from '../../src/kit/endpoint-path.ts'
import { PatchbayError } from '../../src/kit/errors.ts'

test('a plain path passes, with its query string split off', () => {
  assert.deepEqual(parseEndpointPath('/1/boards/abc/lists?filter=open'), {
    path: '/1/boards/abc/lists',
    segments: ['1', 'boards', 'abc', 'lists'],
    query: { filter: 'open' },
  })
})

test('a path is normalized once: decoded segments for every check, one canonical encoding sent', () => {
  const cases: Array<[string, string, string[]]> = [
    ['/%70erson', '/person', ['person']],
    ['/%50ERSON/', '/PERSON/', ['PERSON']],
    ['/1/cards/%61bc', '/1/cards/abc', ['1', 'cards', 'abc']],
    ['/repos/o/r/contents/a b.md', '/repos/o/r/contents/a%20b.md', ['repos', 'o', 'r', 'contents', 'a b.md']],
    [
      '/repos/o/r/compare/main...dev',
      '/repos/o/r/compare/main...dev',
      ['repos', 'o', 'r', 'compare', 'main...dev'],
    ],
    ['/x/a:b@c,d=e', '/x/a:b@c,d=e', ['x', 'a:b@c,d=e']],
  ]
  for (const [endpoint, path, segments] of cases) {
    const parsed = parseEndpointPath(endpoint)
    assert.equal(parsed.path, path, endpoint)
    assert.deepEqual(parsed.segments, segments, endpoint)
  }
})

const refused: Array<[string, RegExp]> = [
  ['https://evil.example/1/cards', /is a URL/],
  ['//evil.example/1/cards', /empty segment/],
  ['/1/../admin', /relative segment/],
  ['/1/%2e%2e/admin', /percent-encodes a dot/],
  ['/1/%252e%252e/admin', /percent-encodes a dot, slash, backslash, percent sign/],
  ['/1/cards/%2F%2Fx', /percent-encodes a dot, slash/],
  ['/1/cards/a%2eb', /percent-encodes a dot/],
  ['/1/..;/admin', /path parameters/],
  ['/1/cards/..;x=1/admin', /path parameters/],
  ['/1/cards;jsessionid=1', /path parameters/],
  ['/1/%3b/admin', /semicolon/],
  ['/1/\uff0e\uff0e/admin', /fullwidth, ideographic/],
  ['/1/\u3002\u3002/admin', /fullwidth, ideographic/],
  ['/1/%E3%80%82%E3%80%82/admin', /fullwidth, ideographic/],
  ['/1/%EF%BC%8E%EF%BC%8E/admin', /fullwidth, ideographic/],
  ['/1/\uff61\uff61/admin', /fullwidth, ideographic/],
  ['/1/\u2024\u2024/admin', /fullwidth, ideographic/],
  ['/1/%00/admin', /control character/],
  [`/1/cards/${'a'.repeat(5000)}`, /at most 4096/],
  ['/1/%5Fsandbox/reset', /control API/],
  ['/%5F%53andbox/reset', /control API/],
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
