// The tables, as Kysely sees them. Times are ISO-8601 text and booleans integers, so one set of
// queries and migrations serves SQLite and PostgreSQL alike.
export interface WorkspacesTable {
  id: string
  name: string
  created_at: string
}

export interface ApiKeysTable {
  id: string
  workspace_id: string
  kind: 'admin' | 'agent'
  agent_id: string | null
  name: string
  key_prefix: string
  key_hash: string
  created_at: string
  last_used_at: string | null
  revoked_at: string | null
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
  created_at: string
  updated_at: string
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
  created_at: string
  updated_at: string
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
  connections: ConnectionsTable
  step_runs: StepRunsTable
  credit_ledger: CreditLedgerTable
  credit_budgets: CreditBudgetsTable
  connection_rate_limits: ConnectionRateLimitsTable
  agents: AgentsTable
  tools: ToolsTable
  tool_runs: ToolRunsTable
}
