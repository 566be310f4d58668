// The connectors of the tests that add one: every connector Patchbay ships, and the test-only
// ones. Adding a connector is its folder and one line here.
import { connectors } from '../../../src/connectors/index.ts'
import type { ConnectorDefinition } from '../../../src/kit/define.ts'
import { shelf } from './shelf/index.ts'

export const testConnectors: ConnectorDefinition[] = [...connectors, shelf]
