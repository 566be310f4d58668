// TypeScript types of an OpenAPI document, as openapi-typescript writes them.
import openapiTS, { astToString } from 'openapi-typescript'

export async function generateClientTypes(document, options = {}) {
  return astToString(await openapiTS(document, options))
}
