// Every connector Patchbay ships. The engine derives its registry, the catalog, the schemas,
// the MCP tools and the dashboard's forms from this list.
import type { ConnectorDefinition } from '../kit/define.ts'
import { codehost } from './codehost/index.ts'
import { contactdata } from './contactdata/index.ts'
import { http } from './http/index.ts'
import { taskboard } from './taskboard/index.ts'

// `satisfies` rather than a type annotation: the list keeps each connector's own type, from which
// the SDK derives its typed step map (sdk/steps.ts).
export const connectors = [taskboard, codehost, contactdata, http] satisfies ConnectorDefinition[]
