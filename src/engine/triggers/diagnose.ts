// "Why doesn't my trigger fire?" — the four causes the spec names, checked against the
// connection, the upstream webhook and the events that did arrive, each with what to do.
import type { Kysely } from 'kysely'
import {
  type ConnectorDefinition,
  type NormalizedEvent,
  type PlaceKind,
  type TriggerDefinition,
  triggerMechanism,
} from '../../kit/define.ts'
import { PatchbayError } from '../../kit/errors.ts'
import { type EventRow, events } from '../../store/event-log.ts'
import type { Database } from '../../store/schema.ts'
import type { TriggerRow } from '../../store/triggers.ts'
import type { Places } from '../access/places.ts'
import type { ConnectionService } from '../connections/connection-service.ts'
import type { Registry } from '../registry.ts'
import type { TriggerService } from './trigger-service.ts'

/** The watched-place check's cause, as the API has named it since it was first published. */
const WATCHED = 'wrong_board' as const

export interface DiagnosisCheck {
  cause: 'delivery' | 'connection_lapsed' | typeof WATCHED | 'event_type_mismatch' | 'polling_interval'
  /** What the check looks at, for people ("Connection", not "connection_lapsed" next to "ok"). */
  label?: string
  status: 'ok' | 'problem' | 'info'
  message: string
  fix?: string
}

/** Each check's name as a person reads it next to its status. */
const labels = (places: Places): Record<DiagnosisCheck['cause'], string> => ({
  delivery: 'Delivery to the agent',
  connection_lapsed: 'Connection',
  [WATCHED]: `Watched ${places.names()}`,
  event_type_mismatch: 'Event types',
  polling_interval: 'Polling',
})

const RECENT = 200

export async function diagnoseTrigger(
  deps: {
    db: Kysely<Database>
    registry: Registry
    connections: ConnectionService
    triggers: TriggerService
  },
  row: TriggerRow,
): Promise<{ triggerId: string; healthy: boolean; checks: Array<DiagnosisCheck & { label: string }> }> {
  const checks: DiagnosisCheck[] = []
  const reg = deps.registry.triggers.get(row.trigger_key)!
  const config = row.config
  let loaded = await deps.connections.load(row.workspace_id, row.connection_id).catch(() => null)
  const mechanism = triggerMechanism(reg.trigger, config)
  checks.push({
    cause: 'delivery',
    status: 'info',
    message: `${mechanism.kind === 'webhook' ? 'Instant' : 'Polled'}: delivered by ${mechanism.upstream}${mechanism.reason ? ` (${mechanism.reason})` : ''}.`,
  })

  const places = deps.registry.places
  const place = placeOf(
    places,
    reg.trigger,
    config,
    reg.trigger.watch?.(config, { id: loaded?.row.account_id ?? '' }).model,
  )

  // The webhook is probed upstream first: a 401 to the probe lapses the connection, and the
  // connection's check below reports what the probe found, not only what was stored.
  let probe: (DiagnosisCheck & { refused?: boolean }) | null = null
  if (mechanism.kind === 'webhook') {
    const wanted = reg.trigger.watch!(config, { id: loaded?.row.account_id ?? '' }).model
    const sub = row.subscription_id ? await deps.triggers.subscription(row.subscription_id) : undefined
    probe = await checkWatchedModel(deps, sub, wanted, loaded, place)
    if (probe.refused)
      loaded = await deps.connections.load(row.workspace_id, row.connection_id).catch(() => null)
  }

  if (!loaded) {
    checks.push({
      cause: 'connection_lapsed',
      status: 'problem',
      message: `The trigger's connection ${row.connection_id} no longer exists.`,
      fix: 'Delete the trigger and create it again on a current connection.',
    })
  } else if (loaded.row.status === 'lapsed') {
    checks.push({
      cause: 'connection_lapsed',
      status: 'problem',
      message: `The connection ${loaded.row.account_name} has lapsed: ${loaded.row.status_reason ?? 'the upstream refused its credentials'}.`,
      fix: `Reconnect it: the Reconnect button on the Connections page, or POST /v1/connections/${loaded.row.id}/reconnect (its webhooks are registered again).`,
    })
  } else {
    checks.push({
      cause: 'connection_lapsed',
      status: 'ok',
      message: `The connection ${loaded.row.account_name} is active.`,
    })
  }

  const lapsed = !loaded || loaded.row.status === 'lapsed'
  if (mechanism.kind === 'webhook') {
    const { refused: _, ...placeCheck } = probe!
    if (lapsed) {
      // One cause: the connection. Its webhooks went with its credentials (the upstream removes a
      // revoked token's webhooks) and come back with a reconnect; the events say nothing more.
      checks.push({
        cause: WATCHED,
        status: 'info',
        message: `The webhook on ${place.label} went with the connection's credentials; reconnecting registers it again.`,
      })
    } else if (placeCheck.status === 'problem') {
      checks.push(placeCheck)
    } else {
      const evidence = await eventEvidence(deps, row, reg, config, place)
      checks.push(evidence.place ?? placeCheck, evidence.types)
    }
  } else if (lapsed) {
    checks.push({
      cause: 'polling_interval',
      status: 'info',
      message: 'Polls wait for the connection: they run again once it is reconnected.',
    })
  } else {
    checks.push(await pollingCheck(deps, row))
  }
  return {
    triggerId: row.id,
    healthy: !checks.some((c) => c.status === 'problem'),
    checks: checks.map((c) => ({ ...c, label: labels(places)[c.cause] })),
  }
}

/** Where a trigger is configured to listen: the place its config names. */
interface Place {
  /** A place kind, or `model` when its config names no place (the watched model). */
  kind: string
  /** The place's identifier (as its kind compares them), or the watched model. */
  id: string
  /** The declared kind, for a place. */
  declared?: PlaceKind
  label: string
  /** The config field that names it, when a plain field does (to ask: would it fire there?). */
  field?: string
}

function placeOf(
  places: Places,
  trigger: TriggerDefinition,
  config: Record<string, unknown>,
  model: string | undefined,
): Place {
  for (const f of trigger.scoped ?? []) {
    const declared = places.kind(f.kind)
    if (!declared) continue
    const given = f.value ? f.value(config) : f.field ? config[f.field] : undefined
    if (typeof given !== 'string' || !given) continue
    const id = places.normalize(f.kind, given)
    return { kind: f.kind, id, declared, label: `${f.kind} ${given}`, field: f.value ? undefined : f.field }
  }
  return { kind: 'model', id: model ?? '', label: model ?? 'the watched account' }
}

/** Where an event happened: its place of the trigger's kind, else the model its webhook watched. */
function eventPlace(e: EventRow, place: Place): string {
  const at = place.declared ? e.refs[place.kind] : undefined
  if (typeof at === 'string' && at) return place.declared?.normalize ? place.declared.normalize(at) : at
  return e.model
}

/** A place as people know it: its name where the event carries it. */
function placeName(e: EventRow, place: Place, id: string): string {
  const name = place.declared?.nameIn?.(e.data, id)
  return typeof name === 'string' && name && name !== id ? `${name} (${id})` : id
}

/**
 * What the events this connection received recently say, through every webhook it has (all
 * places, not only the trigger's): whether events of the trigger's own kind arrived elsewhere
 * and none where it listens (the wrong place, named), and whether
 * only a neighbouring kind arrived where it listens (another trigger type, named). A trigger whose
 * own events arrive gets no advice.
 */
async function eventEvidence(
  deps: { db: Kysely<Database>; registry: Registry },
  row: TriggerRow,
  reg: { trigger: TriggerDefinition; connector: ConnectorDefinition },
  config: Record<string, unknown>,
  place: Place,
): Promise<{ place: DiagnosisCheck | null; types: DiagnosisCheck }> {
  // What arrived since the trigger was made: events before it could not have fired it.
  const recent = (
    await events.list(deps.db, row.workspace_id, { connectionId: row.connection_id, limit: RECENT })
  ).filter((e) => e.received_at >= row.created_at)
  const match = reg.trigger.match!
  const here = recent.filter((e) => eventPlace(e, place) === place.id)
  const own = here.filter((e) => safeMatch(match, toEvent(e), config))
  // Would it have fired, had it been configured for the place the event happened?
  const elsewhere = recent.filter((e) => {
    const at = eventPlace(e, place)
    if (at === place.id) return false
    const there = place.field ? { ...config, [place.field]: at } : config
    return safeMatch(match, toEvent(e), there)
  })
  let placeCheck: DiagnosisCheck | null = null
  let wrongPlace = false
  if (elsewhere.length > 0 && (own.length === 0 || elsewhere[0].seq > own[0].seq)) {
    const counts = new Map<string, { name: string; count: number; latest: string }>()
    for (const e of elsewhere) {
      const at = eventPlace(e, place)
      const c = counts.get(at) ?? { name: placeName(e, place, at), count: 0, latest: e.occurred_at }
      counts.set(at, { ...c, count: c.count + 1 })
    }
    const where = [...counts.values()]
      .slice(0, 3)
      .map((c) => `${c.name}: ${c.count}, the latest at ${c.latest}`)
      .join('; ')
    wrongPlace = own.length === 0
    placeCheck =
      own.length === 0
        ? {
            cause: WATCHED,
            status: 'problem',
            message: `${reg.trigger.name} events arrived through this connection for another ${place.kind === 'model' ? 'place' : place.kind} (${where}), and none for ${place.label}, the one this trigger watches.`,
            fix: `If those are the changes you expect, configure the trigger for that ${place.kind === 'model' ? 'place' : place.kind}: delete it and create it again with the other one.`,
          }
        : {
            cause: WATCHED,
            status: 'info',
            message: `${reg.trigger.name} events fire it on ${place.label}; more recent ones arrived for ${where}.`,
          }
  }
  if (own.length > 0)
    return {
      place: placeCheck,
      types: {
        cause: 'event_type_mismatch',
        status: 'ok',
        message: `${own.length} of the last ${here.length} events on ${place.label} fired ${reg.trigger.name} (the latest at ${own[0].occurred_at}).`,
      },
    }
  // None of its own here: the neighbouring kinds that did arrive, by the trigger each would fire.
  const probe: NormalizedEvent = { id: '', type: 'patchbay:probe', occurredAt: '', refs: {}, data: {} }
  const candidates = reg.connector.triggers.filter(
    (t) => t.key !== reg.trigger.key && t.instant && t.match && !safeMatch(t.match, probe, config),
  )
  const others = new Map<string, number>()
  for (const e of here)
    for (const t of candidates)
      if (safeMatch(t.match!, toEvent(e), config)) others.set(t.name, (others.get(t.name) ?? 0) + 1)
  // Its own kind arrives elsewhere: the place is what is wrong, not the kind (no advice here).
  if (others.size === 0 || wrongPlace)
    return {
      place: placeCheck,
      types: {
        cause: 'event_type_mismatch',
        status: 'info',
        message: wrongPlace
          ? `${here.length ? `The ${here.length} recent events on ${place.label} are of other kinds; ` : `No events have arrived for ${place.label}; `}${reg.trigger.name} events arrive for another ${place.kind === 'model' ? 'place' : place.kind} (the check above).`
          : here.length
            ? `The last ${here.length} events on ${place.label} fire no trigger of this connector.`
            : `No events have arrived for ${place.label} yet.`,
      },
    }
  const best = [...others.entries()].sort((a, b) => b[1] - a[1])
  const example = here[0]
  return {
    place: placeCheck,
    types: {
      cause: 'event_type_mismatch',
      status: 'problem',
      message: `None of the last ${here.length} events on ${place.label} fired ${reg.trigger.name}; they are of a neighbouring kind (e.g. ${example.type} at ${example.occurred_at}) and would fire ${best.map(([n, c]) => `${n} (${c})`).join(', ')}.`,
      fix: `If those are the changes you want, use ${best[0][0]} instead of ${reg.trigger.name}.`,
    },
  }
}

/**
 * A polled trigger: a failing poll, or — while it has fired nothing yet — the next poll still to
 * come (a change made since the last poll fires then). A trigger that has fired is told its
 * schedule, with no advice.
 */
async function pollingCheck(deps: { db: Kysely<Database> }, row: TriggerRow): Promise<DiagnosisCheck> {
  if (row.last_poll_error)
    return {
      cause: 'polling_interval',
      status: 'problem',
      message: `The last poll (${row.last_poll_at}) failed: ${row.last_poll_error}.`,
      fix: 'Fix the cause above; the next poll retries by itself.',
    }
  const next = row.next_poll_at ? Date.parse(row.next_poll_at) : null
  const waiting = next !== null && next > Date.now()
  const fired = await deps.db
    .selectFrom('deliveries')
    .select('id')
    .where('trigger_id', '=', row.id)
    .limit(1)
    .executeTakeFirst()
  const schedule = `Polled every ${row.poll_interval_ms} ms; last poll ${row.last_poll_at ?? 'not yet'}, next poll ${row.next_poll_at ?? 'now'}`
  if (waiting && !fired)
    return {
      cause: 'polling_interval',
      status: 'problem',
      message: `${schedule} — the interval has not elapsed yet: it has fired nothing so far, and a change made since the last poll fires at the next one.`,
      fix: `Wait for the next poll, or poll now (POST /v1/triggers/${row.id}/poll, the Poll now button), or shorten pollIntervalMs.`,
    }
  return { cause: 'polling_interval', status: 'info', message: `${schedule}.` }
}

async function checkWatchedModel(
  deps: { registry: Registry; connections: ConnectionService; triggers: TriggerService },
  sub: Awaited<ReturnType<TriggerService['subscription']>>,
  wanted: string,
  loaded: Awaited<ReturnType<ConnectionService['load']>> | null,
  place: Place,
): Promise<DiagnosisCheck & { refused?: boolean }> {
  if (!sub)
    return {
      cause: WATCHED,
      status: 'problem',
      message: 'The trigger has no upstream webhook.',
      fix: 'Delete the trigger and create it again.',
    }
  if (sub.status === 'missing')
    return {
      cause: WATCHED,
      status: 'problem',
      message: `The upstream webhook is missing: ${sub.last_error}.`,
      fix: `Reconnect the connection: POST /v1/connections/${sub.connection_id}/reconnect.`,
    }
  if (sub.status !== 'active')
    return {
      cause: WATCHED,
      status: 'problem',
      message: `The upstream webhook is in error: ${sub.last_error}.`,
      fix: 'Reconnect the connection, or restart Patchbay to register it again.',
    }
  if (sub.model !== wanted)
    return {
      cause: WATCHED,
      status: 'problem',
      message: `The webhook watches ${sub.model}, but the trigger is configured for ${wanted}.`,
      fix: 'Delete the trigger and create it again.',
    }
  if (!loaded || loaded.row.status === 'lapsed')
    return {
      cause: WATCHED,
      status: 'info',
      message: `The webhook is meant to watch ${wanted}; it cannot be checked upstream while the connection is not active.`,
    }
  const connector = deps.registry.connector(sub.connector)!
  try {
    // The connection's own client: a 401 here is the upstream refusing its credentials, which
    // lapses it (and the upstream has removed the webhooks made with them).
    const http = deps.connections.client(sub.connection_id, connector, loaded.credentials, { paced: true })
    const upstream = (await connector.webhooks!.list(http, sub.model)).find(
      (h) => h.id === sub.upstream_hook_id,
    )
    if (!upstream)
      return {
        cause: WATCHED,
        status: 'problem',
        message: `The upstream webhook ${sub.upstream_hook_id} no longer exists upstream.`,
        fix: 'Restart Patchbay or reconnect the connection: webhooks are reconciled and registered again.',
      }
    if (upstream.model !== wanted)
      return {
        cause: WATCHED,
        status: 'problem',
        message: `Upstream, the webhook watches ${upstream.model}, not the configured ${wanted}.`,
        fix: `Delete the trigger and create it again for the right ${place.kind === 'model' ? 'place' : place.kind}.`,
      }
    return {
      cause: WATCHED,
      status: 'ok',
      message: `The upstream webhook watches ${wanted}, the configured one.`,
    }
  } catch (err) {
    if (err instanceof PatchbayError && err.code === 'CONNECTION_LAPSED') {
      await deps.triggers.webhooks.markMissing(sub.id, sub.connection_id)
      return {
        cause: WATCHED,
        status: 'problem',
        refused: true,
        message: `Checking the webhook upstream was refused with 401: the connection's credentials were revoked or have expired, and the upstream removes the webhooks made with them. The connection is now lapsed and the webhook missing (${(err as Error).message}).`,
        fix: `Reconnect it: POST /v1/connections/${sub.connection_id}/reconnect (its webhooks are registered again).`,
      }
    }
    return {
      cause: WATCHED,
      status: 'info',
      message: `The upstream webhook could not be checked: ${(err as Error).message}`,
    }
  }
}

function toEvent(e: {
  upstream_id: string
  type: string
  occurred_at: string
  refs: NormalizedEvent['refs']
  data: unknown
}): NormalizedEvent {
  return { id: e.upstream_id, type: e.type, occurredAt: e.occurred_at, refs: e.refs, data: e.data }
}

function safeMatch(
  match: NonNullable<TriggerDefinition['match']>,
  e: NormalizedEvent,
  config: unknown,
): boolean {
  try {
    return match(e, config)
  } catch {
    return false
  }
}
