import { defineConnector } from '../../kit/define.ts'
import {
  authorizeCodehost,
  codehostSignIn,
  codehostToken,
  describeCodehostCredentials,
  tokenKind,
} from './auth.ts'
import {
  classifyCodehostError,
  codehostErrorMessage,
  codehostRateBudget,
  codehostRateLimitHint,
} from './errors.ts'
import { codehostPlaces } from './places.ts'
import { codehostScope } from './scope.ts'
import { codehostApiCall } from './steps/api-call.ts'
import { createBranch } from './steps/branches.ts'
import { getCommit, listCommits } from './steps/commits.ts'
import { createOrUpdateFile, getRepositoryContent } from './steps/contents.ts'
import { createIssue, createIssueComment, getIssueAssignees, updateIssue } from './steps/issues.ts'
import { updateProjectV2ItemStatus } from './steps/projects.ts'
import { createPullRequest, getReviewers } from './steps/pulls.ts'
import { listReleases } from './steps/releases.ts'
import { createRepository, getRepository, starRepo } from './steps/repositories.ts'
import { searchIssuesAndPullRequests } from './steps/search.ts'
import { createSnippet, listSnippetsForUser, updateSnippet } from './steps/snippets.ts'
import {
  createWorkflowDispatch,
  disableWorkflow,
  enableWorkflow,
  getWorkflowRun,
  listWorkflowRuns,
} from './steps/workflows.ts'
import { codehostTriggers } from './triggers.ts'
import { changedResources, codehostWebhooks } from './webhooks.ts'

export const codehost = defineConnector({
  id: 'codehost',
  name: 'Code-Host',
  aliases: ['code-host', 'code host', 'git'],
  description:
    'Repositories, branches, commits, issues, pull requests, workflow runs, snippets, releases, collaborators and project items.',
  beta: false,
  auth: [codehostSignIn, codehostToken],
  authorize: authorizeCodehost,
  // One request: identify also reads a fine-grained token's repositories.
  accountCheck: (http) => http.get('/user'),
  identify: async (http, credentials) => {
    const me = await http.get<{ login: string; id: number }>('/user')
    const identity = { accountName: me.login, accountId: String(me.id) }
    if (tokenKind(credentials.token ?? '') !== 'fine_grained') return identity
    // A fine-grained token reaches the repositories it was made for: named, so two connections of
    // the account tell apart by what they reach.
    const repos = await http.get<Array<{ full_name: string }>>('/user/repos', {
      per_page: 100,
      sort: 'full_name',
    })
    return { ...identity, remember: { repositories: repos.map((r) => r.full_name).join(', ') } }
  },
  publicCredentialFields: ['tokenKind', 'scope'],
  describeCredentials: describeCodehostCredentials,
  errorMessage: codehostErrorMessage,
  rateLimitHint: codehostRateLimitHint,
  classifyError: classifyCodehostError,
  rateBudget: codehostRateBudget,
  // Its fields' abbreviated names, said in full in forms' labels.
  fieldTitles: { q: 'Search query', repo: 'Repository', sha: 'Commit SHA' },
  steps: [
    createRepository,
    getRepository,
    getRepositoryContent,
    starRepo,
    createBranch,
    getCommit,
    listCommits,
    createOrUpdateFile,
    createIssue,
    createIssueComment,
    updateIssue,
    getIssueAssignees,
    searchIssuesAndPullRequests,
    createPullRequest,
    getReviewers,
    updateProjectV2ItemStatus,
    createWorkflowDispatch,
    enableWorkflow,
    disableWorkflow,
    getWorkflowRun,
    listWorkflowRuns,
    createSnippet,
    updateSnippet,
    listSnippetsForUser,
    listReleases,
    codehostApiCall,
  ],
  // What a tool run's steps made, by web address, as the events they cause name it (loop guard).
  changedResources,
  triggers: codehostTriggers,
  webhooks: codehostWebhooks,
  places: codehostPlaces,
  scope: codehostScope,
  webPages: '`/login/oauth/authorize`, `/login/oauth/access_token`',
})
