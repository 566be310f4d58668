// Browser tests of the dashboard: the system Chromium driven by playwright-core, against a real
// Patchbay over the three sandbox upstreams. Without Chromium the suites are skipped with a
// printed reason; under CI=true Chromium is required (.ci/run installs it).
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Browser, chromium, type Page } from 'playwright-core'

export const CHROMIUM = process.env.PATCHBAY_CHROMIUM ?? '/usr/bin/chromium'

const webDir = fileURLToPath(new URL('../../web/', import.meta.url))
const distIndex = path.join(webDir, 'dist', 'index.html')

/** null when Chromium can run the tests, else why not (under CI=true: thrown). */
export function browserUnavailableReason(): string | null {
  const reason = fs.existsSync(CHROMIUM) ? null : `Chromium is not installed at ${CHROMIUM}`
  if (reason && process.env.CI === 'true')
    throw new Error(`${reason}; under CI=true the browser tests are required (.ci/run installs chromium).`)
  if (reason) console.log(`# skipping the dashboard browser tests: ${reason} (apt-get install -y chromium)`)
  return reason
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
    ],
  })
}

function newestSource(dir: string): number {
  let newest = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'dist' || entry.name === 'node_modules') continue
    const p = path.join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestSource(p) : fs.statSync(p).mtimeMs)
  }
  return newest
}

/**
 * `npm test` builds the dashboard first (pretest); a test file run on its own builds it here
 * when web/dist is missing or older than web/'s sources.
 */
export async function ensureDashboardBuilt(): Promise<void> {
  const built = fs.existsSync(distIndex) ? fs.statSync(distIndex).mtimeMs : 0
  if (built >= newestSource(webDir)) return
  const { build } = await import('vite')
  await build({ configFile: path.join(webDir, 'vite.config.ts'), logLevel: 'warn' })
}

/** Signs in on the dashboard's sign-in screen with a workspace key. */
export async function signIn(page: Page, url: string, key: string): Promise<void> {
  await page.goto(url)
  await page.getByLabel('Workspace key').fill(key)
  await page.getByRole('button', { name: 'Sign in with the key' }).click()
  await page.getByRole('heading', { level: 1, name: 'Connections' }).waitFor()
}

/**
 * What the page throws or logs as an error (a content security policy violation, say); answers
 * with an error status are the API's to give and are not counted.
 */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`))
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource'))
      errors.push(`console: ${m.text()}`)
  })
  return errors
}
