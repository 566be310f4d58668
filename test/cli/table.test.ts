// The CLI's tables line up by the columns a terminal gives each text: a CJK character or an emoji
// takes two, so a wide account name does not push the next column out of line.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import stringWidth from 'string-width'
import { table } from '../../src/cli/output.ts'

test('columns line up by display width, wide characters included', () => {
  const out = table(
    [
      { accountName: '東京チーム', status: 'active' },
      { accountName: 'demo', status: 'lapsed' },
      { accountName: 'rocket 🚀', status: 'active' },
    ],
    ['accountName', 'status'],
  )
  const lines = out.split('\n')
  // The second column starts at the same terminal column on every line.
  const starts = lines.map((l) => stringWidth(l.slice(0, l.search(/(ACTIVE|STATUS|active|lapsed)$/i))))
  assert.equal(new Set(starts).size, 1, out)
})
