// `npm run docs:config`: writes docs/configuration.md's configuration table from the settings schema
// (src/config.ts). `--check` only says whether docs/configuration.md is up to date (exit 1 if not).
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { configTable } from '../src/config.ts'

export const CONFIG_PAGE = fileURLToPath(new URL('../docs/configuration.md', import.meta.url))
const START = '<!-- config:start (npm run docs:config writes this table from src/config.ts) -->'
const END = '<!-- config:end -->'

/** The page with the table between its markers replaced by the schema's. */
export function withConfigTable(readme: string): string {
  const from = readme.indexOf(START)
  const to = readme.indexOf(END)
  if (from < 0 || to < from) throw new Error(`docs/configuration.md has no ${START} … ${END} markers.`)
  return `${readme.slice(0, from + START.length)}\n${configTable()}\n${readme.slice(to)}`
}

if (import.meta.main) {
  const readme = readFileSync(CONFIG_PAGE, 'utf8')
  const next = withConfigTable(readme)
  if (process.argv.includes('--check')) {
    if (next !== readme) {
      console.error('docs/configuration.md: the configuration table is out of date; run npm run docs:config.')
      process.exit(1)
    }
  } else if (next !== readme) {
    writeFileSync(CONFIG_PAGE, next)
    console.log('docs/configuration.md: configuration table written.')
  }
}
