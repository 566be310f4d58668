// Every connector Patchbay ships. The engine derives its registry, the catalog, the schemas,
// the MCP tools and the dashboard's forms from this list.
import type { ConnectorDefinition } from '../kit/define.ts'
import { contactdata } from './contactdata/index.ts'
import { taskboard } from './taskboard/index.ts'

export const connectors: ConnectorDefinition[] = [taskboard, contactdata]
