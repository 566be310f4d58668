// Every error code Patchbay answers with, in one place: its HTTP status, what it means and what to
// do about it (the hint a thrower gives when it has nothing more specific to say).
//
// The rule: a new code is added HERE, and nowhere else. `new PatchbayError(code, …)` only accepts
// the codes below (a free string does not compile), the OpenAPI document's error enum is this
// list, and the table of codes in docs/api.md is generated from it. After adding or changing a code run
// `npm run docs:errors && npm run api:types` (docs/api.md's table and the SDK's and the dashboard's API types; tests
// fail while either is out of date).

export interface ErrorCodeDefinition {
  /** The HTTP status the code is served with. */
  readonly status: number
  /**
   * Other statuses a thrower may choose for this code (passed as `status`), or '4xx' when the
   * status is the upstream's own client error.
   */
  readonly alsoStatus?: readonly number[] | '4xx'
  /** One line for the table of codes (docs/api.md): when this code is answered. */
  readonly meaning: string
  /** What to do, when the thrower gives no hint of its own. */
  readonly hint: string
  /**
   * What to do in the dashboard (its page and button), shown there with the hint, so a user in the
   * dashboard is not sent to a REST route.
   */
  readonly dashboard?: string
  /** The `patchbay` command that does it, printed by the CLI with the hint. */
  readonly cli?: string
}

export const ERROR_CODES = {
  // ── Requests and keys ──────────────────────────────────────────────────────────────────────
  UNAUTHORIZED: {
    status: 401,
    meaning: 'No key, an unknown key, or a revoked key (or the key of a deleted agent).',
    hint: 'Send Authorization: Bearer <key> with a workspace or agent key.',
    dashboard: 'Sign in again with the workspace key.',
    cli: 'Give the key with --key or PATCHBAY_KEY.',
  },
  KEY_EXPIRED: {
    status: 401,
    meaning: 'The workspace key is past its expiry time.',
    hint: 'Make a new key (POST /v1/keys) and use it instead.',
    dashboard: 'Make a new key on the Keys page.',
  },
  ROLE_FORBIDDEN: {
    status: 403,
    meaning: 'Your role in this workspace is below the one the action needs (the message names both).',
    hint: 'Ask an admin or owner of the workspace for the role the message names, or for them to do it.',
  },
  AGENT_KEY_FORBIDDEN: {
    status: 403,
    meaning: 'An agent key asked for something only workspace keys and members may do, or for another agent.',
    hint: 'Use a workspace key or sign in (for an agent: its own id).',
  },
  PERSON_REQUIRED: {
    status: 403,
    meaning:
      'The action is for a signed-in person (it acts for them, not for a workspace), and the caller is a key.',
    hint: 'Sign in (POST /v1/auth/sign-in) and call it with the session, or with a personal key.',
  },
  OWNER_SETUP_INVALID: {
    status: 400,
    alsoStatus: [409],
    meaning:
      'The owner-setup link is not this service’s, or the workspace already has an owner (409): the link works once.',
    hint: 'Use the link printed at the last start; once a person owns the workspace, ask them to invite you.',
  },
  WORKSPACE_NOT_FOUND: {
    status: 404,
    meaning: 'There is no workspace with that id that you belong to (a key acts only on its own workspace).',
    hint: 'List your workspaces with GET /v1/workspaces and name one in the Patchbay-Workspace header.',
  },
  AGENT_KEY_REQUIRED: {
    status: 403,
    meaning: 'The route acts as one agent and the key is not an agent key.',
    hint: 'Use a key made with POST /v1/agents/{id}/keys.',
  },
  AGENT_REQUIRED: {
    status: 403,
    meaning: 'MCP acts as one agent and the workspace key named none.',
    hint: 'Use an agent key, or name the agent: /mcp?agent=<id>.',
  },
  VALIDATION_FAILED: {
    status: 400,
    meaning: 'The request does not match its schema; the message names each field.',
    hint: 'Correct the named fields and send the request again.',
  },
  MALFORMED_JSON: {
    status: 400,
    meaning: 'The request body is not valid JSON.',
    hint: 'Send a valid JSON document.',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    meaning: 'The request body is not JSON.',
    hint: 'Send Content-Type: application/json.',
  },
  BODY_TOO_LARGE: {
    status: 413,
    meaning: 'The request body is over the 1 MiB limit.',
    hint: 'Send a smaller body.',
  },
  BAD_REQUEST: {
    status: 400,
    alsoStatus: '4xx',
    meaning: 'The HTTP layer refused the request for another reason (the message says which).',
    hint: 'Correct the request as the message says.',
  },
  ROUTE_NOT_FOUND: {
    status: 404,
    meaning: 'There is no such route (or dashboard file).',
    hint: 'See the API reference at /docs.',
  },
  STATS_RANGE_INVALID: {
    status: 400,
    meaning:
      'A stats range or step out of bounds: a range over 31 days, a step not in the list, a step under an hour over more than 2 days, or more than 1,500 points.',
    hint: 'Ask for a shorter range or a larger step; the error details list the steps and limits.',
    dashboard: 'Pick a range from the range buttons of the Overview page.',
    cli: 'Ask for less: patchbay stats --since 24h, or --since 30d --step 1d.',
  },
  INVALID_CURSOR: {
    status: 400,
    meaning: 'A paging cursor that no page gave.',
    hint: 'Pass the next value of the previous page, or leave cursor out to start from the newest.',
  },
  INTERNAL: {
    status: 500,
    meaning: 'An unexpected failure; it has been logged.',
    hint: 'Try again; if it persists, report it with the time of the request.',
  },
  SERVICE_STARTING: {
    status: 503,
    meaning:
      'Patchbay is starting: its store, migrations, webhook subscriptions or public address are not ready yet (webhook deliveries included: they are never judged before then); answered with Retry-After.',
    hint: 'Send the request again after Retry-After; GET /readyz says what is still starting.',
  },
  SERVICE_STOPPING: {
    status: 503,
    meaning:
      'This instance is stopping (SIGTERM): requests under way finish, new ones are refused before any work, with Retry-After.',
    hint: 'Send the request again after Retry-After: another instance, or this one once started again, answers it.',
  },
  DATABASE_UNAVAILABLE: {
    status: 503,
    meaning:
      'The database does not answer (stopped, restarting, or unreachable): nothing was stored or changed; answered with Retry-After. Webhook deliveries are answered 503 too, so the upstream sends them again.',
    hint: 'Send the request again after Retry-After; GET /readyz says why the store is not ready. The operator should check that PostgreSQL is running and reachable.',
  },
  STORAGE_FULL: {
    status: 507,
    alsoStatus: [503],
    meaning:
      'The embedded database’s disk is full, or its free space is below PATCHBAY_MIN_FREE_DISK_MB: nothing was stored (webhook deliveries are answered 503 with Retry-After instead, so the upstream sends them again).',
    hint: 'Free space on the disk of PATCHBAY_DATA_DIR (or lower PATCHBAY_MIN_FREE_DISK_MB); Patchbay takes writes again by itself once there is room. GET /readyz shows the free space.',
  },
  VAULT_ERROR: {
    status: 500,
    meaning: 'Stored credentials could not be opened with the configured master key.',
    hint: 'Check the master key configuration (PATCHBAY_MASTER_KEY, PATCHBAY_PREVIOUS_MASTER_KEYS).',
  },

  // ── Catalog, agents, tools ─────────────────────────────────────────────────────────────────
  STEP_NOT_FOUND: {
    status: 404,
    alsoStatus: [400],
    meaning: 'There is no tool step with that id (400 when a tool names it).',
    hint: 'Find step ids with GET /v1/steps?q=<connector or step name>.',
  },
  AGENT_NOT_FOUND: {
    status: 404,
    meaning: 'There is no agent with that id in this workspace.',
    hint: 'List agents with GET /v1/agents.',
  },
  KEY_NOT_FOUND: {
    status: 404,
    meaning: 'There is no key with that id (of the agent, or of the workspace).',
    hint: 'List keys with GET /v1/keys (workspace keys) or GET /v1/agents/{id}/keys.',
  },
  TOOL_NOT_FOUND: {
    status: 404,
    meaning: 'The agent has no tool with that id or name.',
    hint: 'List its tools with GET /v1/agents/{id}/tools.',
  },
  TOOL_RUN_NOT_FOUND: {
    status: 404,
    meaning: 'There is no tool run with that id.',
    hint: 'List runs with GET /v1/agents/{id}/tool-runs.',
  },
  RUN_NOT_FOUND: {
    status: 404,
    meaning: 'There is no step run with that id in the workspace.',
    hint: 'List step runs with GET /v1/runs.',
  },
  TOOL_RUN_FAILED: {
    status: 400,
    meaning: 'A tool run called over MCP failed without a code of its own.',
    hint: 'See the run record: GET /v1/tool-runs/{id}.',
  },
  DUPLICATE_STEP_NAME: {
    status: 400,
    meaning: 'Two steps of a tool have the same name.',
    hint: 'Give each step a name of its own, so {{steps.<name>.output}} names one step.',
  },
  INVALID_TEMPLATE: {
    status: 400,
    meaning: 'A {{…}} template of a tool step names nothing it can read.',
    hint: 'Templates are {{input.…}}, {{event.…}}, {{steps.<index or name>.output.…}} of an earlier step.',
    dashboard:
      'Fix the template in the step’s input; the step’s page under Tool steps shows its output fields.',
  },
  TEMPLATE_VALUE_MISSING: {
    status: 400,
    meaning: 'In a tool run, a template inside a text had no value (recorded on the run).',
    hint: 'Give the input the template reads, or make the earlier step return it.',
  },
  INLINE_CREDENTIALS_NOT_ALLOWED: {
    status: 400,
    alsoStatus: [403],
    meaning:
      'A tool step carries credentials in its input; or (403) an agent key gave credentials inline (an API Call’s auth) in a workspace that does not allow it.',
    hint: 'Remove the credentials from the step input (e.g. auth) and give the step a connectionId; a workspace admin may allow inline credentials for agents (PATCH /v1/workspace/settings {"allowInlineAuth":true}).',
  },

  // ── Connections and scope ──────────────────────────────────────────────────────────────────
  UNKNOWN_CONNECTOR: {
    status: 400,
    alsoStatus: [404],
    meaning: 'There is no connector with that id.',
    hint: 'Use one of the connector ids of GET /v1/catalog.',
  },
  UNKNOWN_AUTH_METHOD: {
    status: 400,
    meaning: 'The connector has no connection method with that id.',
    hint: 'Use one of the connector’s auth methods listed in GET /v1/catalog.',
  },
  CONNECTION_NOT_FOUND: {
    status: 404,
    alsoStatus: [400],
    meaning: 'There is no connection with that id that this key may use (400 when a body names it).',
    hint: 'List connections with GET /v1/connections.',
  },
  CONNECTION_REQUIRED: {
    status: 400,
    meaning: 'The step needs a connection and none was given (or several could be meant).',
    hint: 'Give connectionId; list connections with GET /v1/connections?connector=<id>.',
    dashboard:
      'Choose a connection in the form; connect an account on the Connections page first if there is none.',
    cli: 'Give --connection <id>; patchbay connections list shows them.',
  },
  FIELD_HAS_NO_CHOICES: {
    status: 404,
    meaning:
      'GET …/options/:field named a field whose choices cannot be listed (not a board, list, repository … field).',
    hint: 'The fields with choices are the pickers of the step in the catalog (GET /v1/steps/{id}).',
  },
  PARENT_REQUIRED: {
    status: 400,
    meaning: 'The choices of a field depend on another (a list on its board) and its value was not given.',
    hint: 'Pick the parent first and give its value as a query parameter (?idBoard=…).',
    dashboard: 'Choose the field it depends on first (the board before its lists).',
  },
  CONNECTION_AMBIGUOUS: {
    status: 400,
    meaning: 'An agent call could use more than one of the agent’s connections.',
    hint: 'Name the connection to use in the arguments.',
    cli: 'Give --connection <id>; patchbay connections list shows them.',
  },
  CONNECTION_CONNECTOR_MISMATCH: {
    status: 400,
    meaning: 'The connection belongs to another connector than the step or trigger.',
    hint: 'Use a connection of the step’s connector (GET /v1/connections?connector=<id>).',
  },
  CONNECTION_NOT_ALLOWED: {
    status: 403,
    alsoStatus: [400],
    meaning: 'The agent may not use that connection (400 when a tool names it).',
    hint: 'Use one of the agent’s connections, or add this one to it (PATCH /v1/agents/{id}).',
    dashboard: 'Tick the connection under Connections in the agent’s settings (Agents page).',
  },
  CONNECTION_LAPSED: {
    status: 409,
    meaning: 'The upstream refused the connection’s credentials; the connection is lapsed.',
    hint: 'Reconnect it (POST /v1/connections/{id}/reconnect) or disconnect and connect again.',
    dashboard: 'On the Connections page, use the connection’s Reconnect button.',
    cli: 'Connect the account again: patchbay connections add (it reconnects the account in place).',
  },
  CONNECTION_IN_USE: {
    status: 409,
    meaning:
      'Disconnecting a connection that agents, triggers or tool steps use; `details` lists them (agents, triggers, tools).',
    hint: 'Disconnect with ?force=true to remove its triggers and detach its agents and tool steps (they are kept, to restore when the account is connected again), or change them first.',
    dashboard: 'On the Connections page, read what uses it and press “Disconnect anyway”.',
    cli: 'Run patchbay connections remove <id> --force.',
  },
  CONNECTION_NEEDED: {
    status: 409,
    meaning:
      'A tool step whose connection was disconnected (its connectionId is null and connectionNeeded says which account it used).',
    hint: 'Connect the account again and restore (POST /v1/connections/{id}/restore), or give the step another connection (PATCH the tool’s steps).',
    dashboard:
      'On the Connections page, connect the account again and press Restore; or choose a connection for the step on the Tools page.',
  },
  NOTHING_TO_RESTORE: {
    status: 404,
    meaning:
      'POST /v1/connections/{id}/restore found no earlier connection of the account with bindings left to restore.',
    hint: 'The connection’s `restorable` list (GET /v1/connections/{id}) names what can be restored.',
  },
  CONNECTION_CANNOT_VERIFY_WEBHOOKS: {
    status: 400,
    meaning: 'An instant trigger on a connection that cannot verify the upstream’s deliveries.',
    hint: 'Reconnect with the secret that signs the upstream’s webhooks, or use a sign-in connection.',
    dashboard:
      'On the Connections page, connect the account again with its API secret filled in (it reconnects in place).',
    cli: 'Run patchbay connections add with the secret in the credentials (it reconnects the account in place).',
  },
  ACCOUNT_MISMATCH: {
    status: 400,
    meaning: 'A reconnect signed in as another upstream account than the connection’s.',
    hint: 'Reconnect with the same account, or create a new connection for the other account.',
  },
  INVALID_CREDENTIALS: {
    status: 400,
    meaning: 'The upstream refused the credentials given to connect; nothing was stored.',
    hint: 'Check the credentials (and that they have not expired or been revoked), then try again.',
  },
  CREDENTIALS_IN_REQUEST: {
    status: 400,
    meaning: 'An API Call step carries credentials of its own (a header or parameter).',
    hint: 'Credentials come from the connection; remove the header or parameter.',
  },
  SCOPE_DENIED: {
    status: 403,
    meaning: 'The resource is outside the agent’s scope (its boards and repositories).',
    hint: 'Use a resource in the agent’s scope, or add it to the scope (PATCH /v1/agents/{id}).',
    dashboard: 'Add the board or repository to the agent’s scope in its settings (Agents page).',
  },
  SCOPE_KIND_UNSUPPORTED: {
    status: 400,
    meaning: 'A scope entry of a kind the connector does not express scope in.',
    hint: 'Task-board scope is in boards; code-host scope is in repositories (owner/repo).',
  },

  // ── Steps and the API Call step ────────────────────────────────────────────────────────────
  INVALID_ENDPOINT: {
    status: 400,
    meaning:
      'An API Call endpoint that is not a plain path on the upstream: a URL, climbing (..), encoded dots or slashes, path parameters (;…), lookalike dots, or longer than 4096 characters.',
    hint: 'Give a path such as /1/boards/{id}, without scheme, host or "..".',
  },
  INVALID_HEADER: {
    status: 400,
    meaning: 'An API Call header with a bad name or value, or one Patchbay sets itself.',
    hint: 'Header names are letters, digits and -; values are one line.',
  },
  ACCEPT_HEADER_REQUIRED: {
    status: 400,
    meaning: 'A Code-Host API Call without accept: application/vnd.codehost+json; nothing was sent.',
    hint: 'Add "accept": "application/vnd.codehost+json" to headers and run the step again.',
    dashboard: 'Add "accept": "application/vnd.codehost+json" to the Headers field of the form.',
  },
  PAGE_ADDRESS_INVALID: {
    status: 400,
    meaning: 'A page address given for an identifier that is not the upstream’s page of that kind.',
    hint: 'Give the identifier, or the address of the board or card page.',
  },
  PAGE_ADDRESS_UNRESOLVED: {
    status: 404,
    alsoStatus: [400, 502],
    meaning: 'A page address the upstream could not turn into an identifier.',
    hint: 'Check the address, or give the identifier instead.',
  },
  TOKEN_PAGE_NOT_SUPPORTED: {
    status: 404,
    meaning: 'The connector has no page that makes a token.',
    hint: 'Connect it with one of the connector’s auth methods (GET /v1/catalog).',
  },
  LIST_NOT_ON_BOARD: {
    status: 400,
    meaning: 'Task-board: the list is on another board than idBoard; nothing changed.',
    hint: 'Give a list of that board, or the list’s own board.',
  },
  LABEL_NOT_ON_BOARD: {
    status: 400,
    meaning: 'Task-board: a label of another board; nothing changed.',
    hint: 'Use labels of the card’s board, or create one there.',
  },
  STALE_SHA: {
    status: 409,
    meaning: 'Code-host: the file changed since the sha given was read.',
    hint: 'Read the file again and write it with its current sha, or leave sha out to overwrite it.',
  },
  PATH_IS_NOT_A_FILE: {
    status: 409,
    meaning: 'Code-host: the path is a folder.',
    hint: 'Choose a file path (a folder cannot be written).',
  },
  BRANCH_EXISTS: {
    status: 409,
    meaning: 'Code-host: a branch of that name exists already.',
    hint: 'Pick another name, or use the existing branch.',
  },
  BRANCH_NOT_FOUND: {
    status: 404,
    meaning: 'Code-host: the branch to start from does not exist.',
    hint: 'Give an existing branch or a commit sha (or leave it out for the default branch).',
  },
  PULL_REQUEST_REJECTED: {
    status: 422,
    meaning: 'Code-host: the pull request cannot be opened between those branches.',
    hint: 'Check that both branches exist, that head has commits base lacks, and that no open pull request joins them.',
  },
  PULL_REQUEST_NOT_MERGEABLE: {
    status: 409,
    meaning: 'Code-host: the pull request cannot be merged as it is.',
    hint: 'The pull request is closed, a draft, or in conflict: resolve it first.',
  },
  WORKFLOW_NOT_FOUND: {
    status: 404,
    meaning: 'Code-host: the repository has no such workflow.',
    hint: 'Name one of the listed workflow files (or ids).',
  },
  WORKFLOW_DISABLED: {
    status: 409,
    meaning: 'Code-host: the workflow is disabled.',
    hint: 'Enable it first (Enable Workflow), then dispatch it again.',
  },
  STATUS_OPTION_NOT_FOUND: {
    status: 422,
    meaning: 'Code-host: the project’s status field has no such option.',
    hint: 'Use one of the option names listed.',
  },
  FIELD_NOT_FOUND: {
    status: 404,
    meaning: 'Code-host: the project has no single-select field of that name.',
    hint: 'Name the field exactly as the project shows it.',
  },
  ITEM_NOT_IN_PROJECT: {
    status: 400,
    meaning: 'Code-host: the item belongs to another project than the one given.',
    hint: 'Check the project id, or leave it out.',
  },
  GRAPHQL_ERROR: {
    status: 422,
    meaning: 'Code-host: the GraphQL API answered with errors[].',
    hint: 'Correct the input named in the message and try again.',
  },
  INSUFFICIENT_CREDITS: {
    status: 402,
    meaning: 'Contact-data: the account has too few credits; nothing was charged.',
    hint: 'Add credits to the contact-data account, or use the free Search steps meanwhile.',
  },
  CREDIT_BUDGET_EXCEEDED: {
    status: 403,
    meaning: 'The agent’s credit budget for this period is spent.',
    hint: 'Wait for the next period, look up fewer records, or raise the budget (PUT /v1/credits/budgets/{agentId}).',
  },
  BUDGET_NOT_FOUND: {
    status: 404,
    meaning: 'The agent has no credit budget.',
    hint: 'Set one with PUT /v1/credits/budgets/{agentId}; without one the agent is not limited.',
  },
  RATE_LIMIT_NOT_SET: {
    status: 404,
    meaning: 'The connection has no pacing of its own.',
    hint: 'It is paced by the connector default; GET /v1/connections/{id}/rate-limit shows it.',
  },

  // ── Upstreams ──────────────────────────────────────────────────────────────────────────────
  RATE_LIMITED: {
    status: 429,
    meaning: 'The upstream’s rate limit (or the connection’s budget) is spent; retryAfterMs when known.',
    hint: 'Retry after retryAfterMs, with increasing delays.',
  },
  UPSTREAM_TIMEOUT: {
    status: 504,
    meaning: 'The upstream did not answer in time.',
    hint: 'The upstream is slow or down; try again later.',
  },
  UPSTREAM_UNAVAILABLE: {
    status: 502,
    meaning: 'The upstream could not be reached.',
    hint: 'Check the upstream address in the configuration, or try again later.',
  },
  UPSTREAM_NOT_CONFIGURED: {
    status: 503,
    meaning: 'No address is configured for the connector’s upstream.',
    hint: 'Set PATCHBAY_<CONNECTOR>_URL, or leave it unset to use the built-in sandbox.',
  },
  UPSTREAM_NOT_FOUND: {
    status: 404,
    meaning: 'The upstream has no such resource, or the connection cannot see it.',
    hint: 'Check the identifiers: the resource does not exist or the account cannot see it.',
  },
  UPSTREAM_FORBIDDEN: {
    status: 403,
    meaning: 'The upstream refused: the account lacks the permission or the resource.',
    hint: 'The account lacks the permission for this action or resource.',
  },
  UPSTREAM_CONFLICT: {
    status: 409,
    meaning: 'The upstream resource changed since it was read.',
    hint: 'Read it again and retry.',
  },
  UPSTREAM_REJECTED: {
    status: 422,
    alsoStatus: '4xx',
    meaning: 'The upstream refused the input (served with the upstream’s own 4xx status).',
    hint: 'Correct the input named in the message and try again.',
  },
  UPSTREAM_ERROR: {
    status: 502,
    meaning: 'The upstream failed (5xx).',
    hint: 'The upstream failed; try again later.',
  },
  UPSTREAM_REDIRECT: {
    status: 502,
    meaning:
      'The upstream answered with a redirect (3xx), which Patchbay never follows; the message names where it points (its origin).',
    hint: "The upstream's address may have moved: check the configured address (or the connection's base address), and use the one it redirects to if it is right.",
  },
  EGRESS_REFUSED: {
    status: 403,
    meaning:
      'An address (a base address, a delivery URL, or what its name resolves to) is link-local, cloud metadata, unspecified, or loopback/private without PATCHBAY_EGRESS_ALLOW; nothing was sent.',
    hint: 'Use a public address, or have the operator allow this host or range with PATCHBAY_EGRESS_ALLOW (for a self-hosted installation on a private network).',
  },
  UPSTREAM_UNEXPECTED_RESPONSE: {
    status: 502,
    meaning: 'The upstream answered in a shape Patchbay cannot read.',
    hint: 'Try again; the API Call step shows the raw answer.',
  },

  // ── Sign-in (OAuth) ────────────────────────────────────────────────────────────────────────
  OAUTH_NOT_CONFIGURED: {
    status: 503,
    meaning: 'The connector’s sign-in needs an app this installation has not configured.',
    hint: 'Set PATCHBAY_<CONNECTOR>_CLIENT_ID and PATCHBAY_<CONNECTOR>_CLIENT_SECRET.',
  },
  OAUTH_NOT_SUPPORTED: {
    status: 400,
    meaning: 'The connector has no sign-in.',
    hint: 'Connect it with one of the connector’s auth methods (GET /v1/catalog).',
  },
  OAUTH_DENIED: {
    status: 403,
    meaning: 'The user declined the sign-in.',
    hint: 'Start the sign-in again and approve the requested access.',
  },
  OAUTH_STATE_INVALID: {
    status: 400,
    meaning: 'A sign-in callback Patchbay did not start.',
    hint: 'Start the sign-in again from Patchbay.',
  },
  OAUTH_STATE_EXPIRED: {
    status: 400,
    meaning: 'The sign-in took longer than its state lives.',
    hint: 'Start the sign-in again.',
  },
  OAUTH_STATE_USED: {
    status: 400,
    meaning: 'The sign-in callback was used already.',
    hint: 'Start a new sign-in to connect again.',
  },
  OAUTH_TOKEN_EXCHANGE_FAILED: {
    status: 502,
    meaning: 'The upstream refused to exchange the sign-in’s code for a token.',
    hint: 'Start the sign-in again; check the app’s client id and secret if it persists.',
  },
  OAUTH_FAILED: {
    status: 502,
    alsoStatus: [400, 500],
    meaning: 'The sign-in could not be completed (the message says where).',
    hint: 'Start the sign-in again.',
  },

  // ── Triggers, events and deliveries ────────────────────────────────────────────────────────
  TRIGGER_NOT_FOUND: {
    status: 404,
    meaning: 'There is no trigger (or trigger type) with that id.',
    hint: 'Trigger types are listed in GET /v1/catalog; an agent’s triggers in GET /v1/agents/{id}/triggers.',
  },
  POLL_INTERVAL_TOO_SHORT: {
    status: 400,
    meaning: 'A polled trigger’s interval is below the installation’s minimum.',
    hint: 'Use a longer interval (PATCHBAY_MIN_POLL_INTERVAL_MS is the minimum).',
  },
  WEBHOOK_PERMISSION_MISSING: {
    status: 403,
    meaning:
      'The upstream refused to register a webhook because the connection lacks a permission (a code-host organization webhook needs an owner of the organization and the admin:org_hook scope); the message names it.',
    hint: 'Connect an account with the permission the message names, or configure the trigger so it needs none.',
  },
  WEBHOOK_REGISTRATION_FAILED: {
    status: 502,
    meaning:
      'The upstream did not register the webhook of an instant trigger: it refused the connection’s credentials, or could not reach the callback.',
    hint: 'A refused credential: reconnect the connection. An unreachable callback: set PATCHBAY_PUBLIC_URL to an address the upstream reaches.',
    dashboard: 'A refused credential: use the connection’s Reconnect button on the Connections page.',
  },
  EVENT_NOT_FOUND: {
    status: 404,
    meaning: 'There is no event with that id.',
    hint: 'List events with GET /v1/events.',
  },
  DELIVERY_NOT_FOUND: {
    status: 404,
    meaning: 'There is no delivery with that id.',
    hint: 'List deliveries with GET /v1/deliveries.',
  },
  JOB_NOT_FOUND: {
    status: 404,
    meaning: 'There is no job with that id in the workspace.',
    hint: 'List jobs with GET /v1/jobs.',
    dashboard: 'Jobs started in the dashboard show their progress where they were started.',
    cli: 'List them with patchbay jobs list.',
  },
  JOB_FINISHED: {
    status: 409,
    meaning: 'A cancel of a job that already ended (succeeded, failed or cancelled).',
    hint: 'Nothing to cancel: read the job with GET /v1/jobs/{id} for its result.',
    cli: 'Read it with patchbay jobs show <id>.',
  },
  INBOX_ROW_NOT_FOUND: {
    status: 404,
    meaning: 'No upstream delivery with that number is set aside in the inbox.',
    hint: 'List those set aside with GET /v1/inbox.',
    cli: 'List them with patchbay inbox list.',
  },
  UNKNOWN_HOOK: {
    status: 410,
    meaning: 'A delivery to a webhook address that no longer exists.',
    hint: 'The webhook was removed; the upstream should stop sending to this address.',
  },
  SIGNATURE_INVALID: {
    status: 401,
    meaning: 'A delivery whose signature does not match the webhook’s secret.',
    hint: 'Deliveries must be signed by the upstream with the secret of this webhook.',
  },
  LOOP_DETECTED: {
    status: 409,
    meaning:
      'A tool run refused by the loop guard: its event was caused by a chain of the workspace’s own tool runs as long as PATCHBAY_LOOP_DEPTH_LIMIT (recorded on the delivery).',
    hint: 'Make sure the tool does not make the change its trigger listens for, or raise PATCHBAY_LOOP_DEPTH_LIMIT.',
  },
  DELIVERY_BACKLOG_FULL: {
    status: 503,
    meaning:
      'An upstream delivery refused while deliveries to agents wait on the instance: a growing share of them from half PATCHBAY_DELIVERY_BACKLOG_LIMIT, every one at it (only for upstreams that send a refused delivery again); answered with Retry-After.',
    hint: 'Nothing is lost: the upstream sends the delivery again. If it lasts, agents answer slowly: see the backlog at GET /v1/delivery-backlog.',
  },
  MALFORMED_DELIVERY: {
    status: 400,
    meaning:
      'A delivery body that is not the upstream’s JSON, or whose structure no upstream sends (nested more than 64 levels deep, an id that is not a string): refused before it is acknowledged.',
    hint: 'Send the upstream’s JSON delivery body unchanged.',
  },
  CONNECTION_OF_OTHER_OWNER: {
    status: 400,
    meaning:
      "An agent was given a connection of another end user (or of the workspace while bound to an end user, or an end user's while unbound).",
    hint: "Name connections of whom the agent acts for: GET /v1/connections?endUserId=<id> (an unbound agent: the workspace's own).",
  },
  MCP_GRANT_NOT_FOUND: {
    status: 404,
    meaning: 'The workspace has no MCP grant with that id (or it was revoked already).',
    hint: 'List grants with GET /v1/mcp-grants.',
  },
  MCP_CONSENT_INVALID: {
    status: 400,
    meaning:
      "An MCP client's sign-in could not be finished: the authorization request it belongs to is unknown or expired in this browser.",
    hint: 'Start again from the MCP client (add or reconnect Patchbay there); the sign-in page is good for one request, for a few minutes.',
  },
  END_USER_NOT_FOUND: {
    status: 404,
    meaning: 'The workspace has no end user with that id.',
    hint: 'List end users with GET /v1/end-users; an end user is added by a connect session (POST /v1/connect-sessions).',
  },
  CONNECT_SESSION_INVALID: {
    status: 401,
    meaning: 'The connect link is not one Patchbay gave out (missing, altered or made up).',
    hint: 'Ask the app that sent you here for a new connect link (its backend makes one with POST /v1/connect-sessions).',
  },
  CONNECT_SESSION_EXPIRED: {
    status: 410,
    meaning: 'The connect link has expired.',
    hint: 'Ask the app that sent you here for a new connect link.',
  },
  CONNECT_SESSION_USED: {
    status: 409,
    meaning:
      'The connect link was already used: to connect an account, or to allow an MCP client (each link is good once).',
    hint: 'Ask the app that sent you here for a new connect link.',
  },
  CONNECT_SESSION_NOT_FOR_MCP: {
    status: 403,
    meaning:
      'A connect link was presented on the MCP consent page, but it was not made to allow MCP clients (allowMcpGrant).',
    hint: 'Ask the app that sent you here for a connect link that allows MCP clients (its backend makes one with POST /v1/connect-sessions {"allowMcpGrant": true}).',
  },
  MCP_AGENT_NOT_END_USERS: {
    status: 403,
    meaning:
      "An end user, through a connect link, chose an agent on the MCP consent page that is not bound to them (another end user's, the workspace's own, or none of this workspace's).",
    hint: 'Choose one of the agents the consent page lists for you; if there is none, ask the app for an agent bound to you (an agent with your endUserId).',
  },
  CONNECT_NOT_ALLOWED: {
    status: 403,
    meaning: 'The connect link does not allow that connector or sign-in method.',
    hint: 'Pick one of the connectors and methods the connect page shows, or ask for a link that allows it.',
  },
  RETURN_TO_NOT_ALLOWED: {
    status: 400,
    meaning: "The connect link's returnTo is not on one of the workspace's allowed origins.",
    hint: 'Add its origin to the allowed origins (PATCH /v1/workspace/settings {"allowedOrigins": [...]}) or give a returnTo on one of them.',
    dashboard: 'End users page: allowed origins.',
  },
  NOTICE_NOT_FOUND: {
    status: 404,
    meaning: 'The workspace has no lifecycle notice with that id.',
    hint: 'List notices with GET /v1/notices.',
  },

  // ── People: sign-up, sign-in, sessions, members, invitations, single sign-on ───────────────
  SIGN_UP_CLOSED: {
    status: 403,
    meaning:
      'Sign-up is off (PATCHBAY_SIGNUP=off), or needs an invitation (PATCHBAY_SIGNUP=invite, the default) and none was given.',
    hint: 'Ask a workspace admin for an invitation and sign up with its token (or sign in if you have an account).',
  },
  WEAK_PASSWORD: {
    status: 400,
    meaning: 'The new password does not follow the password rules.',
    hint: 'A password has 10 to 200 characters and is not the email address.',
  },
  EMAIL_TAKEN: {
    status: 409,
    meaning: 'An account with that email exists already.',
    hint: 'Sign in with POST /v1/auth/sign-in instead.',
    dashboard: 'Use Sign in instead.',
  },
  SIGN_IN_FAILED: {
    status: 401,
    meaning: 'The email or the password is wrong (the same answer for an unknown account).',
    hint: 'Check the email and the password and try again; failed tries are limited.',
  },
  SIGN_IN_RATE_LIMITED: {
    status: 429,
    meaning:
      'Too many failed sign-ins for this account or from this address; Retry-After says when to try again.',
    hint: 'Wait the Retry-After seconds, then sign in again.',
  },
  CURRENT_PASSWORD_WRONG: {
    status: 400,
    meaning: 'Changing the password: the current password given is wrong (counted like a failed sign-in).',
    hint: 'Send your current password as currentPassword; forgot it? Sign out and use "Forgot your password?".',
  },
  PASSWORD_NOT_SET: {
    status: 409,
    meaning: 'The account signs in with single sign-on and has no password to change.',
    hint: 'Ask for a reset link (POST /v1/auth/password-reset {"email"}) to set a password as well.',
  },
  PASSWORD_RESET_UNAVAILABLE: {
    status: 409,
    meaning:
      'This Patchbay sends no mail (PATCHBAY_SMTP_URL is not set), so it cannot mail a password-reset link.',
    hint: 'Ask the operator to configure SMTP, or sign in with single sign-on if it is offered.',
  },
  PASSWORD_RESET_INVALID: {
    status: 400,
    meaning: 'The password-reset link is forged, was used already (the password changed since), or expired.',
    hint: 'Ask for a new link with POST /v1/auth/password-reset {"email"}; a link works once, for 30 minutes.',
  },
  PASSWORD_RESET_RATE_LIMITED: {
    status: 429,
    meaning:
      'Too many password-reset requests for this email or from this address; Retry-After says when to try again.',
    hint: 'Wait the Retry-After seconds; the link already mailed still works.',
  },
  CSRF_TOKEN_INVALID: {
    status: 403,
    meaning:
      'A change sent with a session cookie without the X-CSRF-Token header of that session, or with another.',
    hint: 'Send the csrfToken that sign-in and GET /v1/me return, in the X-CSRF-Token header.',
  },
  SESSION_NOT_FOUND: {
    status: 404,
    meaning: 'You have no live session with that id.',
    hint: 'List your sessions with GET /v1/me/sessions.',
  },
  MEMBER_NOT_FOUND: {
    status: 404,
    meaning: 'The workspace has no member with that id (or no account has that email).',
    hint: 'List members with GET /v1/workspaces/{id}/members; invite someone without an account.',
  },
  LAST_OWNER: {
    status: 409,
    meaning: 'The change would leave the workspace without an owner.',
    hint: 'Make another member an owner first.',
  },
  INVITATION_NOT_FOUND: {
    status: 404,
    meaning: 'No invitation has that token (or that id in this workspace).',
    hint: 'Use the whole link of the invitation, or ask for a new one.',
  },
  INVITATION_NOT_USABLE: {
    status: 410,
    meaning: 'The invitation was used already, revoked, or has expired (each link works once).',
    hint: 'Ask a workspace admin for a new invitation.',
  },
  INVITATION_EMAIL_MISMATCH: {
    status: 403,
    meaning: 'The invitation is for another email address than the signed-in person’s.',
    hint: 'Sign in (or sign up) with the email address the invitation was sent to.',
  },
  SSO_NOT_CONFIGURED: {
    status: 404,
    meaning: 'Single sign-on is not configured on this Patchbay.',
    hint: 'Set PATCHBAY_OIDC_ISSUER, PATCHBAY_OIDC_CLIENT_ID and PATCHBAY_OIDC_CLIENT_SECRET, or sign in with a password.',
  },
  SSO_FAILED: {
    status: 400,
    alsoStatus: [502],
    meaning:
      'The single sign-on answer was refused: wrong or missing state, wrong nonce, issuer or audience, or an error from the identity provider (502 when it could not be reached).',
    hint: 'Start the sign-in again from GET /v1/auth/sso/start.',
  },
  SSO_NO_ACCESS: {
    status: 403,
    meaning:
      'The identity provider signed you in, but your email is not verified, or no invitation or workspace domain admits it.',
    hint: 'Ask a workspace admin for an invitation to your email address.',
  },
} as const satisfies Record<string, ErrorCodeDefinition>

export type ErrorCode = keyof typeof ERROR_CODES

/** Every code, in the registry's order (the OpenAPI enum and the table in docs/api.md). */
export const ERROR_CODE_LIST = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]]

export const isErrorCode = (value: unknown): value is ErrorCode =>
  typeof value === 'string' && Object.hasOwn(ERROR_CODES, value)

/** The statuses a thrower may choose for a code besides its own (none for most codes). */
export type AlternativeStatus<C extends ErrorCode> = (typeof ERROR_CODES)[C] extends {
  alsoStatus: infer A
}
  ? A extends readonly (infer S)[]
    ? S
    : number
  : never

/** Markdown table cell text: `|` would end the cell and `<key>` would be read as an HTML tag. */
const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('<', '&lt;')

/** The table of codes in docs/api.md (`npm run docs:errors` writes it between its markers). */
export function errorCodeTable(): string {
  const rows = ERROR_CODE_LIST.map((code) => {
    const d: ErrorCodeDefinition = ERROR_CODES[code]
    const also =
      d.alsoStatus === undefined
        ? ''
        : d.alsoStatus === '4xx'
          ? ' (or 4xx)'
          : ` (or ${d.alsoStatus.join(', ')})`
    return `| \`${code}\` | ${d.status}${also} | ${cell(d.meaning)} | ${cell(d.hint)} |`
  })
  return ['| code | status | when | what to do |', '|---|---|---|---|', ...rows].join('\n')
}
