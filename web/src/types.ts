// Shapes of what the API answers, as far as the dashboard reads them.

export type JsonSchema = {
  type?: string | string[]
  properties?: Record<string, JsonSchema>
  required?: string[]
  items?: JsonSchema
  enum?: unknown[]
  const?: unknown
  anyOf?: JsonSchema[]
  oneOf?: JsonSchema[]
  default?: unknown
  description?: string
  title?: string
  format?: string
  minimum?: number
  maximum?: number
  minItems?: number
  maxItems?: number
  additionalProperties?: unknown
  [k: string]: unknown
}

export interface AuthMethod {
  id: string
  name: string
  description?: string
  credentialsSchema: JsonSchema | null
  /** OAuth methods may say which sign-in flows they support. */
  mode?: string
  modes?: string[]
  flow?: string
  kind?: string
  type?: string
  /** The method has an upstream page that issues a token (POST /v1/connectors/:id/token-url). */
  tokenPage?: boolean
  [k: string]: unknown
}

export interface StepSummary {
  id: string
  connector: string
  name: string
  description: string
  hints: { readOnly: boolean; destructive: boolean; idempotent: boolean }
  passThrough: boolean
  inputSchema: JsonSchema
  outputSchema: JsonSchema
  pickers?: PickerSummary[]
}

/** A field whose choices can be listed (GET /v1/steps/:id/options/:field). */
export interface PickerSummary {
  field: string
  noun: string
  parents: string[]
  many: boolean
  /** A parent that is no field of the form: it only narrows the choices. */
  helper: boolean
}

export interface Choice {
  value: string
  label: string
  detail?: string
}

export interface TriggerSummary {
  id: string
  name: string
  description: string
  instant: boolean
  configSchema: JsonSchema
  sample: unknown
  pickers?: PickerSummary[]
}

export interface Connector {
  id: string
  name: string
  description: string
  beta?: boolean
  auth: AuthMethod[]
  steps: StepSummary[]
  triggers: TriggerSummary[]
}

export interface Connection {
  id: string
  connector: string
  authMethod: string
  accountName: string
  accountId: string
  status: 'active' | 'lapsed'
  statusReason: string | null
  createdAt: string
  updatedAt: string
  /** What tells it apart from the account's other connections (a code-host token's kind and reach). */
  details?: Record<string, string>
}

export interface Agent {
  id: string
  name: string
  scope: { boards: string[]; repositories: string[] }
  connectionIds: string[]
  delivery: { type: 'webhook'; url: string } | { type: 'stream' }
  createdAt: string
  updatedAt: string
}

export interface AgentKey {
  id: string
  agentId: string
  name: string
  keyPrefix: string
  createdAt: string
  lastUsedAt: string | null
  revokedAt: string | null
}

export interface Trigger {
  id: string
  agentId: string
  trigger: string
  name: string
  instant: boolean
  connectionId: string
  config: Record<string, unknown>
  target: unknown
  webhook: {
    id: string
    model: string
    upstreamHookId: string | null
    status: string
    lastError: string | null
  } | null
  poll: {
    intervalMs: number
    lastPollAt: string | null
    nextPollAt: string | null
    lastError: string | null
  } | null
  createdAt: string
}

export interface Diagnosis {
  triggerId: string
  healthy: boolean
  checks: Array<{
    cause: string
    label?: string
    status: 'ok' | 'problem' | 'info'
    message: string
    fix?: string
  }>
}

export interface ToolStepSpec {
  name?: string
  stepId: string
  connectionId: string
  input: Record<string, unknown>
}

export interface Tool {
  id: string
  agentId: string
  name: string
  description: string
  steps: ToolStepSpec[]
  createdAt: string
  updatedAt: string
}

export interface ToolRun {
  id: string
  toolId: string
  status: 'running' | 'succeeded' | 'failed'
  steps: Array<{
    index: number
    name: string | null
    stepId: string
    connectionId: string
    status: 'succeeded' | 'failed' | 'skipped'
    output?: unknown
    error: { code: string; message: string } | null
  }>
  errorCode: string | null
  errorMessage: string | null
  createdAt: string
}

export interface PatchbayEvent {
  id: string
  seq: number
  connector: string
  type: string
  upstreamId: string
  connectionId: string | null
  model: string | null
  refs: Record<string, unknown>
  data: unknown
  matchedTriggers: number
  occurredAt: string
  receivedAt: string
}

export interface Delivery {
  id: string
  seq: number
  agentId: string
  eventId: string
  triggerId: string | null
  target: { type: string; url?: string; toolId?: string }
  status: 'pending' | 'delivered' | 'failed' | 'dead'
  attempts: number | Attempt[]
  nextAttemptAt: string | null
  lastStatus: number | null
  lastError: string | null
  toolRunId: string | null
  createdAt: string
  deliveredAt: string | null
}

export interface Attempt {
  [k: string]: unknown
}
