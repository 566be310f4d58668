// A pushed delivery held against its one schema twice: the Zod schema the body is serialised from
// (engine/events/payload.ts; parsing must give back the body unchanged, so no field is missing,
// mistyped or extra) and the `delivery` webhook of the service's /openapi.json (what the SDK's
// types are generated from), with a JSON Schema validator of its own.
import assert from 'node:assert/strict'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { connectors as shipped } from '../../src/connectors/index.ts'
import { deliveryPayloadSchema } from '../../src/engine/events/payload.ts'
import type { ConnectorDefinition } from '../../src/kit/define.ts'

/** For the service at `serviceUrl`, running `connectors` (the shipped ones unless a test gives others). */
export async function deliveryPayloadChecker(
  serviceUrl: string,
  connectors: readonly ConnectorDefinition[] = shipped,
): Promise<(body: unknown) => void> {
  const schema = deliveryPayloadSchema(connectors)
  const doc = await (await fetch(`${serviceUrl}/openapi.json`)).json()
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true })
  ajv.addSchema({ $id: 'openapi.json', components: doc.components }, 'openapi.json')
  const ref = doc.webhooks.delivery.post.requestBody.content['application/json'].schema.$ref as string
  const validate = ajv.compile({ $ref: `openapi.json${ref}` })
  return (body) => {
    assert.deepEqual(schema.parse(body), body, 'the pushed body is the schema’s, field for field')
    assert.ok(validate(body), `not the /openapi.json delivery webhook: ${JSON.stringify(validate.errors)}`)
  }
}
