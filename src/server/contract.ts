// The API contract's rule, checked as each route is added (so a route that breaks it fails every
// test and `npm start` at once, with this message):
//
//   every route is either out of the API (`schema: { hide: true }`: dashboard files, webhook
//   receivers, health) or in /openapi.json with an `operationId` (camelCase verb + noun, unique:
//   listEvents, getEvent, createTrigger …) and a response schema for its success status (Zod,
//   beside the route, or a shared one from schemas.ts, plus `...errorResponses`).
//
// Generated clients name their methods after the operationIds, so an operationId, once published,
// is not renamed. test/server/openapi-contract.test.ts lints the document and compiles a client.
import type { FastifyInstance, RouteOptions } from 'fastify'
import { jsonSchemaTransformObject } from 'fastify-type-provider-zod'

export function enforceContract(app: FastifyInstance): void {
  const seen = new Map<string, string>()
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = [route.method].flat()
    if (methods.every((m) => m === 'HEAD')) return
    const schema = route.schema as
      | { hide?: boolean; operationId?: string; response?: Record<string, unknown> }
      | undefined
    if (schema?.hide) return
    const where = `${methods.join(',')} ${route.url}`
    const problems: string[] = []
    const id = schema?.operationId
    if (!id || !/^[a-z][A-Za-z0-9]*$/.test(id))
      problems.push('schema.operationId (a camelCase name such as listEvents)')
    else if (seen.has(id) && seen.get(id) !== where)
      problems.push(`an operationId of its own (${id} is ${seen.get(id)}'s)`)
    const success = Object.keys(schema?.response ?? {}).filter((status) => /^2/.test(status))
    if (success.length === 0)
      problems.push('a response schema for its success status (schema.response[200] …)')
    if (problems.length > 0)
      throw new Error(
        `API contract: ${where} needs ${problems.join(' and ')}; or schema.hide: true if it is not part of the API. See src/server/contract.ts.`,
      )
    seen.set(id!, where)
  })
}

/**
 * The document's components as the Zod type provider makes them (schemas with a registry id),
 * less the ones no operation refers to (it adds an input twin of every output schema).
 */
export const transformObject: typeof jsonSchemaTransformObject = (input) => {
  const doc = jsonSchemaTransformObject(input) as { components?: { schemas?: Record<string, unknown> } }
  const schemas = doc.components?.schemas
  if (!schemas) return doc as ReturnType<typeof jsonSchemaTransformObject>
  for (let removed = true; removed; ) {
    removed = false
    for (const name of Object.keys(schemas)) {
      const { [name]: _own, ...others } = schemas
      const rest = JSON.stringify({ ...doc, components: { ...doc.components, schemas: others } })
      if (!rest.includes(`"#/components/schemas/${name}"`)) {
        delete schemas[name]
        removed = true
      }
    }
  }
  return doc as ReturnType<typeof jsonSchemaTransformObject>
}
