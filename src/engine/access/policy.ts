// Who may call what: the ONE policy table. Every API operation (by its operationId) and every MCP
// method has a rule here, enforced in one place (server/authorize.ts, after authentication, before
// the handler). A route the table does not name fails at startup with a message pointing here.
//
// Roles (each may do what the ones below it may):
//   owner   everything, including deleting the workspace and managing owners
//   admin   members, workspace keys, settings (credit budgets, rate limits), the audit log
//   member  connections, agents (and their keys), triggers, tools, running steps, replays
//   viewer  reads events, deliveries, runs, usage, configuration; nothing that changes state,
//           calls an upstream, or reveals a secret
// Agent keys keep the rights they always had: `agents: true` routes, narrowed by the handler to the
// key's own agent (requireOwnAgent); everything else refuses them (AGENT_KEY_FORBIDDEN).
//
// `action` names what a change is in the audit log (`connection.created` …); reads have none. The
// audit hook (server/audit-hook.ts) records every route with an action as it answers, unless the
// rule says `recordsItself` (the people services record sign-ins, members and invitations with
// what only they know); a request the policy refuses is recorded by the hook either way.
import type { Role } from './caller.ts'

export type Rule =
  /** Anyone, no credentials asked; the route checks what it needs itself (`why` says how). */
  | {
      readonly access: 'public'
      readonly why: string
      readonly action?: string
      readonly recordsItself?: true
    }
  /**
   * Anyone with valid credentials (a workspace key or a signed-in person), in any workspace or none:
   * `req.identity` is set, `req.caller` only when a workspace could be chosen. For what is about the
   * caller rather than a workspace (GET /v1/me, listing or creating workspaces, accepting an invitation).
   */
  | {
      readonly access: 'signedIn'
      readonly agents?: false
      readonly action?: string
      readonly recordsItself?: true
    }
  /**
   * A caller of the workspace the request acts on, with at least `role`. `workspaceParam` names the
   * path parameter that names that workspace (/v1/workspaces/{id}…), instead of the
   * Patchbay-Workspace header.
   */
  | {
      readonly access: 'workspace'
      readonly role: Role
      readonly agents: boolean
      readonly action?: string
      readonly workspaceParam?: string
      readonly recordsItself?: true
    }

export type WorkspaceRule = Extract<Rule, { access: 'workspace' }>

const read = (role: Role = 'viewer', agents = true): WorkspaceRule => ({ access: 'workspace', role, agents })
const change = (role: Role, action: string, agents = false): WorkspaceRule => ({
  access: 'workspace',
  role,
  agents,
  action,
})

export const POLICY = {
  // Catalog and steps
  getCatalog: read(),
  searchSteps: read(),
  getStep: read(),
  // Field choices are read from the upstream with a connection's credentials.
  listStepFieldChoices: read('member'),
  listTriggerFieldChoices: read('member'),
  // Runs are recorded as runs (GET /v1/runs, tool runs), not in the audit log.
  runStep: read('member'),
  listRuns: read(),

  // Connections
  createConnection: change('member', 'connection.created'),
  listConnections: read(),
  getConnection: read(),
  reconnectConnection: change('member', 'connection.reconnected'),
  deleteConnection: change('member', 'connection.deleted'),
  restoreConnection: change('member', 'connection.restored'),
  startOAuth: change('member', 'connection.oauth_started'),
  completeOAuth: {
    access: 'public',
    why: 'the upstream redirects the browser here; the flow is found by its single-use state',
    action: 'connection.oauth_completed',
  },
  createTokenUrl: read('member'),
  getRateLimit: read(),
  setRateLimit: change('admin', 'rate_limit.set'),
  deleteRateLimit: change('admin', 'rate_limit.deleted'),
  getRateLimitStatus: read(),

  // Agents and their keys
  createAgent: change('member', 'agent.created'),
  listAgents: read('viewer', false),
  getAgent: read(),
  updateAgent: change('member', 'agent.updated'),
  deleteAgent: change('member', 'agent.deleted'),
  rotateWebhookSecret: change('member', 'agent.webhook_secret_rotated'),
  endWebhookSecretOverlap: change('member', 'agent.webhook_secret_overlap_ended'),
  createAgentKey: change('member', 'agent_key.created'),
  listAgentKeys: read('member', false),
  revokeAgentKey: change('member', 'agent_key.revoked'),

  // Tools
  createTool: change('member', 'tool.created'),
  listTools: read(),
  getTool: read(),
  updateTool: change('member', 'tool.updated'),
  deleteTool: change('member', 'tool.deleted'),
  runTool: read('member'),
  listToolRuns: read(),
  getToolRun: read(),
  listFunctionTools: read(),
  listOwnFunctionTools: read(),
  callFunction: read('member'),

  // Triggers
  createTrigger: change('member', 'trigger.created'),
  listTriggers: read(),
  getTrigger: read(),
  deleteTrigger: change('member', 'trigger.deleted'),
  // Diagnosing reads the upstream's hooks with the connection's credentials; polling runs one poll.
  diagnoseTrigger: read('member', false),
  pollTrigger: change('member', 'trigger.polled'),

  // Events and deliveries
  listEvents: read('viewer', false),
  getEvent: read('viewer', false),
  listDeliveries: read(),
  getDelivery: read(),
  replayDelivery: change('member', 'delivery.replayed'),
  listParkedInbox: read('viewer', false),
  retryParkedInbox: change('member', 'inbox.retried'),
  getDeliveryBacklog: read('viewer', false),
  streamAgentEvents: read(),

  // Credits
  getCredits: read(),
  listCreditBudgets: read(),
  getCreditBudget: read(),
  // The workspace's settings (allowInlineAuth: what agent keys may do with credentials).
  getWorkspaceSettings: read('viewer', false),
  updateWorkspaceSettings: change('admin', 'workspace.settings_changed'),
  setCreditBudget: change('admin', 'credit_budget.set'),
  deleteCreditBudget: change('admin', 'credit_budget.deleted'),

  // Workspaces and their keys (a key made by a person or key: role at most the maker's)
  listWorkspaces: { access: 'signedIn' },
  createWorkspace: { access: 'signedIn', action: 'workspace.created' },
  claimWorkspace: { access: 'signedIn', action: 'workspace.owner_claimed' },
  getWorkspace: { ...read('viewer', false), workspaceParam: 'id' },
  updateWorkspace: { ...change('admin', 'workspace.updated'), workspaceParam: 'id' },
  deleteWorkspace: { ...change('owner', 'workspace.deleted'), workspaceParam: 'id' },
  listKeys: read('admin', false),
  createKey: change('admin', 'key.created'),
  revokeKey: change('admin', 'key.revoked'),
  listAudit: read('admin', false),

  // End users, connect links and lifecycle notices
  listEndUsers: read('viewer', false),
  getEndUser: read('viewer', false),
  deleteEndUser: change('admin', 'end_user.deleted'),
  createConnectSession: change('member', 'connect_session.created'),
  getEndUserSettings: read('viewer', false),
  updateEndUserSettings: change('admin', 'end_user_settings.changed'),
  listNotices: read('viewer', false),
  getNotice: read('viewer', false),
  replayNotice: change('member', 'notice.replayed'),
  describeConnectSession: {
    access: 'public',
    why: 'the hosted connect page: the single-use connect token is the credential, checked by the handler',
  },
  connectAsEndUser: {
    access: 'public',
    why: 'the hosted connect page: the single-use connect token is the credential, checked by the handler',
    action: 'connection.created',
  },
  startEndUserSignIn: {
    access: 'public',
    why: 'the hosted connect page: the single-use connect token is the credential, checked by the handler',
    action: 'connection.oauth_started',
  },
  // Stats and timelines: the workspace's numbers and run records (no payloads, no secrets).
  getStats: read('viewer', false),
  getTimeline: read('viewer', false),
  // Jobs: long work with progress (bulk enrichments spend credits; replays send deliveries again).
  startJob: change('member', 'job.started'),
  listJobs: read('viewer', false),
  getJob: read('viewer', false),
  cancelJob: change('member', 'job.cancelled'),
  // People: signing in and out, and what a person sees of themselves (routes/auth.ts).
  claimOwner: {
    access: 'public',
    why: 'the owner-setup link printed at start is the credential (checked against the master key)',
    action: 'workspace.owner_claimed',
  },
  signUp: {
    access: 'public',
    why: 'makes an account; PATCHBAY_SIGNUP decides who may (open, or with an invitation token)',
    action: 'auth.sign_up',
    recordsItself: true,
  },
  signIn: {
    access: 'public',
    why: 'checks the email and password itself, limited per account and per address',
    action: 'auth.sign_in',
    recordsItself: true,
  },
  requestPasswordReset: {
    access: 'public',
    why: 'mails a reset link to the account with that email (the same answer for any email), limited per email and address',
    action: 'auth.password_reset_requested',
    recordsItself: true,
  },
  resetPassword: {
    access: 'public',
    why: 'the mailed link is the credential: a MAC under the master key over the person, expiry and current password',
    action: 'auth.password_reset',
    recordsItself: true,
  },
  getSsoSettings: { access: 'public', why: 'tells the sign-in page whether single sign-on is offered' },
  startSso: { access: 'public', why: 'sends the browser to the identity provider (state bound to a cookie)' },
  finishSso: {
    access: 'public',
    why: 'the identity provider sends the browser back; state, PKCE and the ID token are checked',
    action: 'auth.sign_in',
    recordsItself: true,
  },
  signOut: { access: 'signedIn', action: 'auth.sign_out', recordsItself: true },
  getMe: { access: 'signedIn' },
  listMySessions: { access: 'signedIn' },
  changeMyPassword: {
    access: 'signedIn',
    agents: false,
    action: 'auth.password_changed',
    recordsItself: true,
  },
  endMySession: { access: 'signedIn', action: 'auth.session_ended', recordsItself: true },
  endAllMySessions: { access: 'signedIn', action: 'auth.signed_out_everywhere', recordsItself: true },
  acceptInvitation: { access: 'signedIn', action: 'invitation.accepted', recordsItself: true },

  // Members and invitations of the workspace the request acts on (routes/members.ts).
  listMembers: { ...read('viewer', false), workspaceParam: 'id' },
  addMember: { ...change('admin', 'member.added'), recordsItself: true, workspaceParam: 'id' },
  updateMember: { ...change('admin', 'member.role_changed'), recordsItself: true, workspaceParam: 'id' },
  removeMember: { ...change('admin', 'member.removed'), recordsItself: true, workspaceParam: 'id' },
  createInvitation: { ...change('admin', 'invitation.created'), recordsItself: true, workspaceParam: 'id' },
  listInvitations: { ...read('admin', false), workspaceParam: 'id' },
  revokeInvitation: { ...change('admin', 'invitation.revoked'), recordsItself: true, workspaceParam: 'id' },

  // MCP: the route lets every caller in; each JSON-RPC method has its rule in MCP_POLICY.
  callMcp: read('viewer', true),
  getMcpResourceMetadata: {
    access: 'public',
    why: "/mcp's protected resource metadata (RFC 9728): where MCP clients learn how to get a token",
  },
  // MCP clients signing in with OAuth (server/mcp/authorization-server.ts, consent.ts).
  oauthAuthorizationServer: {
    access: 'public',
    why: 'the OAuth authorization server (oidc-provider): it authenticates its clients and checks PKCE, codes and tokens itself',
  },
  getMcpConsentPage: {
    access: 'public',
    why: "the sign-in and consent page of an MCP client's OAuth flow; its data comes from the interaction's signed cookie",
  },
  grantMcpAccess: change('member', 'mcp_grant.created'),
  describeMcpConsentForEndUser: {
    access: 'public',
    why: 'an end user on the MCP consent page: the connect token (made with allowMcpGrant) is the credential, checked by the handler',
  },
  grantMcpAccessAsEndUser: {
    access: 'public',
    why: 'an end user grants an agent bound to them: the single-use connect token is the credential, checked by the handler',
    action: 'mcp_grant.created',
    recordsItself: true,
  },
  denyMcpAccess: {
    access: 'public',
    why: "ends an MCP client's OAuth flow with access_denied; the interaction's signed cookie is the credential",
  },
  listMcpGrants: read('viewer', false),
  revokeMcpGrant: change('member', 'mcp_grant.revoked'),
} as const satisfies Record<string, Rule>

/**
 * MCP methods (JSON-RPC) by the least role a workspace key or person needs (agent keys may call
 * them all). A method not named here needs `member`.
 */
export const MCP_POLICY: Record<string, Role> = {
  initialize: 'viewer',
  ping: 'viewer',
  'notifications/initialized': 'viewer',
  'notifications/cancelled': 'viewer',
  'tools/list': 'viewer',
  'resources/list': 'viewer',
  'resources/templates/list': 'viewer',
  'resources/read': 'viewer',
  'tools/call': 'member',
}

export type OperationId = keyof typeof POLICY

/** The rule of an operation, or undefined when the table does not name it. */
export const ruleOf = (operationId: string): Rule | undefined =>
  Object.hasOwn(POLICY, operationId) ? (POLICY as Record<string, Rule>)[operationId] : undefined

/** The rule of an MCP method (member for a method not named). */
export const mcpRoleOf = (method: string): Role =>
  Object.hasOwn(MCP_POLICY, method) ? MCP_POLICY[method] : 'member'
