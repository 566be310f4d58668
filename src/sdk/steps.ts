// The typed step map, derived from the connectors' own Zod schemas: a connector added to
// src/connectors/index.ts appears here with no SDK code. Types only — nothing of the connectors
// is loaded at run time.
import type { z } from 'zod'
import type { connectors } from '../connectors/index.ts'

type Connector = (typeof connectors)[number]

type Entry<C> = C extends { id: infer Id extends string; steps: Array<infer S> }
  ? S extends {
      key: infer K extends string
      input: infer I extends z.ZodType
      output: infer O extends z.ZodType
    }
    ? { id: `${Id}.${K}`; input: z.input<I>; output: z.output<O> }
    : never
  : never

type Entries = Entry<Connector>

/** Every step id: `taskboard.create_card`, `contactdata.find_contact`, … */
export type StepId = Entries['id']

/** What a step takes, as the REST API accepts it (defaults may be left out). */
export type StepInput<Id extends StepId> = Extract<Entries, { id: Id }>['input']

/** What a step returns. */
export type StepOutput<Id extends StepId> = Extract<Entries, { id: Id }>['output']

/** Every step's input and output by id. */
export type StepMap = { [E in Entries as E['id']]: { input: E['input']; output: E['output'] } }

/** The connector ids. */
export type ConnectorId = Connector['id']
