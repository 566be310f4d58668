// `npm start` (src/main.ts, with its embedded sandboxes) stopped and started again on the same
// data directory: a task-board connection made through the sign-in, the card it made and the
// webhook its trigger registered upstream are all still there, and the connection still works.
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { after, test } from 'node:test'
import { tempDir } from '../helpers/databases.ts'
import { adminApi, freePort } from '../helpers/main-process.ts'
import { eventually } from '../helpers/receiver.ts'

const root = path.resolve(import.meta.dirname, '../..')
const adminKey = 'pb_admin_restart_test_key'
const dataDir = tempDir('patchbay-restart-')
let port: number
let child: ChildProcess | null = null

/** Starts `npm start`'s entry point; answers the task-board sandbox address it printed. */
async function start(): Promise<string> {
  let out = ''
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    PATCHBAY_PUBLIC_URL: `http://127.0.0.1:${port}`,
    PATCHBAY_DATA_DIR: dataDir,
    PATCHBAY_ADMIN_KEY: adminKey,
    LOG_LEVEL: 'silent',
  }
  // Every upstream embedded, whatever the shell running the tests has set.
  for (const name of ['TASKBOARD', 'CODEHOST', 'CONTACTDATA'])
    for (const suffix of ['URL', 'WEB_URL']) delete env[`PATCHBAY_${name}_${suffix}`]
  child = spawn(process.execPath, [path.join(root, 'src/main.ts')], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  child.stdout!.on('data', (chunk) => {
    out += chunk
  })
  const url = await eventually(
    async () => /task-board sandbox\s+(http:\/\/\S+)/.exec(out)?.[1],
    (u) => Boolean(u),
    // Starting three sandboxes and Patchbay takes a while on a busy machine.
    120_000,
  )
  return url!
}

async function stop(): Promise<void> {
  const c = child
  if (!c || c.exitCode !== null) return
  const exited = new Promise((resolve) => c.once('exit', resolve))
  c.kill('SIGTERM')
  await exited
  child = null
}

after(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL')
})

const api = adminApi(() => port, adminKey)

const decode = (s: string) =>
  s.replace(
    /&(amp|quot|lt|gt|#39);/g,
    (_m, e) => ({ amp: '&', quot: '"', lt: '<', gt: '>', '#39': "'" })[e as 'amp'],
  )

/** The task-board sign-in as a browser goes through it: authorize page, log in and allow, callback. */
async function signIn(): Promise<string> {
  const begun = await api('POST', '/v1/connections/oauth/start', {
    connector: 'taskboard',
    mode: 'redirect',
    returnTo: `http://127.0.0.1:${port}/dashboard/connections`,
  })
  assert.equal(begun.status, 200, JSON.stringify(begun.body))
  const page = await fetch(begun.body.authorizeUrl)
  const html = await page.text()
  const form = /<form method="POST" action="([^"]+)">([\s\S]*?)<\/form>/.exec(html)
  assert.ok(form, 'the approve page has a form')
  const fields = [...form[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map(
    (m) => [decode(m[1]!), decode(m[2]!)] as [string, string],
  )
  fields.push(['username', 'demo'], ['password', 'demo'], ['approve', 'Allow'])
  const approved = await fetch(new URL(decode(form[1]!), begun.body.authorizeUrl), {
    method: 'POST',
    body: new URLSearchParams(fields),
    redirect: 'manual',
  })
  const back = await fetch(approved.headers.get('location')!, { redirect: 'manual' })
  const connectionId = new URL(back.headers.get('location')!).searchParams.get('connectionId')
  assert.match(String(connectionId), /^con_/)
  return connectionId!
}

test('a restart of npm start keeps the embedded sandboxes: a sign-in connection, its data and its webhook', {
  timeout: 400_000,
}, async () => {
  port = await freePort()
  const firstSandbox = await start()
  const connectionId = await signIn()
  const demoBoard = (await (await fetch(`${firstSandbox}/_sandbox/state`)).json()).boards[0]
  const lists = await api('POST', '/v1/steps/taskboard.api_call/run', {
    connectionId,
    input: { method: 'GET', endpoint: `/1/boards/${demoBoard.id}/lists` },
  })
  assert.equal(lists.status, 200, JSON.stringify(lists.body))
  const listId = lists.body.output.body[0].id
  const made = await api('POST', '/v1/steps/taskboard.create_card/run', {
    connectionId,
    input: { idList: listId, name: 'Made before the restart' },
  })
  assert.equal(made.status, 200, JSON.stringify(made.body))
  const agent = await api('POST', '/v1/agents', {
    name: 'restart-watcher',
    scope: { boards: [demoBoard.id] },
    connectionIds: [connectionId],
    delivery: { type: 'stream' },
  })
  const trigger = await api('POST', `/v1/agents/${agent.body.id}/triggers`, {
    trigger: 'taskboard.card_moved',
    connectionId,
    config: { idBoard: demoBoard.id },
  })
  assert.equal(trigger.status, 201, JSON.stringify(trigger.body))
  const webhooksBefore = (await (await fetch(`${firstSandbox}/_sandbox/state`)).json()).webhooks
  assert.equal(webhooksBefore.length, 1)

  await stop()
  const secondSandbox = await start()

  // The sign-in's token is still known upstream: the connection works and sees what it made.
  const again = await api('POST', '/v1/steps/taskboard.get_card/run', {
    connectionId,
    input: { idCard: made.body.output.id },
  })
  assert.equal(again.status, 200, JSON.stringify(again.body))
  assert.equal(again.body.output.name, 'Made before the restart')
  assert.equal((await api('GET', `/v1/connections/${connectionId}`)).body.status, 'active')
  // The trigger's webhook is still registered upstream, with its id and callback.
  const webhooksAfter = (await (await fetch(`${secondSandbox}/_sandbox/state`)).json()).webhooks
  assert.deepEqual(
    webhooksAfter.map((w: any) => [w.id, w.callbackURL, w.idModel]),
    webhooksBefore.map((w: any) => [w.id, w.callbackURL, w.idModel]),
  )
  await stop()
  assert.ok(
    existsSync(path.join(dataDir, 'sandbox', 'taskboard.state')),
    'the state is in the data directory',
  )
})
