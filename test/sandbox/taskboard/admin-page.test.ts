// Getting an API key and token as the specification's steps describe, through the pages a person
// uses: the extension admin page makes an extension (a name is required) and shows its API key; the
// token page, opened with that key, gives a token after the member approves; the two work together
// against the API.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sandboxForThisFile, sb } from './harness.ts'

sandboxForThisFile()

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
})
const between = (html: string, id: string) =>
  new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(html)?.[1]?.replaceAll('&amp;', '&')

test('the admin page makes an extension whose key gets a token from the token page, and both call the API', async () => {
  const empty = await fetch(sb.adminUrl)
  assert.equal(empty.status, 200)
  assert.match(await empty.text(), /New extension name \(required\)/)

  const made = await fetch(
    sb.adminUrl,
    form({ username: sb.demo.username, password: sb.demo.password, name: 'My automation' }),
  )
  assert.equal(made.status, 201)
  const page = await made.text()
  const key = between(page, 'api-key')
  assert.match(String(key), /^[0-9a-f]{32}$/)
  assert.match(String(between(page, 'api-secret')), /^[0-9a-f]{64}$/)

  // Step 2: the token request address, with the parameters the specification names.
  const link = new URL(String(between(page, 'token-link')))
  assert.equal(link.pathname, '/1/authorize')
  assert.deepEqual(Object.fromEntries(link.searchParams), {
    expiration: 'never',
    name: 'My automation',
    scope: 'read,write',
    response_type: 'token',
    key,
  })
  assert.equal((await fetch(link)).status, 200)
  // Step 3: approve; the token is shown.
  const approved = await fetch(
    `${sb.authUrl}/1/authorize`,
    form({
      ...Object.fromEntries(link.searchParams),
      username: sb.demo.username,
      password: sb.demo.password,
      approve: 'Allow',
    }),
  )
  const token = between(await approved.text(), 'token')
  assert.match(String(token), /^[0-9a-f]{64}$/)

  const me = await fetch(`${sb.url}/1/members/me?key=${key}&token=${token}`)
  assert.equal(me.status, 200)
  assert.equal((await me.json()).username, sb.demo.username)
  const info = await (await fetch(`${sb.url}/1/tokens/${token}?key=${key}&token=${token}`)).json()
  assert.equal(info.identifier, 'My automation')
  assert.deepEqual(info.dateExpires, null, 'expiration=never')
})

test('the admin page refuses an extension without a name, and a wrong password', async () => {
  const nameless = await fetch(
    sb.adminUrl,
    form({ username: sb.demo.username, password: sb.demo.password, name: '  ' }),
  )
  assert.equal(nameless.status, 400)
  assert.match(await nameless.text(), /A name is required/)
  const wrong = await fetch(sb.adminUrl, form({ username: sb.demo.username, password: 'nope', name: 'X' }))
  assert.equal(wrong.status, 401)
  const text = await wrong.text()
  assert.match(text, /Invalid username or password/)
  assert.doesNotMatch(text, /api-key/)
})
