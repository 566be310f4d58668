// `npm run docs:errors`: writes docs/api.md's table of error codes from the registry
// (src/kit/error-codes.ts). `--check` only says whether docs/api.md is up to date (exit 1 if not).
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { errorCodeTable } from '../src/kit/error-codes.ts'

export const ERRORS_PAGE = fileURLToPath(new URL('../docs/api.md', import.meta.url))
const START = '<!-- error-codes:start (npm run docs:errors writes this table from src/kit/error-codes.ts) -->'
const END = '<!-- error-codes:end -->'

/** The page with the table between its markers replaced by the registry's. */
export function withErrorTable(readme: string): string {
  const from = readme.indexOf(START)
  const to = readme.indexOf(END)
  if (from < 0 || to < from) throw new Error(`docs/api.md has no ${START} … ${END} markers.`)
  return `${readme.slice(0, from + START.length)}\n${errorCodeTable()}\n${readme.slice(to)}`
}

if (import.meta.main) {
  const readme = readFileSync(ERRORS_PAGE, 'utf8')
  const next = withErrorTable(readme)
  if (process.argv.includes('--check')) {
    if (next !== readme) {
      console.error('docs/api.md: the table of error codes is out of date; run npm run docs:errors.')
      process.exit(1)
    }
  } else if (next !== readme) {
    writeFileSync(ERRORS_PAGE, next)
    console.log('docs/api.md: table of error codes written.')
  }
}
