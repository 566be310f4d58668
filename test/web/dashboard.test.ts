// The dashboard in a real browser (system Chromium through playwright-core) against a real
// Patchbay and the sandbox upstreams: sign in with a workspace key, connect accounts through the
// task-board OAuth redirect, the code-host pop-up and a contact-data API key, find "task" steps and
// run Create Card from its generated form, create an agent with a Card Moved trigger, watch the
// event of a card moved upstream appear live, and replay its delivery.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { eventually, Receiver } from '../helpers/receiver.ts'
import {
  browserUnavailableReason,
  collectPageErrors,
  ensureDashboardBuilt,
  launchBrowser,
  signIn,
} from './browser.ts'
import { type DashboardService, startDashboardService } from './service.ts'

const skip = browserUnavailableReason()

describe('dashboard (browser)', { skip: skip ?? false }, () => {
  let svc: DashboardService
  let browser: Browser
  let page: Page
  let errors: string[]
  let receiver: Receiver
  /** The card Create Card made from the dashboard. */
  let cardId = ''
  const cardName = `Dashboard card ${Math.random().toString(36).slice(2, 7)}`

  before(async () => {
    await ensureDashboardBuilt()
    svc = await startDashboardService()
    receiver = await new Receiver().start()
    browser = await launchBrowser()
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    page.setDefaultTimeout(20_000)
    errors = collectPageErrors(page)
  })

  after(async () => {
    await browser?.close()
    await receiver?.close()
    await svc?.close()
  })

  it('serves the page with its own content type and policy, and refuses a wrong key', async () => {
    const res = await fetch(`${svc.url}/`)
    assert.equal(res.status, 200)
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/)
    assert.match(res.headers.get('content-security-policy') ?? '', /script-src 'self'/)
    const html = await res.text()
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1]
    assert.ok(script, 'the page loads a built script')
    const js = await fetch(`${svc.url}${script}`)
    assert.match(js.headers.get('content-type') ?? '', /^text\/javascript/)
    assert.match(js.headers.get('cache-control') ?? '', /immutable/)
    const outside = await fetch(`${svc.url}/assets/..%2f..%2fpackage.json`)
    assert.equal(outside.status, 404)

    await page.goto(svc.url)
    await page.getByLabel('Workspace key').fill('pb_admin_not_a_key')
    await page.getByRole('button', { name: 'Sign in with the key' }).click()
    await page.getByRole('alert').filter({ hasText: 'UNAUTHORIZED' }).waitFor()
    await signIn(page, svc.url, svc.adminKey)
    assert.equal(await page.evaluate(() => sessionStorage.getItem('patchbay.key')), svc.adminKey)
  })

  it('connects a task-board account through the OAuth redirect', async () => {
    const card = page.getByRole('article', { name: 'Task-Board' })
    await card.getByRole('button', { name: /^Connect with OAuth/ }).click()
    await card.getByRole('button', { name: 'Sign in to Task-Board' }).click()
    // The task-board's own login-and-approve page.
    await page.getByLabel('Username').fill('demo')
    await page.getByLabel('Password').fill('demo')
    await page.getByRole('button', { name: 'Allow' }).click()
    // Back on the dashboard, with the connection under the account's name.
    await page.getByRole('status').filter({ hasText: 'Connected demo (Task-Board)' }).waitFor()
    const list = page.getByRole('list', { name: 'Task-Board connections' })
    await list.getByRole('listitem').filter({ hasText: 'demo' }).getByText('active').waitFor()
    assert.ok(!page.url().includes('connectionId='), 'the address is cleaned up after the sign-in')
    const { body } = await svc.api('GET', '/v1/connections?connector=taskboard')
    assert.equal(body.connections.length, 1)
    assert.equal(body.connections[0].accountName, 'demo')
    assert.equal(body.connections[0].authMethod, 'oauth1')
  })

  it('connects a code-host account through the pop-up', async () => {
    const card = page.getByRole('article', { name: 'Code-Host' })
    await card.getByRole('button', { name: /^Sign in with Code-Host/ }).click()
    const [popup] = await Promise.all([
      page.waitForEvent('popup'),
      card.getByRole('button', { name: 'Sign in to Code-Host in a pop-up' }).click(),
    ])
    await popup.getByLabel('Username or email address').fill(svc.codehost.demo.login)
    await popup.getByLabel('Password').fill(svc.codehost.demo.password)
    // The callback page closes the pop-up at once: listen before authorizing, or a quick close is
    // missed (as it was under load, failing the test with the pop-up long closed).
    const closed = popup.waitForEvent('close', { timeout: 60_000 }).catch(async (err) => {
      if (popup.isClosed()) return
      const text = (
        await popup
          .locator('body')
          .innerText()
          .catch(() => '')
      ).slice(0, 500)
      throw new Error(`the sign-in pop-up did not close (${popup.url()}: ${text})`, { cause: err })
    })
    await popup.getByRole('button', { name: /^Authorize/ }).click()
    await closed
    await page
      .getByRole('status')
      .filter({ hasText: `Connected ${svc.codehost.demo.login} (Code-Host)` })
      .waitFor()
    await page
      .getByRole('list', { name: 'Code-Host connections' })
      .getByRole('listitem')
      .filter({ hasText: svc.codehost.demo.login })
      .getByText('active')
      .waitFor()
  })

  it('connects a contact-data account (beta) with its API key', async () => {
    const card = page.getByRole('article', { name: /Contact-Data/ })
    await card.getByText('beta', { exact: true }).waitFor()
    await card.getByRole('button', { name: 'Connect with API key' }).click()
    await card.getByLabel(/^API key/).fill(svc.contactdata.demo.apiKey)
    await card.getByRole('button', { name: 'Connect', exact: true }).click()
    const list = page.getByRole('list', { name: 'Contact-Data connections' })
    await list.getByText(svc.contactdata.demo.accountName, { exact: true }).waitFor()
    // Connecting the same account again reconnects it: still one connection.
    await card.getByRole('button', { name: 'Connect with API key' }).click()
    await card.getByLabel(/^API key/).fill(svc.contactdata.demo.apiKey)
    await card.getByRole('button', { name: 'Connect', exact: true }).click()
    await page
      .getByRole('status')
      .filter({ hasText: `Reconnected ${svc.contactdata.demo.accountName}` })
      .waitFor()
    assert.equal(await list.getByRole('listitem').count(), 1)
    assert.equal((await svc.api('GET', '/v1/connections?connector=contactdata')).body.connections.length, 1)
  })

  it('finds the task-board steps by "task" and runs Create Card from its generated form', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Tool steps' }).click()
    await page.getByRole('searchbox', { name: 'Search tool steps' }).fill('task')
    const results = page.getByRole('list', { name: 'Tool steps found' })
    // Only the task-board's steps remain, the API Call step among them. (Waiting for the others to
    // go is not enough: before the first answer the list is empty, and then shows every step.)
    await page.waitForFunction(() => {
      const items = [...document.querySelectorAll('#step-results > li')]
      return items.length >= 12 && items.every((li) => li.textContent?.includes('Task-Board'))
    })
    const names = await results.getByRole('listitem').allInnerTexts()
    assert.ok(names.length >= 12 && names.every((n) => n.includes('Task-Board')), names.join(' | '))
    assert.ok(names.some((n) => n.includes('Task-Board API Call')))
    await results.getByRole('link', { name: /Create Card/ }).click()
    await page.getByRole('heading', { level: 1, name: 'Create Card' }).waitFor()

    const form = page.getByRole('form', { name: 'Run Create Card' })
    // Labels are human words, with the field's name as a hint.
    await form.getByText('idList', { exact: true }).waitFor()
    // A wrong value is shown next to its field as it is typed, before anything is sent.
    const list = form.getByRole('combobox', { name: /^List/ })
    await list.fill('not-a-list')
    await form.getByText('Expected identifier of the list (24 hex characters).').waitFor()
    assert.equal(await list.getAttribute('aria-invalid'), 'true')
    // Submitting with a required field left empty shows its error too, and sends nothing.
    await list.fill('')
    await form.getByRole('button', { name: 'Run Create Card' }).click()
    await form.locator('.field-error', { hasText: 'Required.' }).first().waitFor()
    assert.equal((await svc.api('GET', '/v1/runs')).body.runs.length, 0, 'nothing was run')

    // The board, then its list, picked from dropdowns without typing an id.
    await form.getByRole('combobox', { name: /^Board/ }).click()
    await form.getByRole('option', { name: /Demo Board/ }).click()
    await list.click()
    await form.getByRole('option', { name: /To Do/ }).click()
    assert.equal(await list.inputValue(), svc.taskboard.demo.listIds[0])
    await form.getByRole('textbox', { name: /^Name/ }).fill(cardName)
    await form.getByRole('button', { name: 'Run Create Card' }).click()
    const output = page.getByRole('region', { name: 'Step output' })
    await output.getByText(cardName).waitFor()
    const created = JSON.parse(await output.locator('pre').innerText())
    assert.equal(created.name, cardName)
    assert.equal(created.idList, svc.taskboard.demo.listIds[0])
    cardId = created.id
    const upstream = await svc.taskboardApi('GET', `/1/cards/${cardId}`)
    assert.equal(upstream.name, cardName)
  })

  it('creates an agent with a Card Moved trigger, shows the event of a move live, and replays its delivery', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Agents' }).click()
    await page.getByRole('button', { name: 'New agent' }).click()
    const form = page.getByRole('form', { name: 'New agent' })
    await form.getByLabel('Name').fill('Card mover')
    await form.getByRole('checkbox', { name: 'demo (Task-Board)' }).check()
    // The scope is picked from the connection's own boards.
    await form.getByRole('checkbox', { name: /Demo Board/ }).check()
    await form.getByRole('radio', { name: /Webhook \(each event/ }).check()
    await form.getByLabel('Webhook URL').fill(receiver.url)
    await form.getByRole('button', { name: 'Create agent' }).click()
    const secret = page.locator('.shown-once code')
    await secret.waitFor()
    receiver.secret = (await secret.innerText()).trim()
    assert.match(receiver.secret, /^whsec_/)
    await page.getByRole('link', { name: 'Open Card mover' }).click()
    await page.getByRole('heading', { level: 1, name: 'Card mover' }).waitFor()

    // The trigger, configured from its config schema.
    await page.getByRole('button', { name: 'New trigger' }).click()
    const tform = page.getByRole('form', { name: 'Add a trigger' })
    await tform.getByLabel('Trigger', { exact: true }).selectOption({ label: 'Card Moved (Instant)' })
    await tform.getByLabel('idBoard').fill(svc.taskboard.demo.boardId)
    await tform.getByRole('button', { name: 'Add trigger' }).click()
    const trigger = page.locator('li.trigger').filter({ hasText: 'Card Moved' })
    await trigger.getByText('Upstream webhook').waitFor()
    await trigger.getByRole('button', { name: 'Diagnose' }).click()
    await trigger
      .getByRole('region', { name: 'Diagnosis' })
      .getByText('Nothing stops this trigger from firing.')
      .waitFor()

    // The events page polls; a card moved upstream shows up without a reload.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Events' }).click()
    await page.getByRole('heading', { level: 1, name: 'Events' }).waitFor()
    await page.getByText(/No events yet/).waitFor()
    await svc.taskboardApi('PUT', `/1/cards/${cardId}`, { idList: svc.taskboard.demo.listIds[1] })
    const row = page.getByRole('row').filter({ hasText: cardName })
    await row.waitFor()
    assert.match(await row.innerText(), /updateCard/)

    // Its detail: the payload, the delivery to the agent, its attempts, and a replay.
    await row.getByRole('link').click()
    await page.getByRole('region', { name: 'Event payload' }).getByText(cardName).first().waitFor()
    const delivery = page.locator('li.delivery').filter({ hasText: 'Card mover' })
    await delivery.getByText('delivered').waitFor()
    await delivery.getByRole('link', { name: 'Attempts' }).click()
    await page.getByRole('heading', { level: 1, name: 'Delivery to Card mover' }).waitFor()
    const attempts = page.getByRole('table', { name: 'Delivery attempts' }).locator('tbody tr')
    await attempts.first().waitFor()
    assert.equal(await attempts.count(), 1)
    await page.getByRole('button', { name: 'Replay delivery' }).click()
    await attempts.nth(1).waitFor()
    await receiver.until((r) => r.length >= 2)
    const [first, second] = receiver.received
    assert.equal(first.id, second.id, 'a replay keeps the delivery id')
    assert.ok(first.verified && second.verified, 'both deliveries are signed with the agent secret')
    assert.equal(first.body.data.trigger, 'taskboard.card_moved')

    // The deliveries view lists it across events, filtered by status.
    await page.getByRole('link', { name: 'Events', exact: true }).first().click()
    await page
      .getByRole('navigation', { name: 'Events and deliveries' })
      .getByRole('link', { name: 'Deliveries' })
      .click()
    await page.getByLabel('Status').selectOption('delivered')
    await page
      .getByRole('table', { name: 'Deliveries, newest first' })
      .getByRole('row')
      .filter({ hasText: 'Card mover' })
      .waitFor()
    await page.getByLabel('Status').selectOption('dead')
    await page.getByText('No deliveries for these filters.').waitFor()
    assert.deepEqual(errors, [])
  })
  it('builds a tool in the chain editor from templates and runs it as the agent', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Agents' }).click()
    await page.getByRole('link', { name: 'Card mover' }).click()
    await page.getByRole('button', { name: 'New tool' }).click()
    const editor = page.getByRole('form', { name: 'New tool' })
    await editor.getByLabel('Tool name').fill('Card with a comment')
    await editor.getByRole('button', { name: 'Add step' }).click()
    const step1 = editor.getByRole('group', { name: 'Step 1' })
    await step1.getByLabel('Tool step').selectOption({ label: 'Create Card' })
    // The step's list is picked from a dropdown after its board, as on the step's own form; the
    // choice is written into the step's input.
    const input1 = step1.getByLabel('Input (JSON with templates)')
    const picks = step1.getByRole('group', { name: 'Choose from Task-Board' })
    await picks.getByRole('combobox', { name: /^Board/ }).click()
    await picks.getByRole('option', { name: /Demo Board/ }).click()
    await picks.getByRole('combobox', { name: /^List/ }).click()
    await picks.getByRole('option', { name: /Done/ }).click()
    const picked = JSON.parse(await input1.inputValue())
    assert.equal(picked.idBoard, svc.taskboard.demo.boardId)
    assert.equal(picked.idList, svc.taskboard.demo.listIds[2])
    await input1.fill(JSON.stringify({ ...picked, name: '{{input.title}}' }))
    await editor.getByRole('button', { name: 'Add step' }).click()
    const step2 = editor.getByRole('group', { name: 'Step 2' })
    await step2.getByLabel('Tool step').selectOption({ label: 'Add Comment to Card' })
    const input2 = step2.getByLabel('Input (JSON with templates)')
    await input2.fill('{"idCard": "", "text": "Made by a tool"}')
    // The insert buttons put a template where the cursor is.
    await input2.evaluate((el: HTMLTextAreaElement) => el.setSelectionRange(12, 12))
    await step2.getByRole('button', { name: '{{steps.0.output.}}' }).click()
    await input2.press('i')
    await input2.press('d')
    assert.equal(await input2.inputValue(), '{"idCard": "{{steps.0.output.id}}", "text": "Made by a tool"}')
    // The card's dropdown shows the template, and takes one typed in (free entry is kept).
    const card = step2
      .getByRole('group', { name: 'Choose from Task-Board' })
      .getByRole('combobox', { name: /^Card/ })
    assert.equal(await card.inputValue(), '{{steps.0.output.id}}')
    // A path Create Card's output does not have is refused at save, naming the step and path.
    await card.fill('{{steps.0.output.nope}}')
    assert.equal(JSON.parse(await input2.inputValue()).idCard, '{{steps.0.output.nope}}')
    await editor.getByRole('button', { name: 'Save tool' }).click()
    await editor
      .getByRole('alert')
      .filter({ hasText: 'INVALID_TEMPLATE' })
      .filter({ hasText: 'steps.1.input.idCard: {{steps.0.output.nope}} is not in the output of step 0' })
      .waitFor()
    await input2.fill('{"idCard": "{{steps.0.output.id}}", "text": "Made by a tool"}')
    await editor.getByRole('button', { name: 'Save tool' }).click()
    await page.getByRole('status').filter({ hasText: 'Tool Card with a comment saved.' }).waitFor()

    const tool = page.locator('li.tool').filter({ hasText: 'Card with a comment' })
    await tool.getByLabel(/^Tool input/).fill('{"title": "Made by a tool run"}')
    await tool.getByRole('button', { name: 'Run Card with a comment' }).click()
    const run = tool.getByRole('region', { name: 'Tool run' })
    await run.getByText('succeeded').first().waitFor()
    const cards = await svc.taskboardApi('GET', `/1/lists/${svc.taskboard.demo.listIds[2]}/cards`)
    const made = cards.find((c: any) => c.name === 'Made by a tool run')
    assert.ok(made, 'the tool created the card')
    const comments = await svc.taskboardApi('GET', `/1/cards/${made.id}/actions?filter=commentCard`)
    assert.equal(comments[0]?.data?.text, 'Made by a tool')
  })

  it('creates an agent key that is shown once (and not taken for signing in), and revokes it', async () => {
    const keys = page.getByRole('region', { name: 'Keys' })
    await keys.getByLabel('Key name').fill('laptop')
    await keys.getByRole('button', { name: 'Create key' }).click()
    const shown = keys.locator('.shown-once code')
    const key = (await shown.innerText()).trim()
    assert.match(key, /^pb_/)
    const me = await fetch(`${svc.url}/v1/connections`, { headers: { authorization: `Bearer ${key}` } })
    assert.equal(me.status, 200)
    // An agent key acts as its agent only; the dashboard asks for a workspace key.
    const other = await browser.newPage()
    try {
      await other.goto(svc.url)
      await other.getByLabel('Workspace key').fill(key)
      await other.getByRole('button', { name: 'Sign in with the key' }).click()
      await other.getByRole('alert').filter({ hasText: 'This is an agent key' }).waitFor()
    } finally {
      await other.close()
    }
    await keys.getByRole('button', { name: /^Revoke key/ }).click()
    await keys.getByText('revoked').waitFor()
    const after = await fetch(`${svc.url}/v1/connections`, { headers: { authorization: `Bearer ${key}` } })
    assert.equal(after.status, 401)
  })

  it('chooses the tools the agent lists in its settings, and MCP lists only those', async () => {
    const settings = () => page.getByRole('form', { name: 'Agent settings' })
    const cardMover = async () =>
      (await svc.api('GET', '/v1/agents')).body.agents.find((a: any) => a.name === 'Card mover')
    await settings().getByRole('radio', { name: 'Only the steps chosen here' }).check()
    await settings().getByRole('checkbox', { name: 'Create Card', exact: true }).check()
    await settings().getByRole('checkbox', { name: 'Get Card', exact: true }).check()
    await settings().getByRole('button', { name: 'Save settings' }).click()
    // Saved: the settings reload with the selection.
    const agent = await eventually(cardMover, (a: any) => a.toolSelection !== null, 10_000)
    assert.deepEqual(agent.toolSelection, {
      steps: ['taskboard.create_card', 'taskboard.get_card'],
      discovery: false,
    })
    const listed = await svc.api('GET', `/v1/agents/${agent.id}/tools.json?format=mcp`)
    // The two steps, and the agent's own tool (its tools stay listed unless a selection names them).
    assert.deepEqual(listed.body.map((x: any) => x.name).sort(), [
      'taskboard_create_card',
      'taskboard_get_card',
      'tool_card_with_a_comment',
    ])
    await settings().getByRole('checkbox', { name: 'Get Card', exact: true }).waitFor()
    // Back to the default: every step again.
    await settings()
      .getByRole('radio', { name: /Every step of its connections/ })
      .check()
    await settings().getByRole('button', { name: 'Save settings' }).click()
    await eventually(cardMover, (a: any) => a.toolSelection === null, 10_000)
  })

  it('connects with an API key and a token from the token request page, reconnects it when lapsed, and disconnects it', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Connections' }).click()
    const card = page.getByRole('article', { name: 'Task-Board' })
    await card.getByRole('button', { name: 'Connect with API key plus token' }).click()
    const form = card.getByRole('form', { name: 'Task-Board API key plus token' })
    await form.locator('input[name="key"]').fill(svc.taskboard.demo.key)
    await form.getByText('No token yet? Build the token request address').click()
    await form.getByRole('button', { name: 'Build the token request address' }).click()
    const link = form.getByRole('link', { name: 'Open the token request page' })
    const href = (await link.getAttribute('href')) ?? ''
    assert.ok(href.startsWith(`${svc.taskboard.url}/1/authorize?`), href)
    assert.equal(new URL(href).searchParams.get('key'), svc.taskboard.demo.key)
    assert.equal(new URL(href).searchParams.get('response_type'), 'token')

    // The task-board shows the approved token; it is pasted back into the form.
    const [tokenPage] = await Promise.all([page.waitForEvent('popup'), link.click()])
    await tokenPage.getByLabel('Username').fill('demo')
    await tokenPage.getByLabel('Password').fill('demo')
    await tokenPage.getByRole('button', { name: 'Allow' }).click()
    const token = (await tokenPage.locator('#token').innerText()).trim()
    await tokenPage.close()
    await form.locator('input[name="token"]').fill(token)
    await form.locator('input[name="secret"]').fill(svc.taskboard.demo.secret)
    await form.getByRole('button', { name: 'Connect', exact: true }).click()
    await page.getByRole('status').filter({ hasText: 'Connected demo (Task-Board)' }).waitFor()
    const { body } = await svc.api('GET', '/v1/connections?connector=taskboard')
    const made = body.connections.find((c: any) => c.authMethod === 'api_key_token')
    assert.ok(made, 'the API key plus token connection was made')

    // The token is revoked upstream; the next call lapses the connection.
    await fetch(`${svc.taskboard.url}/1/tokens/${token}`, {
      method: 'DELETE',
      headers: {
        authorization: `OAuth oauth_consumer_key="${svc.taskboard.demo.key}", oauth_token="${token}"`,
      },
    })
    const lapsed = await svc.api('POST', '/v1/steps/taskboard.api_call/run', {
      connectionId: made.id,
      input: { method: 'GET', endpoint: '/1/members/me' },
    })
    assert.equal(lapsed.status, 409)
    await page.reload()
    const item = page.locator(`li[data-connection-id="${made.id}"]`)
    await item.getByText('lapsed').waitFor()
    await item.getByRole('button', { name: 'Reconnect demo' }).click()
    await item.locator('input[name="key"]').fill(svc.taskboard.demo.key)
    await item.locator('input[name="token"]').fill(svc.taskboard.demo.token)
    await item.locator('input[name="secret"]').fill(svc.taskboard.demo.secret)
    await item.getByRole('button', { name: 'Reconnect', exact: true }).click()
    await page.getByRole('status').filter({ hasText: 'Reconnected demo (Task-Board)' }).waitFor()
    await item.getByText('active').waitFor()

    await item.getByRole('button', { name: 'Disconnect demo' }).click()
    await item.getByRole('button', { name: 'Yes, disconnect' }).click()
    await item.waitFor({ state: 'detached' })
    const left = await svc.api('GET', `/v1/connections/${made.id}`)
    assert.equal(left.status, 404)
  })

  it('is usable with the keyboard and at phone width', async () => {
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true })
    try {
      phone.setDefaultTimeout(20_000)
      await phone.goto(svc.url)
      await phone.getByLabel('Workspace key').waitFor()
      // Past the person's email and password fields to the key's, with the keyboard alone.
      for (let tabs = 0; tabs < 10; tabs++) {
        await phone.keyboard.press('Tab')
        if (await phone.evaluate(() => document.activeElement?.id === 'workspace-key')) break
      }
      assert.equal(await phone.evaluate(() => document.activeElement?.id), 'workspace-key')
      await phone.keyboard.type(svc.adminKey)
      await phone.keyboard.press('Enter')
      await phone.getByRole('heading', { level: 1, name: 'Connections' }).waitFor()
      const wider = () => phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
      await phone.getByRole('article', { name: 'Task-Board' }).waitFor()
      assert.ok((await wider()) <= 1, 'the connections page fits the phone')
      // The navigation folds behind a menu button.
      const nav = phone.getByRole('navigation', { name: 'Main' })
      assert.equal(await nav.isVisible(), false)
      const menu = phone.getByRole('button', { name: 'Menu' })
      await menu.focus()
      await phone.keyboard.press('Enter')
      assert.equal(await menu.getAttribute('aria-expanded'), 'true')
      await nav.getByRole('link', { name: 'Tool steps' }).focus()
      await phone.keyboard.press('Enter')
      const search = phone.getByRole('searchbox', { name: 'Search tool steps' })
      await search.focus()
      await phone.keyboard.type('contact')
      const found = phone
        .getByRole('list', { name: 'Tool steps found' })
        .getByRole('link', { name: /Find Contact/ })
      await found.focus()
      await phone.keyboard.press('Enter')
      await phone.getByRole('heading', { level: 1, name: 'Find Contact' }).waitFor()
      assert.ok((await wider()) <= 1, 'the step form fits the phone')
    } finally {
      await phone.close()
    }
  })
})
