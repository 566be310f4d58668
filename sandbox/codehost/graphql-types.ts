// Building blocks of the GraphQL schema slice: type and field definitions, errors, object
// wrappers (each carries its __typename) and cursor connections.
import type { Principal } from './auth.ts'
import { ApiError, type Ctx } from './context.ts'
import type { Issue, ProjectField, ProjectItem, ProjectV2, Repo, User } from './store.ts'

export class GqlError extends Error {
  type: string | undefined
  constructor(type: string | undefined, message: string) {
    super(message)
    this.type = type
  }
}

export interface Exec {
  ctx: Ctx
  principal: Principal
  user: User
}

export interface FieldDef {
  type: string
  args?: Record<string, string>
  /** Classic/OAuth tokens need one of these scopes. */
  scopes?: string[]
  resolve?: (parent: any, args: Record<string, any>, ex: Exec) => unknown
}

export interface TypeDef {
  kind: 'object' | 'interface' | 'union' | 'scalar' | 'enum'
  fields?: Record<string, FieldDef>
  possible?: string[]
}

export const nf = (what: string) => new GqlError('NOT_FOUND', what)

export function cursor(i: number): string {
  return Buffer.from(`cursor:${i}`).toString('base64')
}

/** A connection over `items` honouring first/last/after/before. */
export function connection<T>(items: T[], args: Record<string, any>, wrap: (x: T) => unknown) {
  if (args.first !== undefined && args.first !== null && (args.first < 0 || args.first > 100))
    throw new GqlError(
      'EXCESSIVE_PAGINATION',
      `Requesting ${args.first} records on the connection exceeds the \`first\` limit of 100 records.`,
    )
  let start = 0
  let end = items.length
  if (typeof args.after === 'string')
    start = Math.max(0, Number(Buffer.from(args.after, 'base64').toString().split(':')[1] ?? 0))
  if (typeof args.before === 'string')
    end = Math.min(end, Number(Buffer.from(args.before, 'base64').toString().split(':')[1] ?? end) - 1)
  if (typeof args.first === 'number') end = Math.min(end, start + args.first)
  if (typeof args.last === 'number') start = Math.max(start, end - args.last)
  const slice = items.slice(start, end)
  return {
    __typename: 'Connection',
    totalCount: items.length,
    nodes: slice.map(wrap),
    edges: slice.map((x, i) => ({ __typename: 'Edge', cursor: cursor(start + i + 1), node: wrap(x) })),
    pageInfo: {
      __typename: 'PageInfo',
      hasNextPage: end < items.length,
      hasPreviousPage: start > 0,
      startCursor: slice.length ? cursor(start + 1) : null,
      endCursor: slice.length ? cursor(end) : null,
    },
  }
}

export const userObj = (u: User) => ({ __typename: u.type === 'User' ? 'User' : 'Organization', u })
export const repoObj = (r: Repo) => ({ __typename: 'Repository', r })
export const issueObj = (r: Repo, i: Issue) => ({ __typename: i.pull ? 'PullRequest' : 'Issue', r, i })
export const projectObj = (p: ProjectV2) => ({ __typename: 'ProjectV2', p })
export const fieldObj = (p: ProjectV2, f: ProjectField) => ({
  __typename: f.dataType === 'SINGLE_SELECT' ? 'ProjectV2SingleSelectField' : 'ProjectV2Field',
  p,
  f,
})
export const itemObj = (p: ProjectV2, it: ProjectItem) => ({ __typename: 'ProjectV2Item', p, it })

export const connectionOf = (node: string): TypeDef => ({
  kind: 'object',
  fields: {
    totalCount: { type: 'Int!' },
    nodes: { type: `[${node}]` },
    edges: { type: `[${node}Edge]` },
    pageInfo: { type: 'PageInfo!' },
  },
})
export const edgeOf = (node: string): TypeDef => ({
  kind: 'object',
  fields: { cursor: { type: 'String!' }, node: { type: node } },
})

export function input(args: Record<string, any>, field: string, keys: string[]): Record<string, any> {
  const inp = args.input
  const missing = keys.filter((k) => inp?.[k] === undefined || inp?.[k] === null)
  if (typeof inp !== 'object' || inp === null || missing.length)
    throw new GqlError(
      undefined,
      `Argument 'input' on Field '${field}' has an invalid value (${JSON.stringify(inp ?? null)}). Expected type '${field[0].toUpperCase()}${field.slice(1)}Input!'.`,
    )
  return inp
}

export function apiToGql(err: unknown): never {
  if (err instanceof ApiError) {
    const type = err.status === 404 ? 'NOT_FOUND' : err.status === 403 ? 'FORBIDDEN' : 'UNPROCESSABLE'
    throw new GqlError(type, err.message)
  }
  throw err
}
