// Wires the engine's parts together over a store and a vault. The server, the CLI and tests
// all start from here.
import type { FastifyBaseLogger } from 'fastify'
import type { Dispatcher } from 'undici'
import type { BudgetLedger } from '../kit/budget-ledger.ts'
import { type Clock, systemClock } from '../kit/clock.ts'
import { EgressGuard } from '../kit/egress.ts'
import { createDispatcher } from '../kit/http.ts'
import type { Mailer } from '../kit/mailer.ts'
import { type Budget, createPacer, type Pacer } from '../kit/pacer.ts'
import type { SharedResults } from '../kit/result-cache.ts'
import { defaultRetryPolicy, type RetryPolicy } from '../kit/retry-policy.ts'
import { Agents } from '../store/agents.ts'
import { ApiKeys } from '../store/api-keys.ts'
import { AuditLogRows } from '../store/audit-log.ts'
import { Causations } from '../store/causations.ts'
import { ConnectionRateLimits } from '../store/connection-rate-limits.ts'
import { Connections } from '../store/connections.ts'
import { CreditBudgets, CreditHolds, CreditLedger } from '../store/credits.ts'
import type { Store } from '../store/database.ts'
import { Disconnections } from '../store/disconnections.ts'
import { ConnectSessions, EndUsers, OperatorNoticeRows } from '../store/end-users.ts'
import { Jobs } from '../store/jobs.ts'
import { Leases } from '../store/leases.ts'
import { McpGrantRows, ProviderKeys, ProviderRecords } from '../store/mcp-grants.ts'
import { Memberships } from '../store/memberships.ts'
import { OAuthFlowRows } from '../store/oauth-flows.ts'
import { ParkedInbox } from '../store/parked-inbox.ts'
import { StepRuns } from '../store/step-runs.ts'
import { Subscriptions } from '../store/subscriptions.ts'
import { ToolRuns } from '../store/tool-runs.ts'
import { Tools } from '../store/tools.ts'
import { Triggers } from '../store/triggers.ts'
import type { Vault } from '../store/vault.ts'
import { WorkspaceSettingsRows } from '../store/workspace-settings.ts'
import { Workspaces } from '../store/workspaces.ts'
import { AuditLog } from './access/audit.ts'
import { CreditService } from './access/credits.ts'
import { KeyRevocations } from './access/key-revocations.ts'
import { MembershipService } from './access/memberships.ts'
import { PlacementChanges } from './access/placement-changes.ts'
import { ScopeGuard, type ScopeGuardOptions } from './access/scope-guard.ts'
import { WorkspaceKeyService } from './access/workspace-keys.ts'
import { WorkspaceSettings } from './access/workspace-settings.ts'
import { WorkspaceService } from './access/workspaces.ts'
import { AgentService } from './agents/agent-service.ts'
import { AgentToolbox } from './agents/agent-toolbox.ts'
import { Changes, type ChangeTransport } from './changes/changes.ts'
import { ConnectionBindings } from './connections/connection-bindings.ts'
import { ConnectionHealth } from './connections/connection-health.ts'
import { ConnectionService } from './connections/connection-service.ts'
import { type OAuthApp, OAuthFlows } from './connections/oauth-flows.ts'
import { EndUserService } from './end-users/end-user-service.ts'
import { EndUserSettings } from './end-users/end-user-settings.ts'
import { OperatorNotices } from './end-users/operator-notices.ts'
import { EngineEvents } from './engine-events.ts'
import { EventAttributor } from './events/attribution.ts'
import { Deliverer, PUSH_CONNECTIONS_PER_ENDPOINT } from './events/deliverer.ts'
import { DeliveryStreams } from './events/delivery-streams.ts'
import { DEFAULT_DELIVERY_BACKLOG_LIMIT, type EventOptions, EventSystem } from './events/event-system.ts'
import { EventHistory } from './events/history.ts'
import { LoopGuard } from './events/loop-guard.ts'
import { Recorder } from './events/recorder.ts'
import { Poller } from './events/sources/poller.ts'
import { Ingress } from './events/sources/webhook-ingress.ts'
import { JobService } from './jobs/job-kinds.ts'
import { InProcessJobQueue } from './jobs/job-queue.ts'
import { LongJobs } from './jobs/long-jobs.ts'
import { type Sweeps, TimerSweeps } from './jobs/sweeps.ts'
import { McpGrants } from './mcp-grants/mcp-grants.ts'
import { Accounts, type SignupMode } from './people/accounts.ts'
import { AuditTrail } from './people/audit-trail.ts'
import { Members } from './people/members.ts'
import { SingleSignOn, type SsoConfig } from './people/sso.ts'
import { PublicAddress } from './public-address.ts'
import { Registry } from './registry.ts'
import { Stats } from './stats/stats.ts'
import { Timelines } from './stats/timelines.ts'
import { ChoiceService } from './steps/choices.ts'
import { StepRunner } from './steps/step-runner.ts'
import { type LookupTuning, StepServices } from './steps/step-services.ts'
import { ToolService } from './tools/tool-service.ts'
import { TriggerService } from './triggers/trigger-service.ts'
import { WebhookSubscriptions } from './triggers/webhook-subscriptions.ts'
import { RateBudgets } from './upstream/rate-budgets.ts'
import { UpstreamClients } from './upstream/upstream-clients.ts'
import { UpstreamPages } from './upstream/upstream-pages.ts'

export interface EngineOptions {
  store: Store
  vault: Vault
  baseUrls: Record<string, string | undefined>
  log: FastifyBaseLogger
  timeoutMs?: number
  retry?: Partial<RetryPolicy>
  pacer?: Pacer
  pacing?: Record<string, Budget>
  dispatcher?: Dispatcher
  /** Where Patchbay may send (kit/egress.ts); without one, only to public addresses. */
  egress?: EgressGuard
  registry?: Registry
  /** Per-connector overrides of the result cache and coalescing defaults. */
  lookups?: Record<string, LookupTuning>
  /** Lookup results shared by every instance (Redis when configured); else each process its own. */
  sharedResults?: SharedResults
  /** The scope guard's cache of resolved places (a resource → the place it lies in). */
  scope?: ScopeGuardOptions
  events?: EventOptions
  /** Sign-in flows: each connector's OAuth app and web address (when not its API address). */
  /** Who looks for due work; by default a timer in this process (one instance on SQLite). */
  sweeps?: Sweeps
  /** How changes reach the other instances (PostgreSQL LISTEN/NOTIFY or Redis); none on SQLite. */
  changes?: ChangeTransport | null
  oauth?: { apps?: Record<string, OAuthApp | undefined>; webUrls?: Record<string, string | undefined> }
  /** Time for the parts that wait (pacing, rate budgets); tests drive it by hand. */
  clock?: Clock
  /** How often the stats roll-up runs (default a minute; 0: never, tests call stats.rollUp). */
  statsRollupEveryMs?: number
  /** What is left of upstreams' reported request budgets; shared by every instance (Redis) when given. */
  budgetLedger?: BudgetLedger
  /** People: who may sign up, how long a session lasts, mail for invitations, single sign-on. */
  people?: PeopleOptions
}

export interface PeopleOptions {
  signup?: SignupMode
  sessionTtlMs?: number
  mailer?: Mailer | null
  sso?: SsoConfig | null
}

export class Engine {
  readonly store: Store
  readonly registry: Registry
  readonly apiKeys: ApiKeys
  readonly connections: ConnectionService
  readonly steps: StepRunner
  readonly stepRuns: StepRuns
  readonly clients: UpstreamClients
  readonly log: FastifyBaseLogger
  readonly credits: CreditService
  readonly stepServices: StepServices
  /** Agents: scope, connections, delivery target, signing secret and agent keys. */
  readonly agents: AgentService
  /** The agent scope check every agent's step passes. */
  readonly scope: ScopeGuard
  /** Agents' tools and their runs. */
  readonly tools: ToolService
  /**
   * What an agent can call (its steps and tools) as one list, for MCP, function calling and the
   * REST step runs an agent key makes.
   */
  readonly toolbox: AgentToolbox
  /** The choices of fields that name upstream resources (dropdowns, GET …/options/:field). */
  readonly choices: ChoiceService
  /** Changes every instance hears about at once (caches dropped, streams woken). */
  readonly changes: Changes
  /** Revoked API keys, for whoever caches keys (the server's authentication). */
  readonly keyRevocations: KeyRevocations
  /** Who belongs to which workspace with which role (cached for authentication, shared on change). */
  readonly memberships: MembershipService
  /** Who changed what: append-only, recorded for every change made through the API. */
  readonly audit: AuditLog
  /** Workspaces: made, renamed, configured, deleted with everything they own. */
  readonly workspaces: WorkspaceService
  /** Workspace API keys with a role, a maker and an expiry. */
  readonly workspaceKeys: WorkspaceKeyService
  /** Movable resources stored events name: the scope guard forgets where they were placed. */
  readonly placements: PlacementChanges
  readonly events: EventSystem
  /** What uses each connection: disconnecting says what it breaks, and a reconnect can restore it. */
  readonly connectionBindings: ConnectionBindings
  /** Upstreams' web pages: token-page addresses, and page addresses read into identifiers. */
  readonly pages: UpstreamPages
  /** Request budgets upstreams report (code-host x-ratelimit-*), per credential. */
  readonly rateBudgets: RateBudgets
  /** Sign-in through upstreams' web pages (OAuth), for connectors that declare a flow. */
  readonly oauth: OAuthFlows
  /** Lifecycle notices to the workspace's notification URL. */
  readonly notices: OperatorNotices
  /** End users, their connect sessions and settings. */
  readonly endUsers: EndUserService
  /** The one egress guard: addresses checked when saved, and at connect time by the dispatcher. */
  readonly egress: EgressGuard
  /** What each workspace decides for itself (allowInlineAuth). */
  readonly settings: WorkspaceSettings
  /** The numbers behind the overview charts (GET /v1/stats), from the stored records. */
  readonly stats: Stats
  /** A run's timeline (the dashboard's waterfall), from the stored records. */
  readonly timelines: Timelines
  /** Long work with progress: bulk enrichments and replays of many deliveries (GET /v1/jobs). */
  readonly jobs: JobService
  /** A workspace's members and invitations (mailed when SMTP is configured). */
  readonly members: Members
  /** People's accounts: sign-up, sign-in, sessions. */
  readonly accounts: Accounts
  /** Single sign-on with OpenID Connect, when configured. */
  readonly sso: SingleSignOn | null
  /** MCP clients' OAuth grants (one agent each) and the authorization server's records. */
  readonly mcpGrants: McpGrants
  /** The authorization server's keys (signing, cookies), sealed in the store. */
  readonly oauthProviderKeys: ProviderKeys
  #mailer: Mailer | null
  #dispatcher: Dispatcher
  /** Pushes to agents: a pool of their own (PUSH_CONNECTIONS_PER_ENDPOINT), unless one was given for everything. */
  #pushDispatcher: Dispatcher

  /** The address people and upstreams reach Patchbay at (PATCHBAY_PUBLIC_URL, or where it listens), no trailing slash; '' before the start. */
  get publicUrl(): string {
    return this.address.url
  }
  /** Where people and upstreams reach this instance, set when the server starts (event-system.ts). */
  readonly address = new PublicAddress()

  constructor(opts: EngineOptions) {
    this.store = opts.store
    this.log = opts.log
    this.registry = opts.registry ?? new Registry()
    // What one part tells the parts that act on it (a reconnect, a lapse, an agent deleted).
    const bus = new EngineEvents()
    this.changes = new Changes({
      transport: opts.changes,
      onError: (err) => opts.log.warn({ err }, 'sharing a change with the other instances failed'),
    })
    this.keyRevocations = new KeyRevocations(this.changes)
    this.settings = new WorkspaceSettings({
      rows: new WorkspaceSettingsRows(opts.store.db),
      changes: this.changes,
    })
    this.placements = new PlacementChanges(this.changes, (id) => this.registry.connector(id)?.scope)
    this.apiKeys = new ApiKeys(opts.store.db)
    this.audit = new AuditLog({ rows: new AuditLogRows(opts.store.db), db: opts.store.db })
    this.memberships = new MembershipService({
      repo: new Memberships(opts.store.db),
      keys: this.apiKeys,
      changes: this.changes,
      revocations: this.keyRevocations,
    })
    const clock = opts.clock ?? systemClock
    this.stepRuns = new StepRuns(opts.store, { clock, log: opts.log })
    this.egress = opts.egress ?? new EgressGuard()
    this.#dispatcher = opts.dispatcher ?? createDispatcher(this.egress)
    this.#pushDispatcher = opts.dispatcher ?? createDispatcher(this.egress, PUSH_CONNECTIONS_PER_ENDPOINT)
    this.rateBudgets = new RateBudgets({
      clock,
      ledger: opts.budgetLedger,
      onError: (err) => opts.log.warn({ err }, 'the shared rate-limit ledger did not answer'),
    })
    this.clients = new UpstreamClients({
      baseUrls: opts.baseUrls,
      dispatcher: this.#dispatcher,
      pacer: opts.pacer ?? createPacer(clock),
      timeoutMs: opts.timeoutMs ?? 15_000,
      retry: { ...defaultRetryPolicy, ...opts.retry },
      pacing: opts.pacing,
      budgets: this.rateBudgets,
      clock,
    })
    this.pages = new UpstreamPages({
      registry: this.registry,
      clients: this.clients,
      webUrls: opts.oauth?.webUrls,
    })
    const disconnections = new Disconnections(opts.store.db)
    const agentRows = new Agents(opts.store.db)
    const toolRows = new Tools(opts.store.db)
    const triggerRows = new Triggers(opts.store.db)
    const connectionRows = new Connections(opts.store.db)
    const endUserRows = new EndUsers(opts.store.db)
    const endUserSettings = new EndUserSettings({ db: opts.store.db, vault: opts.vault, egress: this.egress })
    this.notices = new OperatorNotices({
      rows: new OperatorNoticeRows(opts.store.db),
      settings: endUserSettings,
      endUsers: endUserRows,
      dispatcher: this.#pushDispatcher,
      log: opts.log,
      retryScheduleMs: opts.events?.retryScheduleMs,
    })
    this.connections = new ConnectionService({
      bus,
      lifecycle: this.notices,
      db: opts.store.db,
      repo: connectionRows,
      triggers: triggerRows,
      disconnections,
      vault: opts.vault,
      registry: this.registry,
      clients: this.clients,
      changes: this.changes,
      egress: this.egress,
    })
    this.credits = new CreditService({
      ledger: new CreditLedger(opts.store.db),
      budgets: new CreditBudgets(opts.store.db),
      holds: new CreditHolds(opts.store.db),
      changes: this.changes,
      log: opts.log,
    })
    this.stepServices = new StepServices({
      clients: this.clients,
      connections: this.connections,
      credits: this.credits,
      limits: new ConnectionRateLimits(opts.store.db),
      registry: this.registry,
      changes: this.changes,
      tuning: opts.lookups,
      sharedResults: opts.sharedResults && {
        results: opts.sharedResults,
        onError: (err) => opts.log.warn({ err }, 'the shared lookup cache did not answer'),
      },
    })
    this.agents = new AgentService({
      bus,
      endUsers: endUserRows,
      repo: agentRows,
      keys: this.apiKeys,
      vault: opts.vault,
      connections: this.connections,
      revocations: this.keyRevocations,
      changes: this.changes,
      egress: this.egress,
      registry: this.registry,
    })
    this.mcpGrants = new McpGrants({
      rows: new McpGrantRows(opts.store.db),
      records: new ProviderRecords(opts.store.db, opts.vault),
      agents: this.agents,
    })
    this.oauthProviderKeys = new ProviderKeys(opts.store.db, opts.vault)
    this.scope = new ScopeGuard({
      agents: this.agents,
      clients: this.clients,
      registry: this.registry,
      placements: this.placements,
      options: opts.scope,
    })
    this.steps = new StepRunner({
      settings: this.settings,
      services: this.stepServices,
      registry: this.registry,
      connections: this.connections,
      clients: this.clients,
      runs: this.stepRuns,
      scopeGuard: this.scope,
      pages: this.pages,
    })
    this.choices = new ChoiceService({
      registry: this.registry,
      connections: this.connections,
      agents: this.agents,
      scope: this.scope,
    })
    const db = opts.store.db
    const causations = new Causations(db)
    this.tools = new ToolService({
      tools: toolRows,
      runs: new ToolRuns(db),
      triggers: triggerRows,
      agents: this.agents,
      connections: this.connections,
      registry: this.registry,
      steps: this.steps,
      causations,
      log: opts.log,
    })
    this.toolbox = new AgentToolbox({
      registry: this.registry,
      agents: this.agents,
      connections: this.connections,
      tools: this.tools,
      steps: this.steps,
      settings: this.settings,
    })

    // The event path: triggers (configuration and upstream webhooks), then the deliverer, the
    // recorder every source hands its events to, and the sources (events/event-system.ts).
    const ev = opts.events ?? {}
    const jobs = new InProcessJobQueue({
      onError: (name, err) => opts.log.error({ err, job: name }, 'background job failed'),
    })
    const triggers = new TriggerService({
      bus,
      webhooks: new WebhookSubscriptions({
        bus,
        address: this.address,
        subscriptions: new Subscriptions(db),
        triggers: triggerRows,
        registry: this.registry,
        connections: this.connections,
        clients: this.clients,
        vault: opts.vault,
        changes: this.changes,
        log: opts.log,
      }),
      triggers: triggerRows,
      registry: this.registry,
      connections: this.connections,
      agents: this.agents,
      tools: this.tools,
      pages: this.pages,
      changes: this.changes,
      minPollIntervalMs: ev.minPollIntervalMs,
    })
    const deliverer = new Deliverer({
      db,
      jobs,
      changes: this.changes,
      dispatcher: this.#pushDispatcher,
      agents: this.agents,
      tools: this.tools,
      registry: this.registry,
      triggers: triggerRows,
      clock,
      log: opts.log,
      retryScheduleMs: ev.retryScheduleMs,
      timeoutMs: ev.deliveryTimeoutMs,
      // PostgreSQL: outcomes of the batches that finish within 20 ms share one transaction.
      outcomeLingerMs: opts.store.kind === 'postgres' ? 20 : 0,
      loopGuard: new LoopGuard({
        causations,
        tools: this.tools,
        registry: this.registry,
        limit: ev.loopDepthLimit,
      }),
    })
    const parked = new ParkedInbox(db)
    const history = new EventHistory({ db, deliverer, parked })
    const recorder = new Recorder({
      places: this.registry.places,
      db,
      deliverer,
      agents: this.agents,
      log: opts.log,
      placements: this.placements,
      attributor: new EventAttributor({
        registry: this.registry,
        connections: this.connections,
        log: opts.log,
        sharedResults: opts.sharedResults,
        options: ev.attribution,
      }),
      owners: this.connections,
    })
    // Connections with triggers checked upstream; a lapse pauses them and tells their agents.
    const health = new ConnectionHealth({
      bus,
      repo: connectionRows,
      agents: agentRows,
      connections: this.connections,
      registry: this.registry,
      recorder,
      changes: this.changes,
      log: opts.log,
      everyMs: ev.connectionCheckMs,
      triggerLifecycle: this.notices,
    })
    // Long work (bulk enrichment, replays): its due jobs are looked for in the events' one sweep.
    this.jobs = new JobService({
      jobs: new LongJobs({ rows: new Jobs(db), queue: jobs, clock, log: opts.log }),
      steps: this.steps,
      deliverer,
      registry: this.registry,
      connections: this.connections,
      history,
    })
    this.events = new EventSystem({
      jobs,
      longJobs: this.jobs.jobs,
      health,
      triggers,
      deliverer,
      history,
      recorder,
      streams: new DeliveryStreams({
        history,
        changes: this.changes,
        onError: (err) => opts.log.error({ err }, 'reading an event stream failed'),
      }),
      ingress: new Ingress({
        db,
        registry: this.registry,
        triggers,
        connections: this.connections,
        jobs,
        recorder,
        parked,
        changes: this.changes,
        log: opts.log,
        deliverer,
        backlogLimit: ev.deliveryBacklogLimit ?? DEFAULT_DELIVERY_BACKLOG_LIMIT,
        // PostgreSQL commits in its own processes: the ingress stores the next group meanwhile.
        concurrentCommits: ev.concurrentCommits ?? (opts.store.kind === 'postgres' ? 3 : 1),
        sharedStore: opts.store.kind === 'postgres',
        heard: (connectionId) => health.heard(connectionId),
      }),
      poller: new Poller({
        triggers: triggerRows,
        registry: this.registry,
        connections: this.connections,
        agents: this.agents,
        recorder,
        jobs,
        clock,
        log: opts.log,
      }),
      sweeps:
        opts.sweeps ??
        new TimerSweeps({
          everyMs: ev.sweepIntervalMs ?? 1000,
          onError: (err) => {
            if (!opts.store.health.failure(err)) opts.log.error({ err }, 'looking for due work failed')
          },
          health: opts.store.health,
        }),
      leases: new Leases(db),
      reconcileIntervalMs: ev.reconcileIntervalMs,
      db,
      registry: this.registry,
      connections: this.connections,
      log: opts.log,
      address: this.address,
    })
    const connectSessions = new ConnectSessions(opts.store.db)
    const audit = new AuditTrail(opts.store.db)
    this.#mailer = opts.people?.mailer ?? null
    this.members = new Members({
      store: opts.store,
      memberships: this.memberships,
      keys: this.apiKeys,
      revocations: this.keyRevocations,
      changes: this.changes,
      audit,
      mailer: this.#mailer,
      address: this.address,
    })
    this.accounts = new Accounts({
      store: opts.store,
      members: this.members,
      changes: this.changes,
      audit,
      signup: opts.people?.signup ?? 'invite',
      sessionTtlMs: opts.people?.sessionTtlMs ?? 14 * 24 * 3600_000,
      mailer: this.#mailer,
      address: this.address,
      vault: opts.vault,
    })
    this.sso = opts.people?.sso
      ? new SingleSignOn({
          config: opts.people.sso,
          accounts: this.accounts,
          members: this.members,
          flows: new OAuthFlowRows(opts.store.db),
          vault: opts.vault,
          audit,
          address: this.address,
        })
      : null
    this.oauth = new OAuthFlows({
      registry: this.registry,
      connections: this.connections,
      clients: this.clients,
      vault: opts.vault,
      flows: new OAuthFlowRows(opts.store.db),
      sessions: connectSessions,
      apps: opts.oauth?.apps,
      webUrls: opts.oauth?.webUrls,
      address: this.address,
    })
    this.connectionBindings = new ConnectionBindings({
      connections: this.connections,
      agents: agentRows,
      tools: toolRows,
      triggerRows,
      triggers: this.events.triggers,
      disconnections,
      changes: this.changes,
    })
    this.endUsers = new EndUserService({
      rows: endUserRows,
      sessions: connectSessions,
      settings: endUserSettings,
      connections: this.connections,
      agents: this.agents,
      oauth: this.oauth,
      triggers: this.events.triggers,
      registry: this.registry,
      db: opts.store.db,
      address: this.address,
      audit,
      mcpGrants: this.mcpGrants,
    })
    this.stats = new Stats({
      db: opts.store.db,
      clock,
      log: opts.log,
      connector: (id) => this.registry.connector(id),
      defaultPacing: (connector) => this.clients.defaultPacing(connector),
      flushRuns: () => this.stepRuns.flush(),
      rollupEveryMs: opts.statsRollupEveryMs,
    })
    this.timelines = new Timelines({ db: opts.store.db, flushRuns: () => this.stepRuns.flush() })
    this.workspaceKeys = new WorkspaceKeyService({ keys: this.apiKeys, revocations: this.keyRevocations })
    this.workspaces = new WorkspaceService({
      repo: new Workspaces(opts.store.db, opts.store.kind),
      vault: opts.vault,
      keys: this.apiKeys,
      memberships: this.memberships,
      connections: this.connections,
      triggers: this.events.triggers,
      agents: this.agents,
      revocations: this.keyRevocations,
      changes: this.changes,
    })
  }

  async close(): Promise<void> {
    // Jobs under way are given back at once (resumed by the next instance to sweep).
    await this.jobs.jobs.stop()
    await this.stats.close()
    await this.events.stop()
    await this.notices.close()
    await this.changes.close()
    this.#mailer?.close()
    await this.#dispatcher.close()
    if (this.#pushDispatcher !== this.#dispatcher) await this.#pushDispatcher.close()
    // Step run records still queued are written before the store closes.
    await this.stepRuns.close()
    await this.store.close()
  }
}
