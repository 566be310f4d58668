// What matching an event to the triggers on its webhook costs, with and without the listener
// sieve (src/engine/events/listener-sieve.ts), as the recorder asks it: the listeners that fire
// for each event. Custom Webhook Events triggers keyed by list, as in the event benchmark's
// tenancy mode: 1,000 webhooks of 10 triggers each (one list a trigger, events spread over all
// of them, so few listeners are in the processor's caches), and one webhook of 100. Rounds of each
// way taken in turn; CPU per event, medians. Prints one JSON line. No target.

import { customWebhookEvents } from '../src/connectors/taskboard/triggers.ts'
import { sieveOf } from '../src/engine/events/listener-sieve.ts'
import { type Listener, triggerListener } from '../src/engine/events/recorder.ts'
import type { NormalizedEvent, TriggerDefinition } from '../src/kit/define.ts'
import { median, objectId, report, round } from './_stats.ts'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7)
const EVENTS = Number(process.env.BENCH_EVENTS ?? 200_000)

function webhooks(count: number, triggers: number) {
  const board = objectId()
  return Array.from({ length: count }, (_, w) => {
    const lists = Array.from({ length: triggers }, () => objectId())
    const listeners = lists.map((list, k) =>
      triggerListener(
        {
          id: `trg_${w}_${k}`,
          trigger_key: 'taskboard.custom_webhook_events',
          workspace_id: `wsp_${w}`,
          agent_id: `agt_${w}_${k}`,
          connection_id: `con_${w}`,
        },
        customWebhookEvents as unknown as TriggerDefinition,
        { type: 'agent' },
        { boards: [board], types: ['createCard'], lists: [list] },
        'when-matched',
      ),
    )
    return { board, lists, listeners }
  })
}

/** A card made on a random list of a random webhook, as the task-board's webhook parse gives it. */
function events(hooks: ReturnType<typeof webhooks>, n: number) {
  return Array.from({ length: n }, () => {
    const hook = hooks[Math.floor(Math.random() * hooks.length)]
    const list = hook.lists[Math.floor(Math.random() * hook.lists.length)]
    const card = objectId()
    const e: NormalizedEvent = {
      id: objectId(),
      type: 'createCard',
      occurredAt: new Date().toISOString(),
      refs: { board: hook.board, list, card },
      data: { type: 'createCard', board: { id: hook.board }, list: { id: list }, card: { id: card } },
    }
    return { listeners: hook.listeners, e }
  })
}

const fires = (l: Listener, e: NormalizedEvent) => !l.match || l.match(e)
const ways = {
  everyListener: (listeners: Listener[], e: NormalizedEvent) => listeners.filter((l) => fires(l, e)),
  sieved: (listeners: Listener[], e: NormalizedEvent) =>
    (sieveOf(listeners)?.candidates(e) ?? listeners).filter((l) => fires(l, e)),
}

function measure(hooks: ReturnType<typeof webhooks>) {
  const batch = events(hooks, EVENTS)
  const perEvent: Record<keyof typeof ways, number[]> = { everyListener: [], sieved: [] }
  for (let r = 0; r < ROUNDS; r++)
    for (const name of Object.keys(ways) as Array<keyof typeof ways>) {
      const way = ways[name]
      let fired = 0
      const cpu = process.cpuUsage()
      for (const { listeners, e } of batch) fired += way(listeners, e).length
      const used = process.cpuUsage(cpu)
      if (fired !== batch.length) throw new Error(`${name} fired ${fired} times for ${batch.length} events`)
      perEvent[name].push(((used.user + used.system) * 1000) / batch.length)
    }
  const every = median(perEvent.everyListener)
  const sieved = median(perEvent.sieved)
  return { everyListenerNs: round(every, 0), sievedNs: round(sieved, 0), ratio: round(sieved / every, 2) }
}

report(
  {
    bench: 'matching',
    rounds: ROUNDS,
    eventsPerRound: EVENTS,
    thousandWebhooksOfTen: measure(webhooks(1_000, 10)),
    oneWebhookOfHundred: measure(webhooks(1, 100)),
  },
  [],
)
