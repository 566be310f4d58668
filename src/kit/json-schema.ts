// A JSON Schema node as Patchbay's own code walks it (catalog schemas, step outputs, tool
// inputs): the keywords read, the rest kept as they are.
export interface JsonSchemaNode {
  type?: string | string[]
  properties?: Record<string, JsonSchemaNode>
  items?: JsonSchemaNode
  additionalProperties?: boolean | JsonSchemaNode
  anyOf?: JsonSchemaNode[]
  oneOf?: JsonSchemaNode[]
  [keyword: string]: unknown
}
