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

export interface Database {
  workspaces: WorkspacesTable
  api_keys: ApiKeysTable
  connections: ConnectionsTable
  step_runs: StepRunsTable
  credit_ledger: CreditLedgerTable
  credit_budgets: CreditBudgetsTable
  connection_rate_limits: ConnectionRateLimitsTable
}
