// Issue 22's walk in a real browser: a person signs up, creates a workspace, invites a second
// person, who gets the link by mail (a real SMTP server), makes their account through it and signs
// in; both are signed in in their own browser contexts, and the audit log page shows each step.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { type Mailbox, startMailbox } from '../helpers/mailbox.ts'
import {
  browserUnavailableReason,
  collectPageErrors,
  ensureDashboardBuilt,
  launchBrowser,
} from './browser.ts'
import { type DashboardService, startDashboardService } from './service.ts'

const unavailable = browserUnavailableReason()
if (unavailable) console.log(`# skipping the people browser suite: ${unavailable}`)

describe('people and workspaces in the dashboard', { skip: unavailable ?? false }, () => {
  let svc: DashboardService
  let mailbox: Mailbox
  let browser: Browser
  const contexts: BrowserContext[] = []
  const errors: string[] = []

  before(async () => {
    await ensureDashboardBuilt()
    mailbox = await startMailbox()
    svc = await startDashboardService({
      PATCHBAY_SIGNUP: 'open',
      PATCHBAY_SMTP_URL: mailbox.url,
      PATCHBAY_MAIL_FROM: 'patchbay@example.test',
    })
    browser = await launchBrowser()
  })
  after(async () => {
    for (const c of contexts) await c.close()
    await browser?.close()
    await svc?.close()
    await mailbox?.close()
  })

  async function newPage(): Promise<Page> {
    const context = await browser.newContext()
    contexts.push(context)
    const page = await context.newPage()
    errors.push(...collectPageErrors(page))
    return page
  }

  it('signs up, makes a workspace, invites by mail; the invited person joins; the audit log shows it', async () => {
    const ada = await newPage()
    await ada.goto(svc.url)
    await ada.getByRole('button', { name: 'No account yet? Create one' }).click()
    await ada.getByLabel('Name').fill('Ada')
    await ada.getByLabel('Email').fill('ada@example.test')
    await ada.getByLabel('Password').fill('a long enough password')
    await ada.getByRole('button', { name: 'Create account' }).click()
    // In no workspace yet: she makes one, and owns it.
    await ada.getByLabel('Workspace name').fill('Acme')
    await ada.getByRole('button', { name: 'Create workspace' }).click()
    await ada.getByRole('heading', { level: 1, name: 'Connections' }).waitFor()
    assert.equal(await ada.evaluate(() => sessionStorage.getItem('patchbay.key')), null, 'no key: a session')
    assert.match(
      await ada.getByLabel('Workspace', { exact: true }).locator('option:checked').innerText(),
      /Acme \(owner\)/,
    )
    await ada.goto(`${svc.url}/#/workspace/members`)
    await ada.getByRole('heading', { level: 1, name: 'Workspace: Acme' }).waitFor()

    // Invite Grace; the mail carries the link.
    await ada.getByLabel('Email').fill('grace@example.test')
    await ada.getByLabel('Role', { exact: true }).selectOption('member')
    await ada.getByRole('button', { name: 'Invite' }).click()
    await ada.getByText('The invitation was mailed to grace@example.test.').waitFor()
    const mail = await mailbox.mailTo('grace@example.test')
    const link = /https?:\/\/\S+#\/invitations\/[A-Za-z0-9_-]+/.exec(mail.raw.replace(/=\r?\n/g, ''))?.[0]
    assert.ok(link, `an invitation link in the mail:\n${mail.raw}`)

    // Grace follows the mailed link in her own browser and makes her account through it.
    const grace = await newPage()
    await grace.goto(svc.url + link.slice(link.indexOf('/#/')))
    await grace.getByRole('heading', { name: 'An invitation to a workspace' }).waitFor()
    await grace.getByLabel('Name').fill('Grace')
    await grace.getByLabel('Email').fill('grace@example.test')
    await grace.getByLabel('Password').fill('another long password')
    await grace.getByRole('button', { name: 'Create account and join' }).click()
    await grace.getByText('Your account was made and joined the workspace.').waitFor()
    await grace.getByRole('link', { name: 'Open the dashboard' }).click()
    await grace.getByRole('heading', { level: 1, name: 'Connections' }).waitFor()
    assert.match(await grace.getByLabel('Workspace', { exact: true }).inputValue(), /^ws_/)

    // Ada sees Grace as a member, and every step in the audit log.
    await ada.reload()
    await ada.getByRole('cell', { name: 'grace@example.test', exact: true }).waitFor()
    await ada.goto(`${svc.url}/#/workspace/audit`)
    const log = ada.getByRole('table')
    await log.waitFor()
    const text = await log.innerText()
    for (const action of ['invitation.created', 'invitation.accepted'])
      assert.match(text, new RegExp(action.replace('.', '\\.')), `${action} in the audit log:\n${text}`)
    assert.deepEqual(errors, [])
  })

  it('the owner-setup link: a signed-in person owns the ownerless workspace with it; the next is refused in words', async () => {
    const link = svc.service.ownerSetupUrl
    assert.ok(link, 'the test service has a workspace no person owns')
    const claimPath = link.slice(link.indexOf('/#claim-owner='))

    // Bea signs up and makes her own workspace, then opens the link signed in.
    const bea = await newPage()
    await bea.goto(svc.url)
    await bea.getByRole('button', { name: 'No account yet? Create one' }).click()
    await bea.getByLabel('Name').fill('Bea')
    await bea.getByLabel('Email').fill('bea@example.test')
    await bea.getByLabel('Password').fill('a long enough password')
    await bea.getByRole('button', { name: 'Create account' }).click()
    await bea.getByLabel('Workspace name').fill('Bea Co')
    await bea.getByRole('button', { name: 'Create workspace' }).click()
    await bea.getByRole('heading', { level: 1, name: 'Connections' }).waitFor()
    await bea.goto(svc.url + claimPath)
    await bea.getByText('Signed in as bea@example.test.').waitFor()
    await bea.getByRole('button', { name: 'Own the workspace' }).click()
    await bea.getByRole('heading', { level: 1, name: 'Connections' }).waitFor()
    const options = await bea.getByLabel('Workspace', { exact: true }).locator('option').allInnerTexts()
    assert.ok(
      options.some((o) => /Default \(owner\)/.test(o)),
      `Bea owns the workspace now: ${options}`,
    )
    assert.match(
      await bea.getByLabel('Workspace', { exact: true }).locator('option:checked').innerText(),
      /Default \(owner\)/,
      'and the dashboard shows it',
    )

    // The link worked once: the next person is told so, and no account is made.
    const cy = await newPage()
    await cy.goto(svc.url + claimPath)
    await cy.getByLabel('Name').fill('Cy')
    await cy.getByLabel('Email').fill('cy@example.test')
    await cy.getByLabel('Password').fill('a long enough password')
    await cy.getByRole('button', { name: 'Create account and own the workspace' }).click()
    await cy.getByRole('alert').filter({ hasText: 'Not claimed' }).waitFor()
    const signIn = await fetch(`${svc.url}/v1/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'cy@example.test', password: 'a long enough password' }),
    })
    assert.equal(signIn.status, 401, 'the refused claim made no account')
    assert.deepEqual(errors, [])
  })

  it('a forgotten password is reset through the mailed link; the new one is changed again on the sessions page', async () => {
    const dee = await newPage()
    await dee.goto(svc.url)
    await dee.getByRole('button', { name: 'No account yet? Create one' }).click()
    await dee.getByLabel('Name').fill('Dee')
    await dee.getByLabel('Email').fill('dee@example.test')
    await dee.getByLabel('Password').fill('the first long password')
    await dee.getByRole('button', { name: 'Create account' }).click()
    await dee.getByLabel('Workspace name').waitFor()

    // In another browser she has forgotten it.
    const other = await newPage()
    await other.goto(svc.url)
    await other.getByRole('button', { name: 'Forgot your password?' }).click()
    await other.getByLabel('Email').fill('dee@example.test')
    await other.getByRole('button', { name: 'Mail me a link' }).click()
    await other.getByText('If an account has this email').waitFor()
    const mail = await mailbox.mailTo('dee@example.test')
    const link = /https?:\/\/\S+#\/reset-password\/\S+/.exec(mail.raw.replace(/=\r?\n/g, ''))?.[0]
    assert.ok(link, `a reset link in the mail:\n${mail.raw}`)
    await other.goto(svc.url + link.slice(link.indexOf('/#/')))
    await other.getByLabel('New password', { exact: true }).fill('the second long password')
    await other.getByRole('button', { name: 'Set the new password' }).click()
    await other.getByLabel('Workspace name').waitFor()

    // The first browser's session ended with the reset.
    await dee.reload()
    await dee.getByRole('button', { name: 'No account yet? Create one' }).waitFor()

    // Signed in with the new one, she changes it on the sessions page.
    await other.getByLabel('Workspace name').fill('Dee Co')
    await other.getByRole('button', { name: 'Create workspace' }).click()
    await other.getByRole('heading', { level: 1, name: 'Connections' }).waitFor()
    await other.goto(`${svc.url}/#/workspace/sessions`)
    await other.getByLabel(/^Current password/).fill('the second long password')
    await other.getByLabel(/^New password/).fill('the third long password')
    await other.getByRole('button', { name: 'Change password' }).click()
    await other.getByText('Your password was changed; 0 other sessions ended.').waitFor()
    const signIn = await fetch(`${svc.url}/v1/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'dee@example.test', password: 'the third long password' }),
    })
    assert.equal(signIn.status, 200)
    assert.deepEqual(errors, [])
  })
})
