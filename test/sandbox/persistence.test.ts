// The sandboxes keep their state in a directory across restarts (`npm run sandbox --state-dir`,
// and `npm start` in its data directory), each emulator in its own file; `fresh` starts from the
// seed again; without a directory nothing is kept (as the tests' own sandboxes run).
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { startSandboxes } from '../../sandbox/index.ts'
import { tempDir } from '../helpers/databases.ts'

const post = async (base: string, p: string, body: unknown) => {
  const res = await fetch(`${base}${p}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const text = await res.text()
  assert.ok(res.ok, `${p}: ${res.status} ${text}`)
  return JSON.parse(text)
}

/** What each emulator holds that the seed does not: a member with a token, a user with a token, an account. */
async function makeSomething(s: Awaited<ReturnType<typeof startSandboxes>>) {
  const member = await post(s.taskboard!.url, '/_sandbox/members', { username: 'kept' })
  const token = await post(s.taskboard!.url, '/_sandbox/tokens', {
    memberId: member.id,
    key: s.taskboard!.demo.key,
    scope: 'read,write',
    expiration: 'never',
  })
  const user = await post(s.codehost!.url, '/_sandbox/users', { login: 'kept-user', token: true })
  await post(s.contactdata!.url, '/_sandbox/accounts', {
    name: 'Kept',
    apiKey: 'cd_sbx_keptkeptkeptkeptkeptkept',
  })
  return { taskboardToken: token.token as string, codehostToken: user.token as string }
}

async function holds(
  s: Awaited<ReturnType<typeof startSandboxes>>,
  made: Awaited<ReturnType<typeof makeSomething>>,
) {
  const tb = await fetch(
    `${s.taskboard!.url}/1/members/me?key=${s.taskboard!.demo.key}&token=${made.taskboardToken}`,
  )
  const ch = await fetch(`${s.codehost!.url}/user`, {
    headers: { authorization: `Bearer ${made.codehostToken}`, 'user-agent': 'patchbay-test' },
  })
  const accounts = await (await fetch(`${s.contactdata!.url}/_sandbox/accounts`)).json()
  return {
    taskboard: tb.status === 200 ? (await tb.json()).username : tb.status,
    codehost: ch.status === 200 ? (await ch.json()).login : ch.status,
    contactdata: JSON.stringify(accounts).includes('cd_sbx_keptkeptkeptkeptkeptkept'),
  }
}

test('with a state directory the three sandboxes keep their state across a restart; fresh starts from the seed', async () => {
  const stateDir = tempDir('sandbox-state-')
  const first = await startSandboxes({ stateDir })
  const made = await makeSomething(first)
  await first.close()
  for (const name of ['taskboard', 'codehost', 'contactdata'])
    assert.ok(existsSync(path.join(stateDir, `${name}.state`)), `${name}.state is written`)

  const second = await startSandboxes({ stateDir })
  try {
    assert.deepEqual(await holds(second, made), {
      taskboard: 'kept',
      codehost: 'kept-user',
      contactdata: true,
    })
    // The seed's demo credentials are what they always are.
    assert.equal(second.taskboard!.demo.token, first.taskboard!.demo.token)
    assert.equal(second.codehost!.demo.token, first.codehost!.demo.token)
  } finally {
    await second.close()
  }

  const fresh = await startSandboxes({ stateDir, fresh: true })
  try {
    assert.deepEqual(await holds(fresh, made), { taskboard: 401, codehost: 401, contactdata: false })
  } finally {
    await fresh.close()
  }
})

test('without a state directory nothing is kept', async () => {
  const first = await startSandboxes()
  const made = await makeSomething(first)
  await first.close()
  const second = await startSandboxes()
  try {
    assert.deepEqual(await holds(second, made), { taskboard: 401, codehost: 401, contactdata: false })
  } finally {
    await second.close()
  }
})
