// The words people read: every error code's meaning and hint, and every description in the
// catalog (connectors, auth methods, steps, triggers and each of their fields), are sentences —
// a capital (or a code) first, one closing mark, no doubled punctuation or spaces — and no spec
// placeholder ({auth_url}) reaches them.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Registry } from '../../src/engine/registry.ts'
import { ERROR_CODES } from '../../src/kit/error-codes.ts'

/** What is wrong with one text, or null. */
function problem(text: string): string | null {
  if (text !== text.trim()) return 'leading or trailing space'
  if (/\s{2,}/.test(text)) return 'doubled space'
  // A doubled mark ends a sentence twice ("…hint.."), not a ".." quoted as a path part.
  if (/[^.]\.\.(\s|$)|,,|;;|[^:]::[^:]/.test(text)) return 'doubled punctuation'
  if (/\s[.,;:](\s|$)/.test(text)) return 'space before punctuation'
  if (/\{(auth_url|taskboard_admin_url|taskboard_api_url|codehost_api_url|contactdata_api_url)\}/.test(text))
    return 'spec placeholder'
  if (!/[.!?)…]$|[.!?]["”’)]$/.test(text)) return 'no closing punctuation'
  // A sentence starts with a capital, or with a value it is about: "open or closed.",
  // "true adds …", "owner/repo the issue belongs to.", "bearer: the token …".
  const value = /^(true|false|null)\b|^[a-z_]+\/[a-z_]+|^[a-z_]+(?=:|,| or | \()/
  if (!/^[A-Z0-9"“'‘({[`/<.]/.test(text) && !value.test(text)) return 'does not start a sentence'
  return null
}

function check(where: string, text: unknown, out: string[]) {
  if (typeof text !== 'string' || text === '') return
  const p = problem(text)
  if (p) out.push(`${where}: ${p}: ${JSON.stringify(text)}`)
}

test('every error code’s meaning and hints (REST, dashboard, CLI) are sentences', () => {
  const bad: string[] = []
  for (const [code, def] of Object.entries(ERROR_CODES)) {
    check(`${code} meaning`, def.meaning, bad)
    check(`${code} hint`, def.hint, bad)
    check(`${code} dashboard`, (def as { dashboard?: string }).dashboard, bad)
    check(`${code} cli`, (def as { cli?: string }).cli, bad)
  }
  assert.deepEqual(bad, [])
})

test('every description in the catalog is a sentence, without spec placeholders', () => {
  const bad: string[] = []
  const walk = (where: string, schema: any) => {
    if (!schema || typeof schema !== 'object') return
    if (Array.isArray(schema)) {
      schema.forEach((s, i) => {
        walk(`${where}[${i}]`, s)
      })
      return
    }
    check(`${where} description`, schema.description, bad)
    for (const [k, v] of Object.entries(schema)) if (k !== 'description') walk(`${where}.${k}`, v)
  }
  for (const c of new Registry().catalog()) {
    check(`${c.id} description`, c.description, bad)
    for (const a of c.auth) {
      check(`${c.id} auth ${a.id}`, a.description, bad)
      walk(`${c.id} auth ${a.id} credentials`, a.credentialsSchema)
    }
    for (const s of c.steps) {
      check(`${s.id} description`, s.description, bad)
      walk(`${s.id} input`, s.inputSchema)
      walk(`${s.id} output`, s.outputSchema)
    }
    for (const t of c.triggers) {
      check(`${t.id} description`, t.description, bad)
      walk(`${t.id} config`, t.configSchema)
    }
  }
  assert.deepEqual(bad, [])
})
