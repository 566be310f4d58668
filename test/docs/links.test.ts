// The documentation holds together: every relative link in README.md and docs/ reaches a file of
// the repository, every #anchor names a heading of its page (GitHub's anchors: lower case,
// punctuation dropped, spaces as hyphens, -1, -2 … for repeats), and every page under docs/ is
// linked from the documentation index, so none is left where nobody finds it.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'

const root = path.join(import.meta.dirname, '..', '..')

function pages(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? pages(p) : e.name.endsWith('.md') ? [p] : []
  })
}

/** The text outside fenced code blocks (links and headings inside them are examples). */
function prose(text: string): string {
  let fenced = false
  return text
    .split('\n')
    .map((line) => {
      if (line.startsWith('```')) fenced = !fenced
      return fenced || line.startsWith('```') ? '' : line
    })
    .join('\n')
}

function anchors(file: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const m of prose(fs.readFileSync(file, 'utf8')).matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = m[1]
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}_\- ]/gu, '')
      .replace(/ /g, '-')
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    out.add(n === 0 ? slug : `${slug}-${n}`)
  }
  return out
}

const docs = [path.join(root, 'README.md'), ...pages(path.join(root, 'docs'))]

test('every relative link and anchor in README.md and docs/ reaches what it names', () => {
  const broken: string[] = []
  for (const file of docs) {
    const text = prose(fs.readFileSync(file, 'utf8')).replace(/`[^`\n]*`/g, '')
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]
      if (/^[a-z][a-z+.-]*:/i.test(target)) continue
      const [where, anchor] = target.split('#')
      const to = where ? path.resolve(path.dirname(file), decodeURIComponent(where)) : file
      const from = path.relative(root, file)
      if (!fs.existsSync(to)) {
        broken.push(`${from}: ${target} (no such file)`)
        continue
      }
      if (anchor && to.endsWith('.md') && !anchors(to).has(anchor))
        broken.push(`${from}: ${target} (no heading with that anchor in ${path.relative(root, to)})`)
    }
  }
  assert.deepEqual(broken, [])
})

test('every page under docs/ is linked from the documentation index, and the README stays short', () => {
  const index = path.join(root, 'docs', 'README.md')
  const linked = new Set(
    [...fs.readFileSync(index, 'utf8').matchAll(/\]\(([^)#\s]+)/g)].map((m) =>
      path.resolve(path.dirname(index), m[1]),
    ),
  )
  const unlinked = pages(path.join(root, 'docs'))
    .filter((p) => p !== index && !linked.has(p))
    .map((p) => path.relative(root, p))
  assert.deepEqual(unlinked, [], 'add these pages to docs/README.md')
  const lines = fs.readFileSync(path.join(root, 'README.md'), 'utf8').split('\n').length
  assert.ok(
    lines < 400,
    `README.md has ${lines} lines; keep it a front page (under 400) and move detail to docs/`,
  )
})
