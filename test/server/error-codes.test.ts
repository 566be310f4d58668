// The registry of error codes is the one source of the table in docs/api.md and the OpenAPI enum.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { ERRORS_PAGE, withErrorTable } from '../../scripts/docs-errors.ts'
import { ERROR_CODE_LIST, ERROR_CODES } from '../../src/kit/error-codes.ts'
import { PatchbayError } from '../../src/kit/errors.ts'

test('the table of error codes in docs/api.md is the registry’s (npm run docs:errors rewrites it)', () => {
  const readme = readFileSync(ERRORS_PAGE, 'utf8')
  assert.equal(withErrorTable(readme), readme, 'the page is out of date: run npm run docs:errors')
  for (const code of ERROR_CODE_LIST)
    assert.match(readme, new RegExp(`\\| \`${code}\` \\| ${ERROR_CODES[code].status}`))
})

test('an error takes its status and default hint from the registry; a thrower may say more', () => {
  const plain = new PatchbayError('STEP_NOT_FOUND', 'There is no tool step "x".')
  assert.equal(plain.status, 404)
  assert.deepEqual(plain.toBody(), {
    error: {
      code: 'STEP_NOT_FOUND',
      message: 'There is no tool step "x".',
      hint: ERROR_CODES.STEP_NOT_FOUND.hint,
    },
  })
  const named = new PatchbayError('STEP_NOT_FOUND', 'steps.0.stepId: no such step.', {
    status: 400,
    hint: 'Look.',
  })
  assert.equal(named.status, 400)
  assert.equal(named.toBody().error.hint, 'Look.')
})

test('every code has a status, a meaning and a hint that say something', () => {
  for (const code of ERROR_CODE_LIST) {
    const d = ERROR_CODES[code]
    assert.match(code, /^[A-Z][A-Z0-9_]+$/)
    assert.ok(d.status >= 400 && d.status < 600, code)
    assert.ok(d.meaning.length > 10 && d.hint.length > 10, code)
  }
})
