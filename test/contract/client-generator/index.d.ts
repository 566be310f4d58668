/**
 * TypeScript types of an OpenAPI document, as openapi-typescript writes them (`options` are
 * openapi-typescript's, such as `defaultNonNullable`).
 */
export function generateClientTypes(document: object, options?: Record<string, unknown>): Promise<string>
