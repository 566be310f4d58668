// Projects v2 in the GraphQL schema slice: projects, fields and options, items and their field
// values, and the item mutations (update/clear a field value, add an item).
import { canSee } from './auth.ts'
// resolveNode is only called inside resolvers, so the import cycle with the schema is harmless.
import { resolveNode } from './graphql-schema.ts'
import {
  apiToGql,
  connection,
  connectionOf,
  type Exec,
  edgeOf,
  type FieldDef,
  fieldObj,
  GqlError,
  input,
  issueObj,
  itemObj,
  nf,
  projectObj,
  type TypeDef,
  userObj,
} from './graphql-types.ts'
import { nodeId } from './ids.ts'
import { addItem, type FieldValueInput, findProjectV2, setItemField } from './projects.ts'
import type { Issue, ProjectField, ProjectItem, ProjectV2, Repo, User } from './store.ts'

export const READ_PROJECT = ['read:project', 'project']
export const WRITE_PROJECT = ['project']

export function canSeeProject(ex: Exec, p: ProjectV2): boolean {
  if (p.public || p.ownerId === ex.user.id) return true
  return ex.ctx.store.users.get(p.ownerId)?.members.has(ex.user.id) ?? false
}

export function canWriteProject(ex: Exec, p: ProjectV2): boolean {
  if (p.ownerId === ex.user.id) return true
  return ex.ctx.store.users.get(p.ownerId)?.members.has(ex.user.id) ?? false
}

export function itemContent(ex: Exec, it: ProjectItem) {
  if (it.contentType === 'DraftIssue') return { __typename: 'DraftIssue', it }
  const repo = ex.ctx.store.repos.get(it.repoId!)
  const issue = repo?.issues.get(it.number!)
  if (!repo || !issue || !canSee(ex.ctx, ex.principal, repo)) return null
  return issueObj(repo, issue)
}

export function fieldValues(ex: Exec, p: ProjectV2, it: ProjectItem) {
  const out: unknown[] = []
  for (const f of p.fields) {
    const v = fieldValue(ex, p, it, f)
    if (v) out.push(v)
  }
  return out
}

export function fieldValue(ex: Exec, p: ProjectV2, it: ProjectItem, f: ProjectField) {
  const base = { p, it, f, id: nodeId('PVTFV', `${it.id}:${f.id}`) }
  if (f.dataType === 'TITLE') {
    const content = itemContent(ex, it) as { i?: Issue } | null
    const title = it.contentType === 'DraftIssue' ? it.draftTitle : content?.i?.title
    return title === undefined || title === null
      ? null
      : { __typename: 'ProjectV2ItemFieldTextValue', ...base, text: title }
  }
  const v = it.values.get(f.id)
  if (!v) return null
  if (f.dataType === 'SINGLE_SELECT') {
    const o = f.options.find((x) => x.id === v.optionId)
    return o ? { __typename: 'ProjectV2ItemFieldSingleSelectValue', ...base, o } : null
  }
  if (v.text !== undefined) return { __typename: 'ProjectV2ItemFieldTextValue', ...base, text: v.text }
  if (v.number !== undefined)
    return { __typename: 'ProjectV2ItemFieldNumberValue', ...base, number: v.number }
  if (v.date !== undefined) return { __typename: 'ProjectV2ItemFieldDateValue', ...base, date: v.date }
  return null
}

export function needsProjectScope(ex: Exec, scopes: string[], field: string): void {
  const t = ex.principal.token
  if (!t || t.kind === 'fine_grained') return
  const granted = new Set(t.scopes)
  if (scopes.some((s) => granted.has(s) || (s === 'read:project' && granted.has('project')))) return
  throw new GqlError(
    'INSUFFICIENT_SCOPES',
    `Your token has not been granted the required scopes to execute this query. The '${field}' field requires one of the following scopes: ['${scopes[0]}'], but your token has only been granted the: [${t.scopes.map((s) => `'${s}'`).join(', ')}] scopes. Please modify your token's scopes at: https://codehost.local/settings/tokens.`,
  )
}

export function userProject(ex: Exec, u: User, number: number) {
  const p = ex.ctx.store.projectsV2.find((x) => x.ownerId === u.id && x.number === number)
  if (!p || !canSeeProject(ex, p)) throw nf(`Could not resolve to a ProjectV2 with the number ${number}.`)
  return projectObj(p)
}

export function projectsOf(ex: Exec, u: User, args: Record<string, any>) {
  const list = ex.ctx.store.projectsV2.filter((p) => p.ownerId === u.id && canSeeProject(ex, p))
  const q = typeof args.query === 'string' ? args.query.toLowerCase() : ''
  return connection(
    list.filter((p) => !q || p.title.toLowerCase().includes(q)),
    args,
    projectObj,
  )
}

export function itemsFor(ex: Exec, repo: Repo, issue: Issue, args: Record<string, any>) {
  const out: unknown[] = []
  for (const p of ex.ctx.store.projectsV2)
    for (const it of p.items)
      if (it.repoId === repo.id && it.number === issue.number && canSeeProject(ex, p)) out.push({ p, it })
  return connection(out as { p: ProjectV2; it: ProjectItem }[], args, (x) => itemObj(x.p, x.it))
}

export const fieldCommon: Record<string, FieldDef> = {
  id: { type: 'ID!', resolve: (o) => o.f.nodeId },
  databaseId: { type: 'Int', resolve: (o) => o.f.id },
  name: { type: 'String!', resolve: (o) => o.f.name },
  dataType: { type: 'ProjectV2FieldType!', resolve: (o) => o.f.dataType },
  project: { type: 'ProjectV2!', resolve: (o) => projectObj(o.p) },
  createdAt: { type: 'DateTime!', resolve: (o) => o.p.createdAt },
  updatedAt: { type: 'DateTime!', resolve: (o) => o.p.updatedAt },
}

export const valueCommon: Record<string, FieldDef> = {
  id: { type: 'ID!', resolve: (o) => o.id },
  field: { type: 'ProjectV2FieldConfiguration!', resolve: (o) => fieldObj(o.p, o.f) },
  item: { type: 'ProjectV2Item!', resolve: (o) => itemObj(o.p, o.it) },
  createdAt: { type: 'DateTime!', resolve: (o) => o.it.createdAt },
  updatedAt: { type: 'DateTime!', resolve: (o) => o.it.updatedAt },
  creator: { type: 'Actor', resolve: (o, _a, ex) => userObj(ex.ctx.store.user(o.it.creatorId)) },
}

export function projectItemField(ex: Exec, inp: Record<string, any>, field: string) {
  const project = findProjectV2(ex.ctx, String(inp.projectId))
  if (!project || !canSeeProject(ex, project))
    throw nf(`Could not resolve to a node with the global id of '${inp.projectId}'.`)
  if (!canWriteProject(ex, project))
    throw new GqlError(
      'FORBIDDEN',
      `${ex.user.login} does not have permission to update ${field} on this project.`,
    )
  const item = project.items.find((i) => i.nodeId === inp.itemId)
  if (!item) throw nf(`Could not resolve to a node with the global id of '${inp.itemId}'.`)
  const f = project.fields.find((x) => x.nodeId === inp.fieldId)
  if (!f) throw nf(`Could not resolve to a node with the global id of '${inp.fieldId}'.`)
  return { project, item, f }
}

export const PROJECT_MUTATIONS: Record<string, FieldDef> = {
  updateProjectV2ItemFieldValue: {
    type: 'UpdateProjectV2ItemFieldValuePayload',
    args: { input: 'UpdateProjectV2ItemFieldValueInput!' },
    scopes: WRITE_PROJECT,
    resolve: (_o, a, ex) => {
      const inp = input(a, 'updateProjectV2ItemFieldValue', ['projectId', 'itemId', 'fieldId', 'value'])
      const { project, item, f } = projectItemField(ex, inp, 'updateProjectV2ItemFieldValue')
      const value = inp.value as FieldValueInput
      if (typeof value !== 'object' || Object.keys(value).length !== 1)
        throw new GqlError(
          undefined,
          'Exactly one of text, number, date, singleSelectOptionId or iterationId must be provided',
        )
      try {
        setItemField(ex.ctx, ex.user, project, item, f, value)
      } catch (e) {
        apiToGql(e)
      }
      return {
        __typename: 'UpdateProjectV2ItemFieldValuePayload',
        clientMutationId: inp.clientMutationId ?? null,
        projectV2Item: itemObj(project, item),
      }
    },
  },
  clearProjectV2ItemFieldValue: {
    type: 'ClearProjectV2ItemFieldValuePayload',
    args: { input: 'ClearProjectV2ItemFieldValueInput!' },
    scopes: WRITE_PROJECT,
    resolve: (_o, a, ex) => {
      const inp = input(a, 'clearProjectV2ItemFieldValue', ['projectId', 'itemId', 'fieldId'])
      const { project, item, f } = projectItemField(ex, inp, 'clearProjectV2ItemFieldValue')
      try {
        setItemField(ex.ctx, ex.user, project, item, f, null)
      } catch (e) {
        apiToGql(e)
      }
      return {
        __typename: 'ClearProjectV2ItemFieldValuePayload',
        clientMutationId: inp.clientMutationId ?? null,
        projectV2Item: itemObj(project, item),
      }
    },
  },
  addProjectV2ItemById: {
    type: 'AddProjectV2ItemByIdPayload',
    args: { input: 'AddProjectV2ItemByIdInput!' },
    scopes: WRITE_PROJECT,
    resolve: (_o, a, ex) => {
      const inp = input(a, 'addProjectV2ItemById', ['projectId', 'contentId'])
      const project = findProjectV2(ex.ctx, String(inp.projectId))
      if (!project || !canSeeProject(ex, project))
        throw nf(`Could not resolve to a node with the global id of '${inp.projectId}'.`)
      if (!canWriteProject(ex, project))
        throw new GqlError(
          'FORBIDDEN',
          `${ex.user.login} does not have permission to add items to this project.`,
        )
      const content = resolveNode(ex, inp.contentId) as { __typename: string; r?: Repo; i?: Issue }
      if (!content.i || !content.r)
        throw new GqlError('UNPROCESSABLE', 'Content must be an issue or a pull request')
      const item = addItem(ex.ctx, ex.user, project, {
        repoId: content.r.id,
        number: content.i.number,
        type: content.i.pull ? 'PullRequest' : 'Issue',
      })
      return {
        __typename: 'AddProjectV2ItemByIdPayload',
        clientMutationId: inp.clientMutationId ?? null,
        item: itemObj(project, item),
      }
    },
  },
}

export const PROJECT_TYPES: Record<string, TypeDef> = {
  UpdateProjectV2ItemFieldValuePayload: {
    kind: 'object',
    fields: { clientMutationId: { type: 'String' }, projectV2Item: { type: 'ProjectV2Item' } },
  },
  ClearProjectV2ItemFieldValuePayload: {
    kind: 'object',
    fields: { clientMutationId: { type: 'String' }, projectV2Item: { type: 'ProjectV2Item' } },
  },
  AddProjectV2ItemByIdPayload: {
    kind: 'object',
    fields: { clientMutationId: { type: 'String' }, item: { type: 'ProjectV2Item' } },
  },
  ProjectV2: {
    kind: 'object',
    fields: {
      id: { type: 'ID!', resolve: (o) => o.p.nodeId },
      databaseId: { type: 'Int', resolve: (o) => o.p.id },
      number: { type: 'Int!', resolve: (o) => o.p.number },
      title: { type: 'String!', resolve: (o) => o.p.title },
      shortDescription: { type: 'String', resolve: (o) => o.p.shortDescription },
      readme: { type: 'String', resolve: () => null },
      url: {
        type: 'URI!',
        resolve: (o, _a, ex) =>
          `${ex.ctx.webUrl}/users/${ex.ctx.store.user(o.p.ownerId).login}/projects/${o.p.number}`,
      },
      closed: { type: 'Boolean!', resolve: (o) => o.p.closed },
      public: { type: 'Boolean!', resolve: (o) => o.p.public },
      createdAt: { type: 'DateTime!', resolve: (o) => o.p.createdAt },
      updatedAt: { type: 'DateTime!', resolve: (o) => o.p.updatedAt },
      owner: { type: 'ProjectV2Owner!', resolve: (o, _a, ex) => userObj(ex.ctx.store.user(o.p.ownerId)) },
      fields: {
        type: 'ProjectV2FieldConfigurationConnection!',
        args: {
          first: 'Int',
          after: 'String',
          last: 'Int',
          before: 'String',
          orderBy: 'ProjectV2FieldOrder',
        },
        resolve: (o, a) => connection(o.p.fields, a, (f: ProjectField) => fieldObj(o.p, f)),
      },
      field: {
        type: 'ProjectV2FieldConfiguration',
        args: { name: 'String!' },
        resolve: (o, a) => {
          const f = o.p.fields.find((x: ProjectField) => x.name === a.name)
          return f ? fieldObj(o.p, f) : null
        },
      },
      items: {
        type: 'ProjectV2ItemConnection!',
        args: {
          first: 'Int',
          after: 'String',
          last: 'Int',
          before: 'String',
          orderBy: 'ProjectV2ItemOrder',
          query: 'String',
        },
        resolve: (o, a) =>
          connection(
            o.p.items.filter((i: ProjectItem) => !i.archived),
            a,
            (it: ProjectItem) => itemObj(o.p, it),
          ),
      },
    },
  },
  ProjectV2FieldConfiguration: {
    kind: 'union',
    possible: ['ProjectV2Field', 'ProjectV2SingleSelectField', 'ProjectV2IterationField'],
  },
  ProjectV2FieldCommon: {
    kind: 'interface',
    possible: ['ProjectV2Field', 'ProjectV2SingleSelectField', 'ProjectV2IterationField'],
    fields: fieldCommon,
  },
  ProjectV2Field: { kind: 'object', fields: fieldCommon },
  ProjectV2IterationField: { kind: 'object', fields: fieldCommon },
  ProjectV2SingleSelectField: {
    kind: 'object',
    fields: {
      ...fieldCommon,
      options: {
        type: '[ProjectV2SingleSelectFieldOption!]!',
        args: { names: '[String!]' },
        resolve: (o, a) =>
          o.f.options
            .filter(
              (x: ProjectField['options'][number]) => !Array.isArray(a.names) || a.names.includes(x.name),
            )
            .map((x: object) => ({ __typename: 'ProjectV2SingleSelectFieldOption', ...x })),
      },
    },
  },
  ProjectV2SingleSelectFieldOption: {
    kind: 'object',
    fields: {
      id: { type: 'String!' },
      name: { type: 'String!' },
      nameHTML: { type: 'String!', resolve: (o) => o.name },
      color: { type: 'ProjectV2SingleSelectFieldOptionColor!', resolve: (o) => o.color },
      description: { type: 'String!' },
      descriptionHTML: { type: 'String!', resolve: (o) => o.description },
    },
  },
  ProjectV2Item: {
    kind: 'object',
    fields: {
      id: { type: 'ID!', resolve: (o) => o.it.nodeId },
      databaseId: { type: 'Int', resolve: (o) => o.it.id },
      type: {
        type: 'ProjectV2ItemType!',
        resolve: (o) =>
          o.it.contentType === 'DraftIssue'
            ? 'DRAFT_ISSUE'
            : o.it.contentType === 'PullRequest'
              ? 'PULL_REQUEST'
              : 'ISSUE',
      },
      isArchived: { type: 'Boolean!', resolve: (o) => o.it.archived },
      createdAt: { type: 'DateTime!', resolve: (o) => o.it.createdAt },
      updatedAt: { type: 'DateTime!', resolve: (o) => o.it.updatedAt },
      creator: { type: 'Actor', resolve: (o, _a, ex) => userObj(ex.ctx.store.user(o.it.creatorId)) },
      project: { type: 'ProjectV2!', resolve: (o) => projectObj(o.p) },
      content: { type: 'ProjectV2ItemContent', resolve: (o, _a, ex) => itemContent(ex, o.it) },
      fieldValues: {
        type: 'ProjectV2ItemFieldValueConnection!',
        args: {
          first: 'Int',
          after: 'String',
          last: 'Int',
          before: 'String',
          orderBy: 'ProjectV2ItemFieldValueOrder',
        },
        resolve: (o, a, ex) => connection(fieldValues(ex, o.p, o.it), a, (x) => x),
      },
      fieldValueByName: {
        type: 'ProjectV2ItemFieldValue',
        args: { name: 'String!' },
        resolve: (o, a, ex) => {
          const f = o.p.fields.find((x: ProjectField) => x.name === a.name)
          return f ? fieldValue(ex, o.p, o.it, f) : null
        },
      },
    },
  },
  ProjectV2ItemContent: { kind: 'union', possible: ['Issue', 'PullRequest', 'DraftIssue'] },
  ProjectV2ItemFieldValue: {
    kind: 'union',
    possible: [
      'ProjectV2ItemFieldSingleSelectValue',
      'ProjectV2ItemFieldTextValue',
      'ProjectV2ItemFieldNumberValue',
      'ProjectV2ItemFieldDateValue',
    ],
  },
  ProjectV2ItemFieldValueCommon: {
    kind: 'interface',
    possible: [
      'ProjectV2ItemFieldSingleSelectValue',
      'ProjectV2ItemFieldTextValue',
      'ProjectV2ItemFieldNumberValue',
      'ProjectV2ItemFieldDateValue',
    ],
    fields: valueCommon,
  },
  ProjectV2ItemFieldSingleSelectValue: {
    kind: 'object',
    fields: {
      ...valueCommon,
      name: { type: 'String', resolve: (o) => o.o.name },
      nameHTML: { type: 'String', resolve: (o) => o.o.name },
      optionId: { type: 'String', resolve: (o) => o.o.id },
      color: { type: 'ProjectV2SingleSelectFieldOptionColor!', resolve: (o) => o.o.color },
      description: { type: 'String', resolve: (o) => o.o.description },
    },
  },
  ProjectV2ItemFieldTextValue: { kind: 'object', fields: { ...valueCommon, text: { type: 'String' } } },
  ProjectV2ItemFieldNumberValue: { kind: 'object', fields: { ...valueCommon, number: { type: 'Float' } } },
  ProjectV2ItemFieldDateValue: { kind: 'object', fields: { ...valueCommon, date: { type: 'Date' } } },
  ProjectV2Connection: connectionOf('ProjectV2'),
  ProjectV2Edge: edgeOf('ProjectV2'),
  ProjectV2ItemConnection: connectionOf('ProjectV2Item'),
  ProjectV2ItemEdge: edgeOf('ProjectV2Item'),
  ProjectV2FieldConfigurationConnection: connectionOf('ProjectV2FieldConfiguration'),
  ProjectV2FieldConfigurationEdge: edgeOf('ProjectV2FieldConfiguration'),
  ProjectV2ItemFieldValueConnection: connectionOf('ProjectV2ItemFieldValue'),
  ProjectV2ItemFieldValueEdge: edgeOf('ProjectV2ItemFieldValue'),
}
