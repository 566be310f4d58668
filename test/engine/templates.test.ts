// Tool templates: parsed and checked at save, rendered at run time keeping whole values' types.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  checkStepTemplates,
  parseTemplate,
  renderTemplates,
  TemplateError,
  TemplateValueMissing,
} from '../../src/engine/tools/templates.ts'

const ctx = {
  input: { name: 'Ada', count: 3, tags: ['a', 'b'], nothing: null },
  event: { data: { card: { id: 'c1', name: 'Card' } } },
  steps: [{ name: 'made', output: { id: 'x9', list: { id: 'l1' } } }, { output: { ok: true } }],
}

test('a string that is exactly one template keeps the value’s type', () => {
  assert.equal(renderTemplates('{{input.count}}', ctx, 'f'), 3)
  assert.deepEqual(renderTemplates('{{input.tags}}', ctx, 'f'), ['a', 'b'])
  assert.deepEqual(renderTemplates('{{ steps.made.output.list }}', ctx, 'f'), { id: 'l1' })
  assert.equal(renderTemplates('{{steps.1.output.ok}}', ctx, 'f'), true)
})

test('templates inside text are written into it; objects as JSON, null as nothing', () => {
  assert.equal(renderTemplates('Hi {{input.name}} ({{input.count}})', ctx, 'f'), 'Hi Ada (3)')
  assert.equal(renderTemplates('tags={{input.tags}}', ctx, 'f'), 'tags=["a","b"]')
  assert.equal(renderTemplates('[{{input.nothing}}]', ctx, 'f'), '[]')
  assert.equal(renderTemplates('card {{event.data.card.name}}', ctx, 'f'), 'card Card')
})

test('objects and arrays are rendered deeply; a whole reference to nothing leaves the field out', () => {
  assert.deepEqual(
    renderTemplates(
      { a: ['{{input.name}}', 1], b: { c: '{{steps.0.output.id}}' }, d: '{{input.missing}}' },
      ctx,
      'f',
    ),
    { a: ['Ada', 1], b: { c: 'x9' } },
  )
})

test('a missing value inside text is an error naming the field and the template', () => {
  assert.throws(
    () => renderTemplates({ title: 'About {{input.missing}}' }, ctx, 'input'),
    (err: unknown) =>
      err instanceof TemplateValueMissing &&
      err.field === 'input.title' &&
      err.expression === 'input.missing',
  )
})

test('text without templates is left alone', () => {
  assert.equal(renderTemplates('plain { text }', ctx, 'f'), 'plain { text }')
  assert.deepEqual(parseTemplate('plain', 'f'), ['plain'])
})

test('bad syntax is refused with where and what', () => {
  const refused = (text: string, pattern: RegExp) =>
    assert.throws(
      () => parseTemplate(text, 'steps.0.input.name'),
      (err: unknown) =>
        err instanceof TemplateError && err.field === 'steps.0.input.name' && pattern.test(err.message),
    )
  refused('{{input.name', /never closes/)
  refused('{{ {{input.name}} }}', /inside another/)
  refused('{{}}', /empty/)
  refused('{{input..name}}', /bad part/)
  refused('{{secrets.key}}', /starts with "secrets"/)
})

test('step references are checked at save: an earlier step, by index or name, and its output', () => {
  const check = (input: unknown, index: number, earlier: Array<string | undefined>) =>
    checkStepTemplates(input, `steps.${index}.input`, index, earlier)
  check({ id: '{{steps.0.output.id}}', other: '{{steps.made.output.id}}' }, 1, ['made'])
  assert.throws(() => check({ id: '{{steps.1.output.id}}' }, 1, ['made']), /is this step/)
  assert.throws(() => check({ id: '{{steps.2.output.id}}' }, 1, ['made']), /runs later/)
  assert.throws(
    () => check({ id: '{{steps.other.output.id}}' }, 1, ['made']),
    /names no earlier step "other"/,
  )
  assert.throws(() => check({ id: '{{steps.0.input.id}}' }, 1, ['made']), /must read the step's output/)
  assert.throws(() => check({ id: '{{steps}}' }, 1, ['made']), /must name a step/)
})
