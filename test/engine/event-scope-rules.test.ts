// The rules an event is held to against an agent's current scope, per the trigger's `eventScope`:
// the cases the end-to-end tests do not reach with the sandboxes (other owners, unattributed events).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { eventOutsideScope } from '../../src/engine/events/event-scope.ts'
import { Registry } from '../../src/engine/registry.ts'

// The place kinds of the connectors Patchbay ships.
const places = new Registry().places

const agent = {
  scope: { boards: ['b1'], repositories: ['Octo-Demo/hello-world'] },
  connectionIds: ['con_1'],
}
const on = (eventScope?: 'place' | 'group' | 'account') => ({ def: { eventScope }, connectionId: 'con_1' })

test('place (the default): the board or repository named must be in the scope', () => {
  assert.equal(eventOutsideScope(places, agent, on(), { refs: { board: 'b1' } }), null)
  assert.match(eventOutsideScope(places, agent, on(), { refs: { board: 'b2' } }) ?? '', /board b2 is outside/)
  assert.equal(
    eventOutsideScope(places, agent, on(), { refs: { repository: 'octo-demo/Hello-World' } }),
    null,
  )
  assert.match(
    eventOutsideScope(places, agent, on(), { refs: { repository: 'octo-demo/other' } }) ?? '',
    /repository octo-demo\/other is outside/,
  )
  assert.match(
    eventOutsideScope(places, agent, on(), { refs: { account: 'octo-demo' } }) ?? '',
    /names no board/,
  )
})

test('group: a new repository is in scope when the scope holds a repository of its owner (its group)', () => {
  assert.equal(
    eventOutsideScope(places, agent, on('group'), { refs: { repository: 'octo-demo/brand-new' } }),
    null,
  )
  assert.match(
    eventOutsideScope(places, agent, on('group'), { refs: { repository: 'someone-else/brand-new' } }) ?? '',
    /outside the agent's scope/,
  )
  assert.match(eventOutsideScope(places, agent, on('group'), { refs: {} }) ?? '', /names no board/)
})

test('account: about the account itself, delivered whatever it names', () => {
  assert.equal(eventOutsideScope(places, agent, on('account'), { refs: { board: 'just-made' } }), null)
})

test('a connection taken out of the agent stops every mode', () => {
  for (const mode of ['place', 'group', 'account'] as const)
    assert.match(
      eventOutsideScope(
        places,
        agent,
        { def: { eventScope: mode }, connectionId: 'con_2' },
        { refs: { board: 'b1' } },
      ) ?? '',
      /may no longer use connection con_2/,
    )
})

test('a thing of an owner in no repository (a draft issue) is in scope when the scope holds a repository of that owner', () => {
  assert.equal(eventOutsideScope(places, agent, on(), { refs: { owner: 'octo-demo' } }), null)
  assert.match(
    eventOutsideScope(places, agent, on(), { refs: { owner: 'octo-org' } }) ?? '',
    /holds no repository of octo-org/,
  )
  // A repository named wins over the owner: an item of another repository of the owner is out.
  assert.match(
    eventOutsideScope(places, agent, on(), { refs: { repository: 'octo-demo/other', owner: 'octo-demo' } }) ??
      '',
    /repository octo-demo\/other is outside/,
  )
})

test('an event whose place could not be read reaches no place-scoped trigger, saying why', () => {
  for (const mode of ['place', 'group'] as const)
    assert.match(
      eventOutsideScope(places, agent, on(mode), {
        refs: { account: 'octo-org', unattributed: 'upstream said 502' },
      }) ?? '',
      /repository could not be read \(upstream said 502\)/,
    )
  assert.equal(
    eventOutsideScope(places, agent, on('account'), { refs: { unattributed: 'upstream said 502' } }),
    null,
  )
})
