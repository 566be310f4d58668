// The API contract's shapes for the SDK (and the dashboard): the components and operations of
// /openapi.json as openapi-typescript writes them (api-schema.ts, written by npm run api:types).
import type { components, operations } from './api-schema.ts'

export type Schemas = components['schemas']

type Json<T> = T extends { content: { 'application/json': infer A } } ? A : never

/** What an operation takes as its JSON body (by its operationId). */
export type RequestBody<Op extends keyof operations> = Json<NonNullable<operations[Op]['requestBody']>>

/** What an operation answers on success (200 or 201), by its operationId. */
export type Answer<Op extends keyof operations> = Json<
  operations[Op]['responses'][Extract<keyof operations[Op]['responses'], 200 | 201>]
>

/** A code of the API's error registry (the table in docs/api.md). */
export type ErrorCode = Schemas['Error']['error']['code']
