// OAuth 1.0a signing against the published examples (RFC 5849 §3.4.1.1 and OAuth Core 1.0
// Appendix A); the signed flow against the sandbox is in test/connectors/taskboard-connections.test.ts.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  baseStringUri,
  hmacSha1Signature,
  oauth1AuthorizationHeader,
  percentEncode,
  signatureBaseString,
  signOAuth1,
} from '../../src/kit/oauth1.ts'

test('percent-encoding is RFC 3986: unreserved characters stay, the rest is encoded in upper-case hex', () => {
  assert.equal(percentEncode("Ladies + Gentlemen!*'()~-._"), 'Ladies%20%2B%20Gentlemen%21%2A%27%28%29~-._')
  assert.equal(percentEncode('é'), '%C3%A9')
})

test('the base string URI drops default ports and the query, and lowercases scheme and host', () => {
  assert.equal(baseStringUri('HTTP://Example.COM:80/r%20v/X?id=123'), 'http://example.com/r%20v/X')
  assert.equal(baseStringUri('https://www.example.net:8080/?q=1'), 'https://www.example.net:8080/')
})

test('the signature base string of RFC 5849 §3.4.1.1', () => {
  const params: Array<[string, string]> = [
    ['b5', '=%3D'],
    ['a3', 'a'],
    ['c@', ''],
    ['a2', 'r b'],
    ['oauth_consumer_key', '9djdj82h48djs9d2'],
    ['oauth_token', 'kkk9d7dh3k39sjv7'],
    ['oauth_signature_method', 'HMAC-SHA1'],
    ['oauth_timestamp', '137131201'],
    ['oauth_nonce', '7d8f3e4a'],
    ['c2', ''],
    ['a3', '2 q'],
  ]
  assert.equal(
    signatureBaseString('POST', 'http://example.com/request', params),
    'POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D%26oauth_consumer_key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk9d7dh3k39sjv7',
  )
})

test('the HMAC-SHA1 signature of OAuth Core 1.0 Appendix A.5 (the photos example)', () => {
  const signed = signOAuth1(
    {
      method: 'GET',
      url: 'http://photos.example.net/photos?file=vacation.jpg&size=original',
      nonce: 'kllo9940pd9333jh',
      timestamp: '1191242096',
    },
    {
      consumerKey: 'dpf43f3p2l4k3l03',
      consumerSecret: 'kd94hf93k423kf44',
      token: 'nnch734d00sl2jdk',
      tokenSecret: 'pfkkdhi9sl3r4s00',
    },
  )
  assert.equal(signed.oauth_signature, 'tR3+Ty81lMeYAr/Fid0kMTYa/WM=')
  const header = oauth1AuthorizationHeader(signed)
  assert.match(header, /^OAuth /)
  assert.match(header, /oauth_signature="tR3%2BTy81lMeYAr%2FFid0kMTYa%2FWM%3D"/)
  assert.match(header, /oauth_token="nnch734d00sl2jdk"/)
})

test('without a token the key is the consumer secret and an empty token secret', () => {
  const a = hmacSha1Signature('GET&x&y', 'secret')
  const b = hmacSha1Signature('GET&x&y', 'secret', '')
  assert.equal(a, b)
  assert.notEqual(a, hmacSha1Signature('GET&x&y', 'secret', 'token-secret'))
})
