// Shapes of what the API answers: the API contract's (src/sdk/contract.ts over src/sdk/api-schema.ts,
// generated from /openapi.json by npm run api:types, as the SDK's), with JSON Schemas read as the
// forms read them.
import type { Schemas } from '../../src/sdk/contract.ts'

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

/** The contract's JSON Schemas (open objects) as the forms read them. */
type WithSchemas<T, K extends keyof T> = Omit<T, K> & {
  [P in K]: null extends T[P] ? JsonSchema | null : JsonSchema
}

export type StepSummary = WithSchemas<Schemas['Step'], 'inputSchema' | 'outputSchema'>
export type TriggerSummary = WithSchemas<Schemas['Connector']['triggers'][number], 'configSchema'>
export type Connector = Omit<Schemas['Connector'], 'auth' | 'steps' | 'triggers'> & {
  auth: AuthMethod[]
  steps: StepSummary[]
  triggers: TriggerSummary[]
}
export type Connection = Schemas['Connection']
/** A field whose choices can be listed (GET /v1/steps/:id/options/:field). */
export type PickerSummary = Schemas['Picker']
export type Choice = Schemas['FieldChoices']['choices'][number]
export type Agent = Schemas['Agent']
export type AgentKey = Schemas['AgentKey']
/** An MCP client's OAuth access to one agent (GET /v1/mcp-grants). */
export type McpGrant = Schemas['McpGrant']
export type Trigger = Schemas['Trigger']
export type Diagnosis = Schemas['Diagnosis']
export type ToolStepSpec = Schemas['Tool']['steps'][number]
export type Tool = Schemas['Tool']
export type ToolRun = Schemas['ToolRun']
export type PatchbayEvent = Schemas['Event']
export type Attempt = Schemas['DeliveryAttempt']
export type Delivery = Schemas['Delivery']
/** Long work with its progress (GET /v1/jobs/{id}). */
export type Job = Schemas['Job']
export type DeliveryBacklog = Schemas['DeliveryBacklog']
/** One delivery as GET /v1/deliveries/{id} shows it: each attempt, and the payload. */
export type DeliveryDetail = Schemas['DeliveryWithAttempts']
