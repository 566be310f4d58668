// The choices of a field that names an upstream resource (GET /v1/steps/:id/options/:field and
// its trigger twin): the field's picker (kit/pickers.ts, declared by the connector next to the
// field's schema) is run with a connection, after the parents it depends on are checked against
// an agent's scope. The dashboard's dropdowns, the CLI and other front ends read the same.
import { PatchbayError } from '../../kit/errors.ts'
import type { Choice, Picker } from '../../kit/pickers.ts'
import { fieldPickers } from '../../kit/pickers.ts'
import type { Caller } from '../access/caller.ts'
import type { ScopeGuard } from '../access/scope-guard.ts'
import type { AgentService } from '../agents/agent-service.ts'
import type { ConnectionService } from '../connections/connection-service.ts'
import type { Registry } from '../registry.ts'

export interface ChoicesRequest {
  /** A step (`taskboard.create_card`) or a trigger (`taskboard.new_card`) of the catalog. */
  of: { kind: 'step' | 'trigger'; id: string }
  field: string
  /** Needed with a workspace key; an agent key defaults to the agent's only connection of the connector. */
  connectionId?: string
  /** The values of the fields the choices depend on (a list's idBoard). */
  parents: Record<string, string>
}

export interface ChoicesView {
  field: string
  /** What is picked: "board", "list" … */
  noun: string
  parents: string[]
  connectionId: string
  choices: Choice[]
}

/** At most this many choices are returned; a front end lets the user type the rest. */
const MAX_CHOICES = 500

export class ChoiceService {
  #registry: Registry
  #connections: ConnectionService
  #agents: AgentService
  #scope: ScopeGuard

  constructor(deps: {
    registry: Registry
    connections: ConnectionService
    agents: AgentService
    scope: ScopeGuard
  }) {
    this.#registry = deps.registry
    this.#connections = deps.connections
    this.#agents = deps.agents
    this.#scope = deps.scope
  }

  async list(caller: Caller, req: ChoicesRequest): Promise<ChoicesView> {
    const { connector, schema, where } = this.#target(req.of)
    const found = fieldPickers(schema).get(req.field)
    if (!found)
      throw new PatchbayError(
        'FIELD_HAS_NO_CHOICES',
        `The ${where} has no field "${req.field}" whose choices can be listed.`,
        {
          hint: `The fields with choices are in the catalog: GET /v1/${req.of.kind === 'step' ? 'steps' : 'catalog/triggers'}/${req.of.id} (pickers).`,
        },
      )
    const picker: Picker = found.picker
    const parents: Record<string, string> = {}
    for (const p of picker.parents) {
      const value = req.parents[p.field]
      if (!value)
        throw new PatchbayError(
          'PARENT_REQUIRED',
          `The ${picker.noun} choices depend on ${p.field} (the ${p.picker.noun}); give it as ?${p.field}=….`,
          { hint: `Pick the ${p.picker.noun} first: its choices are at …/options/${p.field}.` },
        )
      parents[p.field] = value
    }

    const connectionId = req.connectionId ?? (await this.#defaultConnection(caller, connector.id))
    const loaded = await this.#connections.usable(caller.workspaceId, connectionId, connector, req.of.id)
    const target = { connectionId, credentials: loaded.credentials }
    // An agent lists only inside its scope: the parents are checked as a step's inputs are, and
    // listers that reach across resources (all boards) keep to ctx.scope.
    const scope = await this.#scope.checkStep(
      caller,
      { id: req.of.id, connector, step: { scoped: picker.scoped ?? [] } },
      parents,
      target,
    )
    const http = this.#connections.client(connectionId, connector, loaded.credentials, { paced: true })
    const choices = await picker.list(
      {
        http,
        connection: {
          id: connectionId,
          accountName: loaded.row.account_name,
          accountId: loaded.row.account_id,
        },
        scope: scope ?? undefined,
      },
      parents,
    )
    return {
      field: req.field,
      noun: picker.noun,
      parents: picker.parents.map((p) => p.field),
      connectionId,
      choices: choices.slice(0, MAX_CHOICES),
    }
  }

  #target(of: ChoicesRequest['of']) {
    if (of.kind === 'step') {
      const r = this.#registry.steps.get(of.id)
      if (!r)
        throw new PatchbayError('STEP_NOT_FOUND', `There is no tool step "${of.id}".`, {
          hint: 'Find step ids with GET /v1/steps?q=<connector or step name>.',
        })
      return { connector: r.connector, schema: r.step.input, where: `step ${of.id}` }
    }
    const r = this.#registry.triggers.get(of.id)
    if (!r)
      throw new PatchbayError('TRIGGER_NOT_FOUND', `There is no trigger "${of.id}" in the catalog.`, {
        hint: 'The catalog lists every trigger: GET /v1/catalog.',
      })
    return { connector: r.connector, schema: r.trigger.config, where: `trigger ${of.id}` }
  }

  async #defaultConnection(caller: Caller, connectorId: string): Promise<string> {
    if (caller.agentId) {
      // An agent's own are read by id: a workspace of thousands of end users' connections costs it nothing.
      const own = (await this.#agents.forCaller(caller)).connectionIds
      const mine = await this.#connections.named(caller.workspaceId, own, connectorId)
      if (mine.length === 1) return mine[0].id
      throw connectionToName(connectorId, mine, false)
    }
    // A workspace key names its connection, as it does to run a step; the first few are offered (a
    // page: the workspace may hold thousands of its end users').
    const { connections, next } = await this.#connections.page(
      caller.workspaceId,
      { connector: connectorId },
      { limit: CONNECTIONS_OFFERED },
    )
    throw connectionToName(connectorId, connections, next !== null)
  }
}

/** Connections a refusal to guess names, at most. */
const CONNECTIONS_OFFERED = 5

/** The refusal when no connection was named and none could be taken for granted. */
function connectionToName(
  connectorId: string,
  offered: ReadonlyArray<{ id: string; accountName: string | null }>,
  more: boolean,
): PatchbayError {
  if (offered.length === 0)
    return new PatchbayError(
      'CONNECTION_REQUIRED',
      `Listing these choices needs a ${connectorId} connection, and there is none.`,
      { hint: 'Connect an account first: the Connections page of the dashboard, or POST /v1/connections.' },
    )
  const named = offered.map((c) => `${c.id} (${c.accountName})`).join(', ')
  return new PatchbayError(
    'CONNECTION_REQUIRED',
    `Say which connection lists the choices: ${named}${more ? ', …' : ''}.`,
    {
      hint: more
        ? `Add ?connectionId=<id>; GET /v1/connections?connector=${connectorId} lists them all.`
        : 'Add ?connectionId=<id>.',
    },
  )
}
