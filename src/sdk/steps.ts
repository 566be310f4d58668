// The typed step map, from the API contract: each step's input and output types are generated from
// the catalog's JSON Schemas (step-types.ts, written by npm run api:types), so a connector's new
// step appears here with no SDK code and the SDK loads nothing of the service.
import type { ConnectorId, StepMap } from './step-types.ts'

export type { ConnectorId, StepMap }

/** Every step id: `taskboard.create_card`, `contactdata.find_contact`, … */
export type StepId = keyof StepMap & string

/** What a step takes, as the REST API accepts it (defaults may be left out). */
export type StepInput<Id extends StepId> = StepMap[Id]['input']

/** What a step returns. */
export type StepOutput<Id extends StepId> = StepMap[Id]['output']
