// Patchbay's SDK for agents (`import { PatchbayClient } from 'patchbay/sdk'`): a typed REST
// client, a retry helper for RATE_LIMITED, a verifier of signed deliveries and a consumer of
// the agent's event stream.
export {
  type ClientOptions,
  DEFAULT_URL,
  type DeliveryView,
  type FieldChoices,
  type FunctionFormat,
  PatchbayClient,
  type RunOptions,
  type StepResult,
  type StepRunMeta,
  type TriggerDiagnosis,
  type TriggerView,
} from './client.ts'
export { type ApiErrorBody, type ApiErrorCode, isRateLimited, PatchbayApiError } from './errors.ts'
export { followStream, parseSse, type SseEvent, type StreamedDelivery, type StreamOptions } from './events.ts'
export { type RetryOptions, rateLimitDelayMs, retryRateLimited } from './retry.ts'
export type { ConnectorId, StepId, StepInput, StepMap, StepOutput } from './steps.ts'
export { type DeliveryPayload, DeliveryVerificationError, verifyDelivery } from './webhooks.ts'
