// POST /graphql: validate the document against the schema slice, then execute it. Errors come
// back as 200 with `errors[]` (validation errors without `data`), as upstream.
import type { FastifyInstance } from 'fastify'
import { hasAnyScope, principalOf } from './auth.ts'
import { type Ctx, DOCS } from './context.ts'
import {
  type DocumentNode,
  type FieldNode,
  GraphQLSyntaxError,
  type Loc,
  type OperationNode,
  parse,
  type Selection,
  type Value,
} from './graphql-parser.ts'
import { type Exec, GqlError, TYPES } from './graphql-schema.ts'
import { body, sendError } from './http.ts'
import type { Limits } from './ratelimit.ts'

interface ErrorEntry {
  message: string
  locations?: Loc[]
  path?: (string | number)[]
  type?: string
  extensions?: Record<string, unknown>
}

const baseName = (t: string) => t.replace(/[[\]!]/g, '')
const isList = (t: string) => t.replace(/!$/, '').startsWith('[')
const listInner = (t: string) => t.replace(/!$/, '').slice(1, -1)
const kindOf = (name: string) => TYPES[name]?.kind ?? 'scalar'
const composite = (name: string) => ['object', 'interface', 'union'].includes(kindOf(name))

function fragmentApplies(cond: string | null, runtime: string): boolean {
  if (!cond || cond === runtime) return true
  return TYPES[cond]?.possible?.includes(runtime) ?? false
}

class Validator {
  errors: ErrorEntry[] = []
  #doc: DocumentNode
  #op: OperationNode

  constructor(doc: DocumentNode, op: OperationNode) {
    this.#doc = doc
    this.#op = op
  }

  run(root: string): void {
    this.#selections(root, this.#op.selections, [this.#op.operation], new Set())
  }

  #value(v: Value, field: FieldNode): void {
    if (v.kind === 'Variable' && !this.#op.variables.some((d) => d.name === v.name))
      this.errors.push({
        message: `Variable $${v.name} is used by ${this.#op.name ?? 'anonymous ' + this.#op.operation} but not declared`,
        locations: [field.loc],
        path: [this.#op.operation],
        extensions: { code: 'variableNotDefined', variableName: v.name },
      })
    if (v.kind === 'List') for (const x of v.values) this.#value(x, field)
    if (v.kind === 'Object') for (const x of Object.values(v.fields)) this.#value(x, field)
  }

  #selections(typeName: string, sels: Selection[], path: string[], seen: Set<string>): void {
    const t = TYPES[typeName]
    for (const s of sels) {
      if (s.kind === 'InlineFragment') {
        const cond = s.typeCondition ?? typeName
        if (!TYPES[cond]) {
          this.errors.push({
            message: `No such type ${cond}, so it can't be a fragment condition`,
            locations: [s.loc],
            path,
            extensions: { code: 'undefinedType', typeName: cond },
          })
          continue
        }
        this.#selections(cond, s.selections, [...path, `... on ${cond}`], seen)
        continue
      }
      if (s.kind === 'FragmentSpread') {
        const frag = this.#doc.fragments.get(s.name)
        if (!frag) {
          this.errors.push({
            message: `Fragment ${s.name} was used, but not defined`,
            locations: [s.loc],
            path,
            extensions: { code: 'useAndDefineFragment', fragmentName: s.name },
          })
          continue
        }
        if (seen.has(s.name)) continue
        this.#selections(
          frag.typeCondition,
          frag.selections,
          [...path, `... ${s.name}`],
          new Set([...seen, s.name]),
        )
        continue
      }
      const here = [...path, s.alias ?? s.name]
      for (const v of Object.values(s.args)) this.#value(v, s)
      if (s.name === '__typename') continue
      const def = t?.fields?.[s.name]
      if (!def) {
        this.errors.push({
          message: `Field '${s.name}' doesn't exist on type '${typeName}'`,
          locations: [s.loc],
          path: here,
          extensions: { code: 'undefinedField', typeName, fieldName: s.name },
        })
        continue
      }
      const declared = def.args ?? {}
      for (const a of Object.keys(s.args))
        if (!(a in declared))
          this.errors.push({
            message: `Field '${s.name}' doesn't accept argument '${a}'`,
            locations: [s.loc],
            path: [...here, a],
            extensions: { code: 'argumentNotAccepted', name: s.name, typeName: 'Field', argumentName: a },
          })
      const missing = Object.entries(declared)
        .filter(([a, ty]) => ty.endsWith('!') && !(a in s.args))
        .map(([a]) => a)
      if (missing.length)
        this.errors.push({
          message: `Field '${s.name}' is missing required arguments: ${missing.join(', ')}`,
          locations: [s.loc],
          path: here,
          extensions: {
            code: 'missingRequiredArguments',
            className: 'Field',
            name: s.name,
            arguments: missing.join(', '),
          },
        })
      const named = baseName(def.type)
      if (composite(named) && !s.selections)
        this.errors.push({
          message: `Field must have selections (field '${s.name}' returns ${named} but has no selections. Did you mean '${s.name} { ... }'?)`,
          locations: [s.loc],
          path: here,
          extensions: { code: 'selectionMismatch', nodeName: `field '${s.name}'`, typeName: named },
        })
      else if (!composite(named) && s.selections)
        this.errors.push({
          message: `Selections can't be made on scalars (field '${s.name}' returns ${named} but has selections [${s.selections.map((x) => (x.kind === 'Field' ? x.name : '...')).join(', ')}])`,
          locations: [s.loc],
          path: here,
          extensions: { code: 'selectionMismatch', nodeName: `field '${s.name}'`, typeName: named },
        })
      else if (s.selections) this.#selections(named, s.selections, here, seen)
    }
  }
}

class Executor {
  errors: ErrorEntry[] = []
  #doc: DocumentNode
  #vars: Record<string, unknown>
  #ex: Exec

  constructor(doc: DocumentNode, vars: Record<string, unknown>, ex: Exec) {
    this.#doc = doc
    this.#vars = vars
    this.#ex = ex
  }

  #arg(v: Value): unknown {
    switch (v.kind) {
      case 'Variable':
        return this.#vars[v.name] ?? null
      case 'Null':
        return null
      case 'List':
        return v.values.map((x) => this.#arg(x))
      case 'Object':
        return Object.fromEntries(Object.entries(v.fields).map(([k, x]) => [k, this.#arg(x)]))
      case 'Enum':
        return v.value
      default:
        return v.value
    }
  }

  #included(directives: { name: string; args: Record<string, Value> }[]): boolean {
    for (const d of directives) {
      const cond = d.args.if ? this.#arg(d.args.if) : undefined
      if (d.name === 'skip' && cond === true) return false
      if (d.name === 'include' && cond === false) return false
    }
    return true
  }

  #collect(
    runtime: string,
    sels: Selection[],
    out = new Map<string, FieldNode[]>(),
  ): Map<string, FieldNode[]> {
    for (const s of sels) {
      if (!this.#included(s.directives)) continue
      if (s.kind === 'Field') {
        const key = s.alias ?? s.name
        out.set(key, [...(out.get(key) ?? []), s])
      } else if (s.kind === 'InlineFragment') {
        if (fragmentApplies(s.typeCondition, runtime)) this.#collect(runtime, s.selections, out)
      } else {
        const frag = this.#doc.fragments.get(s.name)
        if (frag && fragmentApplies(frag.typeCondition, runtime)) this.#collect(runtime, frag.selections, out)
      }
    }
    return out
  }

  object(
    typeName: string,
    value: any,
    sels: Selection[],
    path: (string | number)[],
  ): Record<string, unknown> {
    const runtime = kindOf(typeName) === 'object' ? typeName : (value.__typename as string)
    const out: Record<string, unknown> = {}
    for (const [key, nodes] of this.#collect(runtime, sels)) {
      const field = nodes[0]
      if (field.name === '__typename') {
        out[key] = runtime
        continue
      }
      const def = TYPES[runtime]?.fields?.[field.name]
      if (!def) {
        out[key] = null
        continue
      }
      const args = Object.fromEntries(Object.entries(field.args).map(([k, v]) => [k, this.#arg(v)]))
      const here = [...path, key]
      try {
        const t = this.#ex.principal.token
        if (def.scopes && t && t.kind !== 'fine_grained' && !hasAnyScope(t, def.scopes))
          throw new GqlError(
            'INSUFFICIENT_SCOPES',
            `Your token has not been granted the required scopes to execute this query. The '${field.name}' field requires one of the following scopes: ['${def.scopes[0]}'], but your token has only been granted the: [${t.scopes.map((s) => `'${s}'`).join(', ')}] scopes. Please modify your token's scopes at: https://codehost.local/settings/tokens.`,
          )
        const raw = def.resolve ? def.resolve(value, args, this.#ex) : value[field.name]
        const sub = nodes.flatMap((n) => n.selections ?? [])
        out[key] = this.#complete(def.type, raw, sub, here)
      } catch (err) {
        if (!(err instanceof GqlError)) throw err
        this.errors.push({
          ...(err.type ? { type: err.type } : {}),
          path: here,
          locations: [field.loc],
          message: err.message,
        })
        out[key] = null
      }
    }
    return out
  }

  #complete(type: string, raw: unknown, sels: Selection[], path: (string | number)[]): unknown {
    if (raw === null || raw === undefined) return null
    if (isList(type))
      return (raw as unknown[]).map((v, i) => this.#complete(listInner(type), v, sels, [...path, i]))
    const named = baseName(type)
    if (!composite(named)) return raw
    return this.object(named, raw, sels, path)
  }
}

function pickOperation(doc: DocumentNode, name: unknown): OperationNode | string {
  if (typeof name === 'string' && name) {
    const op = doc.operations.find((o) => o.name === name)
    return op ?? `No operation named "${name}"`
  }
  if (doc.operations.length === 1) return doc.operations[0]
  if (doc.operations.length === 0) return 'No operations in query document'
  return 'An operation name is required'
}

export function registerGraphql(api: FastifyInstance, ctx: Ctx, limits: Limits): void {
  api.post('/graphql', async (req, reply) => {
    const principal = principalOf(req)
    if (!principal.user)
      return sendError(
        reply,
        401,
        'This endpoint requires you to be authenticated.',
        undefined,
        `${DOCS.replace('/rest', '/graphql')}/guides/forming-calls-with-graphql#authenticating-with-graphql`,
      )
    const b = body(req)
    if (typeof b.query !== 'string')
      return { errors: [{ message: 'A query attribute must be specified and must be a string.' }] }
    let doc: DocumentNode
    try {
      doc = parse(b.query)
    } catch (err) {
      if (err instanceof GraphQLSyntaxError)
        return { errors: [{ message: err.message, locations: [err.loc] }] }
      throw err
    }
    const op = pickOperation(doc, b.operationName)
    if (typeof op === 'string') return { errors: [{ message: op }] }
    if (op.operation === 'subscription') return { errors: [{ message: 'Subscriptions are not supported' }] }
    const root = op.operation === 'mutation' ? 'Mutation' : 'Query'
    const validator = new Validator(doc, op)
    validator.run(root)
    if (validator.errors.length) return { errors: validator.errors }

    const given = (b.variables && typeof b.variables === 'object' ? b.variables : {}) as Record<
      string,
      unknown
    >
    const vars: Record<string, unknown> = {}
    for (const d of op.variables) {
      const v = given[d.name] ?? (d.defaultValue ? literal(d.defaultValue) : undefined)
      if ((v === undefined || v === null) && d.type.endsWith('!'))
        return {
          errors: [
            {
              message: `Variable $${d.name} of type ${d.type} was provided invalid value`,
              locations: [op.loc],
              extensions: {
                value: null,
                problems: [{ path: [], explanation: 'Expected value to not be null' }],
              },
            },
          ],
        }
      vars[d.name] = v ?? null
    }
    const key = principal.token ? `token:${principal.token.id}` : `ip:${req.ip}`
    const st = limits.graphql.peek(key)
    const ex = {
      ctx,
      principal,
      user: principal.user,
      rate: {
        limit: st.limit,
        cost: 1,
        remaining: st.remaining,
        resetAt: new Date(st.resetAt).toISOString(),
        used: st.used,
        nodeCount: 1,
      },
    }
    const executor = new Executor(doc, vars, ex)
    const data = executor.object(root, {}, op.selections, [])
    return executor.errors.length ? { data, errors: executor.errors } : { data }
  })
}

function literal(v: Value): unknown {
  switch (v.kind) {
    case 'Null':
      return null
    case 'List':
      return v.values.map(literal)
    case 'Object':
      return Object.fromEntries(Object.entries(v.fields).map(([k, x]) => [k, literal(x)]))
    case 'Variable':
      return null
    default:
      return v.value
  }
}
