// The slice of the code-host GraphQL schema the sandbox serves: viewer/user/repository/node
// lookups, issues and pull requests (draft state), rate limit, and Projects v2 (from
// graphql-projects.ts); mutations updateProjectV2ItemFieldValue, clearProjectV2ItemFieldValue,
// addProjectV2ItemById, markPullRequestReadyForReview and convertPullRequestToDraft.
import { canSee } from './auth.ts'
import {
  canSeeProject,
  itemsFor,
  needsProjectScope,
  PROJECT_MUTATIONS,
  PROJECT_TYPES,
  projectsOf,
  READ_PROJECT,
  userProject,
} from './graphql-projects.ts'
import {
  apiToGql,
  connection,
  type Exec,
  type FieldDef,
  fieldObj,
  GqlError,
  input,
  issueObj,
  itemObj,
  nf,
  projectObj,
  repoObj,
  type TypeDef,
  userObj,
} from './graphql-types.ts'
import { nodeId, parseNodeId } from './ids.ts'
import { roleAtLeast, roleOf } from './permissions.ts'
import { findItem, findProjectV2 } from './projects.ts'
import { mergeability, setDraft } from './pulls.ts'

export { type Exec, GqlError } from './graphql-types.ts'

export function resolveNode(ex: Exec, id: unknown): unknown {
  if (typeof id !== 'string') throw nf(`Could not resolve to a node with the global id of '${String(id)}'.`)
  const store = ex.ctx.store
  const parsed = parseNodeId(id)
  const miss = nf(`Could not resolve to a node with the global id of '${id}'.`)
  if (!parsed) throw miss
  switch (parsed.prefix) {
    case 'U':
    case 'O': {
      const u = store.users.get(Number(parsed.id))
      if (!u) throw miss
      return userObj(u)
    }
    case 'R': {
      const r = store.repos.get(Number(parsed.id))
      if (!r || !canSee(ex.ctx, ex.principal, r)) throw miss
      return repoObj(r)
    }
    case 'I':
    case 'PR': {
      const hit =
        parsed.prefix === 'I' ? store.findIssueById(Number(parsed.id)) : store.findPullById(Number(parsed.id))
      if (!hit || !canSee(ex.ctx, ex.principal, hit.repo)) throw miss
      return issueObj(hit.repo, hit.issue)
    }
    case 'PVT': {
      const p = findProjectV2(ex.ctx, id)
      if (!p || !canSeeProject(ex, p)) throw miss
      return projectObj(p)
    }
    case 'PVTI': {
      const hit = findItem(ex.ctx, id)
      if (!hit || !canSeeProject(ex, hit.project)) throw miss
      return itemObj(hit.project, hit.item)
    }
    case 'PVTF':
    case 'PVTSSF': {
      for (const p of store.projectsV2) {
        const f = p.fields.find((x) => x.nodeId === id)
        if (f && canSeeProject(ex, p)) return fieldObj(p, f)
      }
      throw miss
    }
    case 'DI': {
      for (const p of store.projectsV2) {
        const it = p.items.find((x) => x.contentType === 'DraftIssue' && x.id === Number(parsed.id))
        if (it && canSeeProject(ex, p)) return { __typename: 'DraftIssue', it }
      }
      throw miss
    }
    default:
      throw miss
  }
}

const commonUser: Record<string, FieldDef> = {
  id: { type: 'ID!', resolve: (o) => nodeId(o.u.type === 'User' ? 'U' : 'O', o.u.id) },
  databaseId: { type: 'Int', resolve: (o) => o.u.id },
  login: { type: 'String!', resolve: (o) => o.u.login },
  name: { type: 'String', resolve: (o) => o.u.name },
  email: { type: 'String', resolve: (o) => o.u.email ?? '' },
  url: { type: 'URI!', resolve: (o, _a, ex) => `${ex.ctx.webUrl}/${o.u.login}` },
  avatarUrl: {
    type: 'URI!',
    args: { size: 'Int' },
    resolve: (o, _a, ex) => `${ex.ctx.webUrl}/avatars/${o.u.login}`,
  },
  projectV2: {
    type: 'ProjectV2',
    args: { number: 'Int!' },
    scopes: READ_PROJECT,
    resolve: (o, a, ex) => userProject(ex, o.u, a.number),
  },
  projectsV2: {
    type: 'ProjectV2Connection!',
    args: {
      first: 'Int',
      after: 'String',
      last: 'Int',
      before: 'String',
      query: 'String',
      orderBy: 'ProjectV2Order',
    },
    scopes: READ_PROJECT,
    resolve: (o, a, ex) => projectsOf(ex, o.u, a),
  },
}

const issueCommon: Record<string, FieldDef> = {
  id: { type: 'ID!', resolve: (o) => (o.i.pull ? nodeId('PR', o.i.pull.id) : nodeId('I', o.i.id)) },
  databaseId: { type: 'Int', resolve: (o) => (o.i.pull ? o.i.pull.id : o.i.id) },
  number: { type: 'Int!', resolve: (o) => o.i.number },
  title: { type: 'String!', resolve: (o) => o.i.title },
  body: { type: 'String!', resolve: (o) => o.i.body ?? '' },
  closed: { type: 'Boolean!', resolve: (o) => o.i.state === 'closed' },
  createdAt: { type: 'DateTime!', resolve: (o) => o.i.createdAt },
  updatedAt: { type: 'DateTime!', resolve: (o) => o.i.updatedAt },
  url: {
    type: 'URI!',
    resolve: (o, _a, ex) =>
      `${ex.ctx.webUrl}/${ex.ctx.store.user(o.r.ownerId).login}/${o.r.name}/${o.i.pull ? 'pull' : 'issues'}/${o.i.number}`,
  },
  author: { type: 'Actor', resolve: (o, _a, ex) => userObj(ex.ctx.store.user(o.i.userId)) },
  repository: { type: 'Repository!', resolve: (o) => repoObj(o.r) },
  projectItems: {
    type: 'ProjectV2ItemConnection!',
    args: { first: 'Int', after: 'String', last: 'Int', before: 'String', includeArchived: 'Boolean' },
    scopes: READ_PROJECT,
    resolve: (o, a, ex) => itemsFor(ex, o.r, o.i, a),
  },
}

function pullFor(ex: Exec, inp: Record<string, any>) {
  const parsed = parseNodeId(String(inp.pullRequestId))
  const hit = parsed?.prefix === 'PR' ? ex.ctx.store.findPullById(Number(parsed.id)) : undefined
  if (!hit || !canSee(ex.ctx, ex.principal, hit.repo))
    throw nf(`Could not resolve to a node with the global id of '${inp.pullRequestId}'.`)
  const role = roleOf(ex.ctx.store, hit.repo, ex.user.id)
  if (hit.issue.userId !== ex.user.id && !roleAtLeast(role, 'write'))
    throw new GqlError('FORBIDDEN', `${ex.user.login} does not have permission to update this pull request.`)
  return hit
}

export const TYPES: Record<string, TypeDef> = {
  Query: {
    kind: 'object',
    fields: {
      viewer: { type: 'User!', resolve: (_o, _a, ex) => userObj(ex.user) },
      user: {
        type: 'User',
        args: { login: 'String!' },
        resolve: (_o, a, ex) => {
          const u = ex.ctx.store.userByLogin(String(a.login))
          if (u?.type !== 'User') throw nf(`Could not resolve to a User with the login of '${a.login}'.`)
          return userObj(u)
        },
      },
      organization: {
        type: 'Organization',
        args: { login: 'String!' },
        resolve: (_o, a, ex) => {
          const u = ex.ctx.store.userByLogin(String(a.login))
          if (u?.type !== 'Organization')
            throw nf(`Could not resolve to an Organization with the login of '${a.login}'.`)
          return userObj(u)
        },
      },
      repository: {
        type: 'Repository',
        args: { owner: 'String!', name: 'String!', followRenames: 'Boolean' },
        resolve: (_o, a, ex) => {
          const r = ex.ctx.store.repoByName(String(a.owner), String(a.name))
          if (!r || !canSee(ex.ctx, ex.principal, r))
            throw nf(`Could not resolve to a Repository with the name '${a.owner}/${a.name}'.`)
          return repoObj(r)
        },
      },
      node: {
        type: 'Node',
        args: { id: 'ID!' },
        resolve: (_o, a, ex) => {
          const n = resolveNode(ex, a.id) as { __typename: string }
          if (n.__typename.startsWith('ProjectV2')) needsProjectScope(ex, READ_PROJECT, 'node')
          return n
        },
      },
      nodes: {
        type: '[Node]!',
        args: { ids: '[ID!]!' },
        resolve: (_o, a, ex) =>
          (Array.isArray(a.ids) ? a.ids : []).map((id: unknown) => {
            try {
              return resolveNode(ex, id)
            } catch {
              return null
            }
          }),
      },
      rateLimit: {
        type: 'RateLimit',
        args: { dryRun: 'Boolean' },
        resolve: (_o, _a, ex) => ({ __typename: 'RateLimit', ...(ex as Exec & { rate: object }).rate }),
      },
    },
  },
  Mutation: {
    kind: 'object',
    fields: {
      ...PROJECT_MUTATIONS,
      markPullRequestReadyForReview: {
        type: 'MarkPullRequestReadyForReviewPayload',
        args: { input: 'MarkPullRequestReadyForReviewInput!' },
        scopes: ['repo', 'public_repo'],
        resolve: (_o, a, ex) => {
          const inp = input(a, 'markPullRequestReadyForReview', ['pullRequestId'])
          const { repo, issue } = pullFor(ex, inp)
          try {
            setDraft(ex.ctx, repo, issue, ex.user, false)
          } catch (e) {
            apiToGql(e)
          }
          return {
            __typename: 'MarkPullRequestReadyForReviewPayload',
            clientMutationId: inp.clientMutationId ?? null,
            pullRequest: issueObj(repo, issue),
          }
        },
      },
      convertPullRequestToDraft: {
        type: 'ConvertPullRequestToDraftPayload',
        args: { input: 'ConvertPullRequestToDraftInput!' },
        scopes: ['repo', 'public_repo'],
        resolve: (_o, a, ex) => {
          const inp = input(a, 'convertPullRequestToDraft', ['pullRequestId'])
          const { repo, issue } = pullFor(ex, inp)
          try {
            setDraft(ex.ctx, repo, issue, ex.user, true)
          } catch (e) {
            apiToGql(e)
          }
          return {
            __typename: 'ConvertPullRequestToDraftPayload',
            clientMutationId: inp.clientMutationId ?? null,
            pullRequest: issueObj(repo, issue),
          }
        },
      },
    },
  },
  MarkPullRequestReadyForReviewPayload: {
    kind: 'object',
    fields: { clientMutationId: { type: 'String' }, pullRequest: { type: 'PullRequest' } },
  },
  ConvertPullRequestToDraftPayload: {
    kind: 'object',
    fields: { clientMutationId: { type: 'String' }, pullRequest: { type: 'PullRequest' } },
  },
  Node: {
    kind: 'interface',
    possible: [
      'User',
      'Organization',
      'Repository',
      'Issue',
      'PullRequest',
      'ProjectV2',
      'ProjectV2Item',
      'ProjectV2Field',
      'ProjectV2SingleSelectField',
      'DraftIssue',
    ],
    fields: { id: { type: 'ID!' } },
  },
  Actor: {
    kind: 'interface',
    possible: ['User', 'Organization'],
    fields: {
      login: { type: 'String!' },
      url: { type: 'URI!' },
      avatarUrl: { type: 'URI!', args: { size: 'Int' } },
    },
  },
  RepositoryOwner: {
    kind: 'interface',
    possible: ['User', 'Organization'],
    fields: { id: { type: 'ID!' }, login: { type: 'String!' }, url: { type: 'URI!' } },
  },
  ProjectV2Owner: { kind: 'interface', possible: ['User', 'Organization'], fields: { id: { type: 'ID!' } } },
  User: { kind: 'object', fields: commonUser },
  Organization: { kind: 'object', fields: commonUser },
  Repository: {
    kind: 'object',
    fields: {
      id: { type: 'ID!', resolve: (o) => nodeId('R', o.r.id) },
      databaseId: { type: 'Int', resolve: (o) => o.r.id },
      name: { type: 'String!', resolve: (o) => o.r.name },
      nameWithOwner: {
        type: 'String!',
        resolve: (o, _a, ex) => `${ex.ctx.store.user(o.r.ownerId).login}/${o.r.name}`,
      },
      url: {
        type: 'URI!',
        resolve: (o, _a, ex) => `${ex.ctx.webUrl}/${ex.ctx.store.user(o.r.ownerId).login}/${o.r.name}`,
      },
      isPrivate: { type: 'Boolean!', resolve: (o) => o.r.private },
      description: { type: 'String', resolve: (o) => o.r.description },
      owner: { type: 'RepositoryOwner!', resolve: (o, _a, ex) => userObj(ex.ctx.store.user(o.r.ownerId)) },
      issue: {
        type: 'Issue',
        args: { number: 'Int!' },
        resolve: (o, a) => {
          const i = o.r.issues.get(a.number)
          if (!i || i.pull) throw nf(`Could not resolve to an Issue with the number of ${a.number}.`)
          return issueObj(o.r, i)
        },
      },
      pullRequest: {
        type: 'PullRequest',
        args: { number: 'Int!' },
        resolve: (o, a) => {
          const i = o.r.issues.get(a.number)
          if (!i?.pull) throw nf(`Could not resolve to a PullRequest with the number of ${a.number}.`)
          return issueObj(o.r, i)
        },
      },
      issueOrPullRequest: {
        type: 'IssueOrPullRequest',
        args: { number: 'Int!' },
        resolve: (o, a) => {
          const i = o.r.issues.get(a.number)
          if (!i) throw nf(`Could not resolve to an issue or pull request with the number of ${a.number}.`)
          return issueObj(o.r, i)
        },
      },
      projectsV2: {
        type: 'ProjectV2Connection!',
        args: {
          first: 'Int',
          after: 'String',
          last: 'Int',
          before: 'String',
          query: 'String',
          orderBy: 'ProjectV2Order',
        },
        scopes: READ_PROJECT,
        resolve: (o, a, ex) =>
          connection(
            ex.ctx.store.projectsV2.filter(
              (p) => canSeeProject(ex, p) && p.items.some((it) => it.repoId === o.r.id),
            ),
            a,
            projectObj,
          ),
      },
    },
  },
  IssueOrPullRequest: { kind: 'union', possible: ['Issue', 'PullRequest'] },
  Issue: {
    kind: 'object',
    fields: {
      ...issueCommon,
      state: { type: 'IssueState!', resolve: (o) => o.i.state.toUpperCase() },
      stateReason: { type: 'IssueStateReason', resolve: (o) => o.i.stateReason?.toUpperCase() ?? null },
    },
  },
  PullRequest: {
    kind: 'object',
    fields: {
      ...issueCommon,
      state: {
        type: 'PullRequestState!',
        resolve: (o) => (o.i.pull.merged ? 'MERGED' : o.i.state.toUpperCase()),
      },
      isDraft: { type: 'Boolean!', resolve: (o) => o.i.pull.draft },
      merged: { type: 'Boolean!', resolve: (o) => o.i.pull.merged },
      mergedAt: { type: 'DateTime', resolve: (o) => o.i.pull.mergedAt },
      mergeable: {
        type: 'MergeableState!',
        resolve: (o, _a, ex) => {
          const m = mergeability(ex.ctx, o.r, o.i)
          return m === null ? 'UNKNOWN' : m ? 'MERGEABLE' : 'CONFLICTING'
        },
      },
      headRefName: { type: 'String!', resolve: (o) => o.i.pull.headRef },
      baseRefName: { type: 'String!', resolve: (o) => o.i.pull.baseRef },
      headRefOid: { type: 'GitObjectID!', resolve: (o) => o.i.pull.headSha },
    },
  },
  DraftIssue: {
    kind: 'object',
    fields: {
      id: { type: 'ID!', resolve: (o) => nodeId('DI', o.it.id) },
      title: { type: 'String!', resolve: (o) => o.it.draftTitle ?? '' },
      body: { type: 'String!', resolve: (o) => o.it.draftBody ?? '' },
      createdAt: { type: 'DateTime!', resolve: (o) => o.it.createdAt },
      updatedAt: { type: 'DateTime!', resolve: (o) => o.it.updatedAt },
    },
  },
  RateLimit: {
    kind: 'object',
    fields: {
      limit: { type: 'Int!' },
      cost: { type: 'Int!' },
      remaining: { type: 'Int!' },
      resetAt: { type: 'DateTime!' },
      used: { type: 'Int!' },
      nodeCount: { type: 'Int!' },
    },
  },
  PageInfo: {
    kind: 'object',
    fields: {
      hasNextPage: { type: 'Boolean!' },
      hasPreviousPage: { type: 'Boolean!' },
      startCursor: { type: 'String' },
      endCursor: { type: 'String' },
    },
  },
  ...PROJECT_TYPES,
}
