// The tables, as Kysely sees them. Times are ISO-8601 text and booleans integers, so one set of
// queries and migrations serves SQLite and PostgreSQL alike.
import type { Generated } from 'kysely'

export interface WorkspacesTable {
  id: string
  name: string
  created_at: string
  /** Migration 0010. */
  updated_at: string | null
  /** JSON document of the workspace's settings (migration 0010). */
  settings: Generated<string>
}

/** The four roles, strongest first (migration 0010). */
export type Role = 'owner' | 'admin' | 'member' | 'viewer'

export interface PeopleTable {
  id: string
  email: string
  name: string
  password_hash: string | null
  email_verified: Generated<number>
  created_at: string
  updated_at: string
}

export interface MembershipsTable {
  workspace_id: string
  person_id: string
  role: Role
  created_at: string
  updated_at: string
}

export interface PersonSessionsTable {
  id: string
  person_id: string
  token_hash: string
  created_at: string
  last_seen_at: string
  expires_at: string
  ended_at: string | null
  address: string | null
  user_agent: string | null
  method: 'password' | 'sso' | 'invitation'
}

export interface InvitationsTable {
  id: string
  workspace_id: string
  email: string
  role: Role
  token_hash: string
  invited_by: string
  created_at: string
  expires_at: string
  accepted_at: string | null
  accepted_by: string | null
  revoked_at: string | null
}

export interface IdentitiesTable {
  issuer: string
  subject: string
  person_id: string
  created_at: string
}

/** Failed sign-ins in the current window, per account or address (migration 0012). */
export interface SignInAttemptsTable {
  /** `account:<email>` or `address:<ip>`. */
  key: string
  window_started_at: string
  failures: number
}

export interface AuditLogTable {
  id: string
  workspace_id: string | null
  actor_kind: 'person' | 'key' | 'anonymous' | 'system'
  actor_id: string | null
  actor_label: string | null
  action: string
  object_kind: string | null
  object_id: string | null
  outcome: 'ok' | 'refused'
  detail: string | null
  address: string | null
  user_agent: string | null
  created_at: string
}

export interface ApiKeysTable {
  id: string
  workspace_id: string
  /** `workspace` (with a role; `admin` before migration 0011) or `agent` (acts as its agent). */
  kind: 'workspace' | 'agent'
  agent_id: string | null
  name: string
  key_prefix: string
  key_hash: string
  created_at: string
  last_used_at: string | null
  revoked_at: string | null
  /** A workspace key's role (migration 0010); null for agent keys. */
  role: Role | null
  /** The person who made it; null for the first-start key and keys made with a key. */
  created_by: string | null
  expires_at: string | null
}

export interface ConnectionsTable {
  id: string
  workspace_id: string
  connector: string
  auth_method: string
  account_name: string
  account_id: string
  status: 'active' | 'lapsed'
  status_reason: string | null
  /** Vault ciphertext of the credentials. */
  secret: string
  created_at: string
  updated_at: string
  /** When it lapsed (migration 0011); null while active. */
  lapsed_at: string | null
  /** When a step, poll or check last proved the credentials good (migration 0011). */
  alive_at: string | null
  /** When it is next checked upstream; moving it forward is the claim on the check (migration 0011). */
  next_check_at: string | null
  /** The last check upstream, and why it could not be made (migration 0011). */
  checked_at: string | null
  check_error: string | null
  /** The end user who made it (migration 0014); null: the workspace's own. */
  end_user_id: string | null
}

export interface StepRunsTable {
  id: string
  workspace_id: string
  step_id: string
  connection_id: string | null
  caller_key_id: string
  status: 'succeeded' | 'failed'
  error_code: string | null
  duration_ms: number
  attempts: number
  created_at: string
  /** Upstream answers 429 the run met (migration 0013). */
  rate_limited: number
  /** JSON: the run's upstream requests, kit/http.ts' UpstreamRequestRecord[] (migration 0013). */
  requests: string | null
}

/** What a metered upstream charged one step run for one request (migration 0003). */
export interface CreditLedgerTable {
  id: string
  workspace_id: string
  connection_id: string
  connector: string
  /** The calling agent; null for workspace (admin) keys. */
  agent_id: string | null
  caller_key_id: string
  step_id: string
  run_id: string
  credits: number
  /** The account's balance the upstream reported after the request. */
  remaining: number | null
  created_at: string
}

export interface CreditBudgetsTable {
  workspace_id: string
  agent_id: string
  credit_limit: number
  period: 'total' | 'month' | 'day'
  created_at: string
  updated_at: string
}

export interface ConnectionRateLimitsTable {
  connection_id: string
  workspace_id: string
  requests: number
  per_ms: number
  updated_at: string
}

export interface SubscriptionsTable {
  /** Also the hook id in the callback address /hooks/:connector/:id. */
  id: string
  workspace_id: string
  connector: string
  connection_id: string
  /** The upstream model watched: a board id, a repository `owner/repo`, the account. */
  model: string
  upstream_hook_id: string | null
  /** Vault ciphertext of the secret given to the upstream at registration. */
  secret: string
  /** `missing`: the upstream removed it with the credentials that made it (connection lapsed). */
  status: 'active' | 'error' | 'missing'
  last_error: string | null
  created_at: string
  updated_at: string
  /**
   * Grows with every change of the triggers listening on this webhook, in the transaction that
   * makes it (migration 0022; PostgreSQL: a row trigger on triggers). SQLite: always 0.
   */
  listeners_version: Generated<number>
}

export interface TriggersTable {
  id: string
  workspace_id: string
  agent_id: string
  /** Catalog id: `taskboard.card_moved`. */
  trigger_key: string
  connection_id: string
  config: string
  /** JSON: {"type":"agent"} or {"type":"tool","toolId"}. */
  target: string
  subscription_id: string | null
  poll_interval_ms: number | null
  poll_cursor: string | null
  last_poll_at: string | null
  next_poll_at: string | null
  last_poll_error: string | null
  created_at: string
  updated_at: string
  /** Paused (its connection lapsed): since when and why; null while it runs (migration 0011). */
  paused_at: string | null
  paused_reason: string | null
}

export interface InboxTable {
  seq: Generated<number>
  subscription_id: string
  delivery_id: string
  headers: string
  body: string
  status: 'pending' | 'done' | 'failed'
  error: string | null
  received_at: string
  /** Times processing it failed (migration 0006); set aside as `failed` after a few. */
  attempts: Generated<number>
}

/** A named lease: periodic work one instance at a time does (migration 0007). */
export interface LeasesTable {
  name: string
  holder: string
  expires_at: string
}

/** A change a tool run's step made upstream, with its causation depth (migration 0006). */
export interface CausationsTable {
  workspace_id: string
  connector: string
  /** The upstream id of what the step made or changed (a card id, an action id). */
  upstream_ref: string
  depth: number
  expires_at: string
}

export interface EventsTable {
  seq: Generated<number>
  id: string
  workspace_id: string
  connector: string
  subscription_id: string
  connection_id: string
  model: string
  upstream_id: string
  type: string
  refs: string
  data: string
  occurred_at: string
  received_at: string
  /** How many triggers it matched. */
  matched: number
  /** JSON: the other connections it came through, when several heard it (migration 0011). */
  via?: string | null
  /**
   * Whose it is: the end user of the connection it came through, '' for the workspace's own
   * (migration 0015). Part of its identity: one row per (workspace, connector, owner, upstream id).
   */
  owner: string
  /**
   * 1 once the row is in the workspace index (migration 0018): SQLite stores rows unlisted (0) and
   * lists them in batches (store/sqlite-listing.ts); PostgreSQL stores them listed.
   */
  listed: Generated<number>
}

export interface DeliveriesTable {
  seq: Generated<number>
  id: string
  workspace_id: string
  agent_id: string
  event_id: string
  trigger_id: string
  /** JSON: {"type":"webhook","url"} | {"type":"stream"} | {"type":"tool","toolId"}. */
  target: string
  status: 'pending' | 'delivered' | 'failed' | 'dead'
  attempts: number
  next_attempt_at: string | null
  last_status: number | null
  last_error: string | null
  tool_run_id: string | null
  created_at: string
  delivered_at: string | null
  /** While an instance holds this delivery (its lease); null when nobody does. */
  claimed_until: string | null
  /** As EventsTable.listed (migration 0018). */
  listed: Generated<number>
}

export interface DeliveryAttemptsTable {
  delivery_id: string
  attempt: number
  at: string
  status: number | null
  error: string | null
  duration_ms: number
  /** Its delivery's workspace (migration 0020; null only for an attempt whose delivery was gone then). */
  workspace_id: string | null
  /** As EventsTable.listed (migration 0020). */
  listed: Generated<number>
}

/** An agent: its scope, the connections it may use and where its events go (migration 0002). */
export interface AgentsTable {
  id: string
  workspace_id: string
  name: string
  /** JSON: { boards: string[], repositories: string[] }. */
  scope: string
  /** JSON: string[] of connection ids. */
  connection_ids: string
  /** JSON: { type: 'webhook', url } or { type: 'stream' }. */
  delivery: string
  /** Vault ciphertext of the Standard Webhooks signing secret (whsec_…). */
  signing_secret: string
  /** JSON: { steps?, tools?, discovery } (migration 0014); null: every step and tool, listed. */
  tool_selection: string | null
  created_at: string
  updated_at: string
  /** JSON: connections it used that were disconnected, until one is given again (migration 0011). */
  connections_needed: string
  /** Vault ciphertext of the secret before the last rotation, valid until the expiry (migration 0011). */
  previous_signing_secret: string | null
  previous_secret_expires_at: string | null
  /** The end user it acts for (migration 0014): it uses only their connections. */
  end_user_id: string | null
}

/**
 * The connections an agent names, a row each (migration 0026): the agents that use a connection are
 * found by index. The agent's `connection_ids` stays what its connections are, in their order;
 * these rows are written with it (store/agents.ts), in the same transaction.
 */
export interface AgentConnectionsTable {
  agent_id: string
  connection_id: string
  workspace_id: string
}

/** An agent's tool: an ordered chain of tool steps with templated inputs (migration 0002). */
export interface ToolsTable {
  id: string
  workspace_id: string
  agent_id: string
  name: string
  description: string
  /** JSON: [{ name?, stepId, connectionId, input }]. */
  steps: string
  /** JSON: the declared inputs, { name: { type?, description?, required? } }; null when none are. */
  inputs: string | null
  created_at: string
  updated_at: string
}

/**
 * The connections a tool's steps run through, a row each (migration 0027): the tools that use a
 * connection are found by index. Written with the tool's steps (store/tools.ts), in one transaction.
 */
export interface ToolConnectionsTable {
  tool_id: string
  connection_id: string
  workspace_id: string
}

/** One run of a tool: what each step did (migration 0002). */
export interface ToolRunsTable {
  id: string
  workspace_id: string
  agent_id: string
  tool_id: string
  trigger_id: string | null
  event_id: string | null
  status: 'running' | 'succeeded' | 'failed'
  /** JSON: the tool's input. */
  input: string
  /** JSON: one record per step (status, output, error). */
  steps: string
  error_code: string | null
  error_message: string | null
  created_at: string
  finished_at: string | null
}

export interface Database {
  workspaces: WorkspacesTable
  api_keys: ApiKeysTable
  people: PeopleTable
  memberships: MembershipsTable
  person_sessions: PersonSessionsTable
  invitations: InvitationsTable
  identities: IdentitiesTable
  audit_log: AuditLogTable
  sign_in_attempts: SignInAttemptsTable
  connections: ConnectionsTable
  step_runs: StepRunsTable
  credit_ledger: CreditLedgerTable
  credit_budgets: CreditBudgetsTable
  connection_rate_limits: ConnectionRateLimitsTable
  agents: AgentsTable
  agent_connections: AgentConnectionsTable
  tools: ToolsTable
  tool_connections: ToolConnectionsTable
  tool_runs: ToolRunsTable
  subscriptions: SubscriptionsTable
  triggers: TriggersTable
  inbox: InboxTable
  causations: CausationsTable
  leases: LeasesTable
  events: EventsTable
  deliveries: DeliveriesTable
  delivery_attempts: DeliveryAttemptsTable
  oauth_flows: OAuthFlowsTable
  credit_holds: CreditHoldsTable
  disconnections: DisconnectionsTable
  end_users: EndUsersTable
  connect_sessions: ConnectSessionsTable
  operator_notices: OperatorNoticesTable
  stat_hours: StatHoursTable
  stat_rollups: StatRollupsTable
  oauth_provider_records: OAuthProviderRecordsTable
  oauth_provider_keys: OAuthProviderKeysTable
  jobs: JobsTable
  mcp_grants: McpGrantsTable
}

/** A record of the OAuth authorization server (migration 0015): keyed by sha256(model:id), payload sealed. */
export interface OAuthProviderRecordsTable {
  key: string
  model: string
  payload: string
  grant_id: string | null
  uid_hash: string | null
  expires_at: string | null
  consumed_at: string | null
}

/** The authorization server's keys (signing JWKS, cookie keys), sealed (migration 0015). */
export interface OAuthProviderKeysTable {
  name: string
  sealed: string
  created_at: string
}

/** An MCP client's OAuth access to one agent, given by a person (migration 0015). */
export interface McpGrantsTable {
  id: string
  workspace_id: string
  agent_id: string
  end_user_id: string | null
  /** The person who granted it; null when an end user did, through a connect session (migration 0016). */
  person_id: string | null
  client_id: string
  client_name: string | null
  resource: string
  scope: string
  created_at: string
  last_used_at: string | null
  revoked_at: string | null
  revoked_by: string | null
  /** The connect session an end user granted it through (migration 0016); null: a person did. */
  connect_session_id: string | null
}

/** A disconnected connection and what used it, for restoring on reconnect (migration 0011). */
export interface DisconnectionsTable {
  id: string
  workspace_id: string
  connector: string
  auth_method: string
  account_id: string
  account_name: string
  /** Whose connection it was: an end user's id, or null for the workspace's own (migration 0024). */
  end_user_id: string | null
  bindings: string
  disconnected_at: string
  restored_to: string | null
  restored_at: string | null
}

/** The operator's own customers, by the operator's id (migration 0014). */
export interface EndUsersTable {
  workspace_id: string
  id: string
  display_name: string | null
  email: string | null
  created_at: string
  updated_at: string
}

/** A single-use connect link for one end user (migration 0014). */
export interface ConnectSessionsTable {
  id: string
  token_hash: string
  workspace_id: string
  end_user_id: string
  connectors: string | null
  auth_methods: string | null
  return_to: string | null
  created_at: string
  expires_at: string
  used_at: string | null
  connection_id: string | null
  /** 1: the end user may spend it on an MCP grant on the consent page (migration 0016). */
  allow_mcp_grant: number
}

/** A lifecycle notice to the workspace's notification URL (migration 0014). */
export interface OperatorNoticesTable {
  id: string
  workspace_id: string
  type: string
  payload: string
  status: 'pending' | 'delivered' | 'failed'
  attempts: number
  next_attempt_at: string | null
  last_status: number | null
  last_error: string | null
  created_at: string
  delivered_at: string | null
}

/** A series' count (or sum) for one hour and key, rolled up from the records (migration 0013). */
export interface StatHoursTable {
  workspace_id: string
  series: string
  /** The hour: `YYYY-MM-DDTHH`. */
  hour: string
  key: string
  n: number
  v: Generated<number>
  hist: string | null
}

export interface StatRollupsTable {
  workspace_id: string
  /** Hours before this one (`YYYY-MM-DDTHH`) are in stat_hours. */
  rolled_until: string
}

export interface OAuthFlowsTable {
  state: string
  connector: string
  /** Sealed JSON: what the callback needs (request-token secret, verifier, return address …). */
  data: string
  expires_at: string
}

export interface CreditHoldsTable {
  id: string
  workspace_id: string
  agent_id: string
  amount: number
  expires_at: string
}

/** A long piece of work with its progress (migration 0015): engine/jobs/long-jobs.ts. */
export interface JobsTable {
  id: string
  workspace_id: string
  kind: string
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled'
  /** JSON: the Caller that started it (ids and a role). */
  caller: string
  /** JSON: the kind's input. */
  input: string
  done: number
  total: number
  errors: number
  /** JSON: the kind's result so far. */
  result: string | null
  /** JSON { code, message }. */
  error: string | null
  cancel_requested: number
  holder: string | null
  lease_until: string | null
  created_at: string
  started_at: string | null
  finished_at: string | null
}
