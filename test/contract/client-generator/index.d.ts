/** TypeScript types of an OpenAPI document, as openapi-typescript writes them. */
export function generateClientTypes(document: object): Promise<string>
