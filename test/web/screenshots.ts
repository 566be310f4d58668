// `npm run screenshots`: pictures of the dashboard's main pages for the README, taken from a real
// Patchbay over the sandbox upstreams (the same setup as the browser tests), into
// docs/screenshots/. Accounts are connected through the dashboard's own sign-in flows.
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Page } from 'playwright-core'
import { Receiver } from '../helpers/receiver.ts'
import { browserUnavailableReason, ensureDashboardBuilt, launchBrowser, signIn } from './browser.ts'
import { startDashboardService } from './service.ts'

const outDir = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url))

if (browserUnavailableReason()) process.exit(1)
await ensureDashboardBuilt()
fs.mkdirSync(outDir, { recursive: true })
const svc = await startDashboardService()
const receiver = await new Receiver().start()
const browser = await launchBrowser()
const until = async (ok: () => Promise<boolean>) => {
  for (let i = 0; i < 200 && !(await ok()); i++) await new Promise((r) => setTimeout(r, 50))
}

try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 }, deviceScaleFactor: 1 })
  page.setDefaultTimeout(20_000)
  const shot = async (name: string, p: Page = page, fullPage = true) => {
    // Let lists that load after the heading settle.
    await p.waitForLoadState('networkidle')
    await p.screenshot({ path: `${outDir}${name}.png`, fullPage })
    console.log(`docs/screenshots/${name}.png`)
  }
  const nav = (name: string) =>
    page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name }).click()

  await page.goto(svc.url)
  await page.getByLabel('Workspace key').waitFor()
  await shot('sign-in', page, false)
  await signIn(page, svc.url, svc.adminKey)

  // Connect: the task-board through the OAuth redirect, the code-host in the pop-up, contact-data by key.
  const tb = page.getByRole('article', { name: 'Task-Board' })
  await tb.getByRole('button', { name: /^Connect with OAuth/ }).click()
  await tb.getByRole('button', { name: 'Sign in to Task-Board' }).click()
  await page.getByLabel('Username').fill('demo')
  await page.getByLabel('Password').fill('demo')
  await page.getByRole('button', { name: 'Allow' }).click()
  await page.getByRole('status').filter({ hasText: 'Connected demo' }).waitFor()
  const ch = page.getByRole('article', { name: 'Code-Host' })
  await ch.getByRole('button', { name: /^Sign in with Code-Host/ }).click()
  const [popup] = await Promise.all([
    page.waitForEvent('popup'),
    ch.getByRole('button', { name: 'Sign in to Code-Host in a pop-up' }).click(),
  ])
  await popup.getByLabel('Username or email address').fill(svc.codehost.demo.login)
  await popup.getByLabel('Password').fill(svc.codehost.demo.password)
  await popup.getByRole('button', { name: /^Authorize/ }).click()
  await page
    .getByRole('status')
    .filter({ hasText: `Connected ${svc.codehost.demo.login}` })
    .waitFor()
  const cd = page.getByRole('article', { name: /Contact-Data/ })
  await cd.getByRole('button', { name: 'Connect with API key' }).click()
  await cd.getByLabel(/^API key/).fill(svc.contactdata.demo.apiKey)
  await cd.getByRole('button', { name: 'Connect', exact: true }).click()
  await page.getByRole('status').filter({ hasText: 'Connected Patchbay Demo Workspace' }).waitFor()
  await tb.getByRole('button', { name: 'Connect with API key plus token' }).click()
  await shot('connections')

  const { body: conns } = await svc.api('GET', '/v1/connections')
  const conn = (connector: string) => conns.connections.find((c: any) => c.connector === connector).id

  // Steps: the search, then Create Card run from its form.
  await nav('Tool steps')
  await page.getByRole('searchbox', { name: 'Search tool steps' }).fill('task')
  await page.getByRole('list', { name: 'Tool steps found' }).getByRole('link').first().waitFor()
  await page
    .getByRole('list', { name: 'Tool steps found' })
    .getByText('Code-Host')
    .first()
    .waitFor({ state: 'detached' })
  await shot('steps-search')
  await page
    .getByRole('list', { name: 'Tool steps found' })
    .getByRole('link', { name: /Create Card/ })
    .click()
  const form = page.getByRole('form', { name: 'Run Create Card' })
  // The board, then its list, picked from their dropdowns.
  await form.getByRole('combobox', { name: /^Board/ }).click()
  await form.getByRole('option', { name: /Demo Board/ }).click()
  await form.getByRole('combobox', { name: /^List/ }).click()
  await form.getByRole('option', { name: /To Do/ }).waitFor()
  await shot('step-picker')
  await form.getByRole('option', { name: /To Do/ }).click()
  await form.getByRole('textbox', { name: /^Name/ }).fill('Write the release notes')
  await form.getByLabel('desc').fill('Summarize what changed since the last release.')
  await form.getByLabel(/^Position/).fill('top')
  await form.getByRole('button', { name: 'Run Create Card' }).click()
  await page.getByRole('region', { name: 'Step output' }).waitFor()
  await shot('step-run')
  const card = JSON.parse(await page.getByRole('region', { name: 'Step output' }).locator('pre').innerText())

  // Usage data: a few contact-data lookups, charged to the workspace and to an agent.
  for (const input of [
    { email: svc.contactdata.demo.samplePerson.email },
    { domain: svc.contactdata.demo.sampleCompany.domain },
  ])
    await svc.api('POST', `/v1/steps/contactdata.${'email' in input ? 'find_contact' : 'find_company'}/run`, {
      connectionId: conn('contactdata'),
      input,
    })

  // An agent with a Card Moved trigger, a tool, a key; then a move upstream and a replay.
  const { body: agent } = await svc.api('POST', '/v1/agents', {
    name: 'Release helper',
    connectionIds: [conn('taskboard'), conn('codehost'), conn('contactdata')],
    scope: { boards: [svc.taskboard.demo.boardId], repositories: ['octo-demo/hello-world'] },
    delivery: { type: 'webhook', url: receiver.url },
  })
  receiver.secret = agent.signingSecret
  await svc.api('POST', `/v1/agents/${agent.id}/keys`, { name: 'production' })
  await svc.api('POST', `/v1/agents/${agent.id}/triggers`, {
    trigger: 'taskboard.card_moved',
    connectionId: conn('taskboard'),
    config: { idBoard: svc.taskboard.demo.boardId },
  })
  await svc.api('POST', `/v1/agents/${agent.id}/tools`, {
    name: 'Card to issue',
    description: 'Opens an issue for a card and comments the issue address on the card.',
    steps: [
      {
        name: 'issue',
        stepId: 'codehost.create_issue',
        connectionId: conn('codehost'),
        input: { owner: 'octo-demo', repo: 'hello-world', title: '{{input.title}}' },
      },
      {
        stepId: 'taskboard.add_comment_to_card',
        connectionId: conn('taskboard'),
        input: { idCard: '{{input.idCard}}', text: 'Issue: {{steps.issue.output.htmlUrl}}' },
      },
    ],
  })
  await svc.api('POST', '/v1/steps/contactdata.find_contact/run', {
    connectionId: conn('contactdata'),
    input: { linkedInUrl: svc.contactdata.demo.samplePerson.linkedInUrl },
  })

  await nav('Agents')
  await page.getByRole('link', { name: 'Release helper' }).waitFor()
  await shot('agents')
  await page.getByRole('link', { name: 'Release helper' }).click()
  await page.getByRole('heading', { level: 1, name: 'Release helper' }).waitFor()
  await page.locator('li.trigger').getByRole('button', { name: 'Diagnose' }).click()
  await page.getByRole('region', { name: 'Diagnosis' }).waitFor()
  await page.getByRole('button', { name: 'Edit Card to issue' }).click()
  await shot('agent')
  // The tool editor: a step's repository picked from the account's own, as on the step's form.
  const editor = page.getByRole('form', { name: 'Edit Card to issue' })
  const repo = editor
    .getByRole('group', { name: 'Step 1' })
    .getByRole('group', { name: 'Choose from Code-Host' })
    .getByRole('combobox', { name: /^Repo/ })
  await repo.scrollIntoViewIfNeeded()
  await repo.click()
  await editor.getByRole('option', { name: /hello-world/ }).waitFor()
  await page.evaluate(() => window.scrollBy(0, 200))
  await shot('tool-picker', page, false)
  await page.getByRole('button', { name: 'Cancel' }).click()

  await nav('Events')
  await page.getByRole('heading', { level: 1, name: 'Events' }).waitFor()
  await svc.taskboardApi('PUT', `/1/cards/${card.id}`, { idList: svc.taskboard.demo.listIds[1] })
  await svc.taskboardApi('PUT', `/1/cards/${card.id}`, { idList: svc.taskboard.demo.listIds[2] })
  await page.getByRole('row').nth(2).waitFor()
  await until(async () => receiver.received.length >= 2)
  await shot('events')
  await page.getByRole('row').nth(1).getByRole('link').click()
  await page.locator('li.delivery').getByText('delivered').waitFor()
  await shot('event')
  await page.locator('li.delivery').getByRole('link', { name: 'Attempts' }).click()
  await page.getByRole('button', { name: 'Replay delivery' }).click()
  await page.getByRole('table', { name: 'Delivery attempts' }).locator('tbody tr').nth(1).waitFor()
  await shot('delivery')

  await nav('Usage')
  await page.getByText(/credits in/).waitFor()
  await page.getByRole('table', { name: 'Rate limit per connection' }).getByText(/left/).first().waitFor()
  await shot('usage')

  // A tool run's timeline (the waterfall), then the Overview's charts of all of the above.
  const { body: tools } = await svc.api('GET', `/v1/agents/${agent.id}/tools`)
  const { body: toolRun } = await svc.api('POST', `/v1/agents/${agent.id}/tools/${tools.tools[0].id}/run`, {
    input: { title: 'Release notes for 1.2', idCard: card.id },
  })
  await page.goto(`${svc.url}/#/timeline/${toolRun.id}`)
  await page.getByTestId('waterfall').waitFor()
  await shot('timeline')
  await nav('Overview')
  await page.locator('figure[data-chart="events"] canvas').first().waitFor()
  await shot('overview')

  // Phone width.
  const phone = await browser.newPage({
    viewport: { width: 390, height: 844 },
    deviceScaleFactor: 2,
    isMobile: true,
  })
  await signIn(phone, svc.url, svc.adminKey)
  await shot('phone-connections', phone, false)
  await phone.goto(`${svc.url}/#/events`)
  await phone.getByRole('row').nth(1).waitFor()
  await phone.getByRole('button', { name: 'Menu' }).click()
  await shot('phone-menu', phone, false)
} finally {
  await browser.close()
  await receiver.close()
  await svc.close()
}
