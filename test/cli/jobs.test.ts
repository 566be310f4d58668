// `patchbay jobs …` as a child process against a real Patchbay and the contact-data sandbox: an
// enrichment started from a CSV file is followed to its end with progress lines on stderr and a
// summary on stdout; the job is listed and shown (JSON for scripts); cancelling an ended job is the
// API's JOB_FINISHED with the CLI's hint; a replay with nothing dead ends at once.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { after, before, test } from 'node:test'
import { tempDir } from '../helpers/databases.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { control } from '../helpers/taskboard.ts'

const root = path.resolve(import.meta.dirname, '../..')
const MAIN = path.join(root, 'src/cli/main.ts')
const DOMAIN = 'cli-jobs.test'
const N = 250

let t: TestService
let connectionId: string

function cli(args: string[]) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NO_COLOR: '1',
      PATCHBAY_URL: t.url,
      PATCHBAY_KEY: t.adminKey,
    }
    delete env.NODE_TEST_CONTEXT
    const child = spawn(process.execPath, [MAIN, ...args], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c) => (stdout += c))
    child.stderr.on('data', (c) => (stderr += c))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

before(async () => {
  t = await startTestService({ contactdata: true })
  await control(t.contactdata!, 'POST', '/seed', {
    companies: [{ name: 'Cli Jobs', domain: DOMAIN, employeeCount: 300, industry: 'Software' }],
    people: Array.from({ length: N }, (_, n) => ({
      firstName: 'Cli',
      lastName: `Person${n}`,
      email: `c${n}@${DOMAIN}`,
      company: DOMAIN,
      jobTitle: 'Analyst',
      seniority: 'entry',
    })),
  })
  const acct = await control(t.contactdata!, 'POST', '/accounts', {
    name: 'CLI jobs',
    plan: 'enterprise',
    credits: 5000,
  })
  const conn = await t.api('POST', '/v1/connections', {
    connector: 'contactdata',
    authMethod: 'api_key',
    credentials: { apiKey: acct.apiKey },
  })
  assert.equal(conn.status, 201, JSON.stringify(conn.body))
  connectionId = conn.body.id
})
after(() => t.close())

test('jobs enrich follows the job to its end: progress lines on stderr, the summary on stdout; list and show find it', async () => {
  const file = path.join(tempDir(), 'contacts.csv')
  fs.writeFileSync(file, ['email', ...Array.from({ length: N }, (_, n) => `c${n}@${DOMAIN}`)].join('\n'))
  const ran = await cli(['jobs', 'enrich', '--connection', connectionId, '--file', file, '--progress'])
  assert.equal(ran.code, 0, ran.stderr)
  const pcts = [...ran.stderr.matchAll(/Enriching contacts: (\d+) % \((\d+) of (\d+)\)/g)].map((m) =>
    Number(m[1]),
  )
  assert.ok(pcts.length >= 1, ran.stderr)
  assert.deepEqual(
    pcts,
    [...pcts].sort((a, b) => a - b),
    'progress only goes up',
  )
  assert.equal(pcts.at(-1), 100)
  assert.match(ran.stdout, new RegExp(`enrich_contacts  succeeded  ${N} of ${N} done`))
  assert.match(ran.stdout, new RegExp(`matched ${N}, not matched 0, credits charged ${N}`))
  const id = /^(job_\S+)/.exec(ran.stdout)![1]

  const list = await cli(['jobs', 'list'])
  assert.equal(list.code, 0, list.stderr)
  assert.match(list.stdout, new RegExp(`${id}\\s+enrich_contacts\\s+succeeded\\s+${N}/${N}`))

  const shown = await cli(['jobs', 'show', id, '--json'])
  assert.equal(shown.code, 0, shown.stderr)
  const job = JSON.parse(shown.stdout)
  assert.equal(job.result.results.length, N)

  const cancel = await cli(['jobs', 'cancel', id])
  assert.equal(cancel.code, 1)
  assert.match(cancel.stderr, /JOB_FINISHED \(HTTP 409\)/)
  assert.match(cancel.stderr, /with patchbay: Read it with patchbay jobs show <id>/)
})

test('jobs replay with nothing dead ends at once; a bad file or status is a usage error (exit 2)', async () => {
  const ran = await cli(['jobs', 'replay'])
  assert.equal(ran.code, 0, ran.stderr)
  assert.match(ran.stdout, /replay_deliveries {2}succeeded {2}0 of 0 done/)
  const noFile = await cli([
    'jobs',
    'enrich',
    '--connection',
    connectionId,
    '--file',
    '/nonexistent/contacts.json',
  ])
  assert.equal(noFile.code, 2)
  assert.match(noFile.stderr, /Cannot read \/nonexistent\/contacts.json/)
  const status = await cli(['jobs', 'replay', '--status', 'lost'])
  assert.equal(status.code, 2)
})
