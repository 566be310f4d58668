// The shapes a connector is written in. A connector folder is declarations of these and short
// `run`s that call `ctx.http`; everything else (validation, scope, pacing, retries, records,
// the catalog, MCP, forms) is derived from them by the engine.
import type { z } from 'zod'
import type { BatchSpec } from './batcher.ts'
import type { ErrorCode } from './error-codes.ts'
import type { Http } from './http.ts'
import type { ResultCache } from './result-cache.ts'

export type Credentials = Record<string, string>

/**
 * What a step does to the upstream, told to MCP clients as tool annotations (readOnlyHint,
 * destructiveHint, idempotentHint), which clients use to decide what to confirm with a person.
 * A step that writes says all three: `destructive` when it can overwrite or remove what is there
 * and cannot be put back with the same steps (replacing a card's description, a file's content,
 * an issue's labels), not for what only adds (a card, a comment) or can be undone (archiving, a
 * status); `idempotent` when the same call again changes nothing more.
 */
export type StepHints =
  | { readOnly: true; destructive?: false; idempotent?: boolean }
  | { readOnly: false; destructive: boolean; idempotent: boolean }

/**
 * A kind of upstream resource a scoped field names: one of the connector's place kinds
 * (`ConnectorDefinition.places`), the kind of a place's group (an owner of repositories), or a
 * kind its `scope.resolve` places on one (a card on its board).
 */
export type ScopedKind = string

/**
 * An agent's scope: per place kind, by the kind's `scopeKey`, the places it may touch
 * (`{ boards: [...], repositories: [...] }`). A kind the scope does not list: none of it.
 */
export type Scope = Record<string, string[]>

/**
 * A kind of place a connector's resources lie in, the unit an agent's scope is written in (a
 * task-board's board, a code-host's repository). The engine derives from these the scope the
 * agents' schema accepts (and the OpenAPI document), how a scoped value or an event's place is
 * held against a scope, and the words of its refusals.
 */
export interface PlaceKind {
  /** What scoped fields, lookups and events' `refs` call it: `board`. */
  kind: string
  /** The key of the agent's scope that lists places of this kind: `boards`. */
  scopeKey: string
  /** One place's identifier as a scope accepts it (its format, the message, the description). */
  id: z.ZodString
  /** The scope list as the API describes it where it is written (input). */
  description: string
  /** The scope list as the API describes it where it is read (responses). */
  summary: string
  /** How identifiers compare: both are read through this (repositories: lower case). Absent: as written. */
  normalize?: (id: string) => string
  /**
   * A value given for this kind may be another name of a place (a board's short link), read by
   * the connector's `scope.resolve` when it is not in the scope as given. Absent: a value is
   * its own place.
   */
  resolve?: boolean
  /** What an event's `refs[kind]` holds, for the agent payload's schema, where the kind alone does not say (`owner/name`). */
  ref?: string
  /**
   * A wider unit the places of this kind fall into (the owner of repositories): a value of
   * `group.kind` (a scoped field, an event's `refs[group.kind]`) is in a scope that holds any
   * place of this kind in it, and a trigger with `eventScope: 'group'` lets in an event's place
   * whose group the scope holds (a repository made since the scope was written).
   */
  group?: {
    kind: string
    /** The group of a place, from its (normalized) identifier; compared with a normalized value. */
    of: (id: string) => string
    /** What an event's `refs[group.kind]` holds, for the agent payload's schema. */
    ref?: string
  }
  /** A place's name as people know it, read from an event's data (for diagnosis); undefined if absent. */
  nameIn?: (data: unknown, id: string) => string | undefined
}

/** A ref a connector's events carry besides their place (ConnectorDefinition.eventRefs). */
export interface EventRef {
  /** The key in `refs`: `card`. */
  name: string
  /** What it holds, for the agent payload's schema. */
  description?: string
  /**
   * It names the upstream resource the event is about, as a step's output names what it made or
   * changed (`changedResources`, else the output's `id`: a task-board card's id): the loop guard
   * knows by it the events Patchbay's own tool runs caused (`refs.resource` is read for every
   * connector).
   */
  resource?: boolean
}

export interface ScopedField {
  kind: ScopedKind
  /** Dotted path of the input field that names the resource… */
  field?: string
  /** …or how to read it from the input (a repository from owner and repo: `o/r`; several as a list). */
  // A method: each connector reads its own input or config shape (checked where it is declared).
  value?(input: object): string | string[] | undefined
}

export interface StepContext {
  http: Http
  connection: { id: string | null; accountName: string | null; accountId: string | null }
  /** This connection's result cache (kit/result-cache.ts); absent when the engine runs without one. */
  cache?: ResultCache
  /**
   * Sends lookups through the connection's batcher (kit/batcher.ts): concurrent lookups of the same
   * spec share the upstream's bulk calls, in chunks of its maximum. Resolves to one result per query.
   */
  batch?: <Q, R>(spec: BatchSpec<Q, R>, queries: Q[]) => Promise<R[]>
  /** Credits of a metered upstream, for the caller's budget and the ledger. */
  credits?: StepCredits
  /**
   * The calling agent's scope, when the caller is a scoped agent (absent for workspace keys).
   * The engine has already checked every scoped input field; a step that reaches across
   * resources (a search) narrows itself to these.
   */
  scope?: Scope
}

/** A metered upstream's credits as one step run sees them. */
export interface StepCredits {
  /**
   * Holds `worstCase` credits of the caller's budget before a request is sent; refuses with
   * CREDIT_BUDGET_EXCEEDED when they do not fit. Call the returned function once the request is done.
   */
  reserve(worstCase: number): Promise<() => void>
  /** Credits charged to this run so far, as the upstream reported them. */
  readonly charged: number
}

/** How a metered upstream reports what a response cost. */
export interface Metering {
  read(headers: Record<string, string>): { charged: number; remaining?: number } | undefined
}

/** An upstream refusal the connector names itself (e.g. out of credits), instead of the generic codes. */
/** A refusal that deserves a code of its own (served with the registry's status for it). */
export interface ClassifiedError {
  code: ErrorCode
  /** What to do, when the registry's hint for the code is not specific enough. */
  hint?: string
}

export interface StepDefinition<
  I extends z.ZodType = z.ZodType,
  O extends z.ZodType = z.ZodType,
  K extends string = string,
> {
  /** Unique within the connector: `create_card`. The full id is `taskboard.create_card`. */
  key: K
  /** Exactly as the spec writes it. */
  name: string
  /** Written for an LLM: what the step does and where each id comes from. */
  description: string
  input: I
  output: O
  hints: StepHints
  /** Input fields that name scoped resources (checked against the agent's scope). */
  scoped?: ScopedField[]
  /** API Call steps pass requests through unpaced; ready-made steps are paced. */
  passThrough?: boolean
  /**
   * For steps that may run without a stored connection (Task-Board API Call with an API key
   * plus token given in its input): the credentials taken from the input, or undefined.
   */
  inlineCredentials?: (input: z.output<I>) => Credentials | undefined
  /**
   * The input field that carries inline credentials: refused for agent keys, and left out of the
   * schemas offered to models, unless the workspace allows inline credentials (allowInlineAuth).
   */
  inlineCredentialsField?: string
  run: (ctx: StepContext, input: z.output<I>) => Promise<z.input<O>>
}

// The key's literal type is kept (like the schemas'), so the SDK can type each step by its id.
export function defineStep<I extends z.ZodType, O extends z.ZodType, const K extends string>(
  def: StepDefinition<I, O, K>,
): StepDefinition<I, O, K> {
  return def
}

/** An upstream happening after the connector has read it: stored once, matched to triggers. */
export interface NormalizedEvent {
  /** The upstream's own id for the happening (an action id, a delivery GUID): the dedupe key. */
  id: string
  /** The upstream's event type: `updateCard`, `pull_request.closed` … */
  type: string
  occurredAt: string
  /**
   * Where it happened, for matching, scope and diagnosis. The place it lies in, keyed by its
   * connector's place kind (`board`, `repository`: `ConnectorDefinition.places`), is the event's
   * attribution: every time an event is matched to a trigger, the engine checks it against the
   * agent's scope as it is then (engine/events/event-scope.ts). An event a trigger delivers must
   * name the place it concerns, unless the trigger declares `eventScope: 'account'`. A place
   * kind's group (`owner`) is for a thing of an account that lies in no place (a project's draft
   * issue): it is in a scope that holds any place of that group. `unattributed` says why the place
   * of an event that does not name it could not be read (WebhookSupport.attribute): such an
   * event reaches no trigger that needs a place. `resource` names the upstream resource the event
   * is about where no ref of its connector does (`EventRef.resource`: a task-board's `card`): a
   * code-host issue's, comment's or commit's web address, as
   * the connector's `changedResources` reads it from a step's output: the loop guard recognizes
   * the events Patchbay's own tool runs caused by it (engine/events/loop-guard.ts).
   */
  refs: {
    /** Its place (by place kind), its place's group, or another scoped resource it names (a card). */
    [kind: string]: string | undefined
    account?: string
    unattributed?: string
    resource?: string
  }
  /** The payload agents receive. */
  data: unknown
}

export interface PollContext<Cursor = unknown> {
  http: Http
  /** What the previous poll left (as the trigger's `cursor` schema reads it); null on the first poll. */
  cursor: Cursor | null
  now: Date
  /**
   * The scope of the agent the trigger belongs to. A poll that reads beyond one board (the
   * account's notifications) keeps only what lies in it.
   */
  scope?: Scope
}

/** How the upstream brings a trigger's changes to Patchbay, in the catalog, the created trigger and diagnose. */
export interface TriggerMechanism {
  /** `webhook`: the upstream calls Patchbay as it happens (instant); `poll`: Patchbay asks on a schedule. */
  kind: 'webhook' | 'poll'
  /** The upstream mechanism in its own terms: `organization webhook (repository events)`. */
  upstream: string
  /** Which configurations use it, for triggers delivered two ways (`an organization is given`). */
  when?: string
  /** Why it is delivered this way, where that is not the obvious way (no webhook upstream). */
  reason?: string
}

export interface TriggerDefinition<C extends z.ZodType = z.ZodType, K extends z.ZodType = z.ZodType> {
  key: string
  name: string
  description: string
  /** Whether it is always instant (a webhook carries it for every configuration). */
  instant: boolean
  /**
   * How it is delivered; absent: a plain webhook (instant) or poll. A trigger delivered two ways
   * lists both and picks one per configuration with `mechanismFor`.
   */
  mechanisms?: TriggerMechanism[]
  /** For triggers with two mechanisms: the one this configuration uses. */
  mechanismFor?: (config: z.output<C>) => TriggerMechanism['kind']
  /**
   * Fills configuration from the connection's account when the trigger is created (the login New
   * Mention looks for), so the stored configuration says everything the trigger matches on.
   */
  prepare?: (config: z.output<C>, account: { id: string; name: string }) => z.output<C>
  config: C
  /** A sample of the event payload this trigger delivers. */
  sample?: unknown
  /** Config fields that name scoped resources (checked against the agent's scope). */
  scoped?: ScopedField[]
  /**
   * Instant triggers: the upstream model the webhook watches (a board id, a repository, the
   * account). `account` is the connection's upstream account, for triggers that watch it.
   */
  watch?: (config: z.output<C>, account: { id: string }) => { model: string }
  /** Instant triggers: whether an event on the watched model is one this trigger fires for. */
  match?: (event: NormalizedEvent, config: z.output<C>) => boolean
  /**
   * Instant triggers, optional: a first sieve for a webhook heard by many triggers, so that an
   * event asks `match` only of the triggers it may concern. `config` gives the keys a
   * configuration fires under (undefined: any event may match it); `event` the keys an event
   * carries. A trigger whose configuration gives keys is asked only about events sharing one of
   * them: every event `match` accepts must carry one of its configuration's keys.
   */
  matchKeys?: {
    config: (config: z.output<C>) => readonly string[] | undefined
    event: (event: NormalizedEvent) => readonly string[]
  }
  /**
   * Polled triggers: what a poll leaves for the next (stored with the trigger). A stored cursor
   * the schema does not read (left by an older version) is dropped: the next poll is a first one.
   */
  cursor?: K
  /** Polled triggers: the new events since the cursor, and the next cursor. Event ids must be stable. */
  poll?: (
    ctx: PollContext<z.output<K>>,
    config: z.output<C>,
  ) => Promise<{ events: NormalizedEvent[]; cursor: z.output<K> }>
  /** Polled triggers: the default interval. */
  pollIntervalMs?: number
  /**
   * How an event this trigger fires for is held against the agent's current scope (checked each
   * time an event is matched, for instant and polled triggers alike):
   * - `place` (the default): the place its refs name (by place kind) must be in the scope; an
   *   event naming none is not delivered.
   * - `group`: like `place`, and a place is also in scope when the scope holds another place of
   *   its group (`PlaceKind.group`: a repository of the same owner that did not exist when the
   *   scope was written).
   * - `account`: the event is about the connection's account itself (a new board, a snippet), not
   *   a place: delivered whenever the agent may use the connection.
   */
  eventScope?: 'place' | 'group' | 'account'
}

export function defineTrigger<C extends z.ZodType, K extends z.ZodType = z.ZodType>(
  def: TriggerDefinition<C, K>,
): TriggerDefinition<C, K> {
  return def
}

/** Every way a trigger can be delivered (the catalog's list). */
export function triggerMechanisms(t: TriggerDefinition): TriggerMechanism[] {
  return t.mechanisms ?? [{ kind: t.instant ? 'webhook' : 'poll', upstream: t.instant ? 'webhook' : 'poll' }]
}

/** How a trigger is delivered for one configuration. */
export function triggerMechanism(t: TriggerDefinition, config: unknown): TriggerMechanism {
  const all = triggerMechanisms(t)
  const kind = t.mechanismFor?.(config)
  return all.find((m) => m.kind === kind) ?? all[0]
}

export interface AuthMethod {
  /** `api_key_token`, `oauth1`, `oauth2`, `api_key`, `token` … */
  id: string
  name: string
  description: string
  /** What the user supplies for a credentials flow; absent for redirect flows. */
  credentials?: z.ZodObject
  /**
   * Credentials the user fetches from an upstream page (a task-board token): the page's address,
   * built from the upstream's web address and what the user gives (POST /v1/connectors/:id/token-url).
   */
  tokenPage?: { input: z.ZodObject; url(webUrl: string, input: object): string }
  /** A sign-in through the upstream's web pages (OAuth): the engine runs it (engine/oauth-flows.ts). */
  oauth?: OAuthFlow
}

/**
 * A redirect sign-in (OAuth 2 web flow, OAuth 1.0a). The engine owns the routes
 * (`POST /v1/connections/oauth/start`, `GET /v1/oauth/callback/:connector`), the sealed state,
 * the pop-up page and the connection; the connector says where to send the user and how to turn
 * the upstream's answer into credentials. Errors are PatchbayErrors (OAUTH_DENIED …).
 */
export interface OAuthFlow {
  /** Where to send the user. `pending` is kept (in this process) until the callback. */
  start: (
    ctx: OAuthContext,
    req: { callbackUrl: string; state: string },
  ) => Promise<{ authorizeUrl: string; pending?: Record<string, string> }>
  /** The callback's query (code, verifier, error …) → the connection's credentials. */
  finish: (
    ctx: OAuthContext,
    req: {
      callbackUrl: string
      state: string
      query: Record<string, string>
      pending?: Record<string, string>
    },
  ) => Promise<Credentials>
}

export interface OAuthContext {
  /** The connector's OAuth app from the configuration (PATCHBAY_<CONNECTOR>_CLIENT_ID/_SECRET). */
  app: { clientId: string; clientSecret: string }
  /** The upstream's web address (authorize and token pages); the API address unless configured. */
  webUrl: string
  /** Requests to webUrl without any connection's credentials (token exchanges). */
  web: Http
}

/** An outgoing request before credentials are applied; `authorize` adds them. */
export interface OutgoingRequest {
  method: string
  path: string
  query: URLSearchParams
  headers: Record<string, string>
}

/** One request budget as an upstream reports it (x-ratelimit-* headers, GET /rate_limit). */
export interface RateBudgetState {
  limit: number
  remaining: number
  used?: number
  /** When the window resets, epoch milliseconds. */
  resetAt: number
}

/**
 * Upstreams that report what is left of a request budget on every response. The engine tracks it
 * per credential, holds ready-made steps back until the reset when it is spent (within a cap,
 * else RATE_LIMITED with retryAfterMs, nothing sent), and shows it per connection.
 */
export interface RateBudgetSupport {
  /** The budget a response reports, with the resource it belongs to (core, search, graphql). */
  read: (headers: Record<string, string>) => ({ resource: string } & RateBudgetState) | undefined
  /** The budget a request spends. */
  resourceOf: (req: { method: string; path: string }) => string
  /** The upstream's own view of every budget, read with a request that costs nothing. */
  status?: (http: Http) => Promise<Record<string, RateBudgetState>>
  /**
   * Shown only (rate-limit-status, the Usage page), not spent through the ledger: the connector's
   * own pacing keeps ready-made steps within it (the task-board's 100 requests per 10 s).
   */
  shownOnly?: boolean
}

export interface RateLimitHint {
  /** Milliseconds until the upstream will accept requests again, if the response says. */
  retryAfterMs?: number
}

/** A delivery as it reached the ingress, before anything is trusted. */
export interface IncomingDelivery {
  headers: Record<string, string>
  rawBody: string
  /** The callback address the upstream was given (some signatures cover it). */
  callbackUrl: string
}

/** How a connector's upstream webhooks are made, removed, verified and read. */
export interface WebhookSupport {
  register: (
    http: Http,
    hook: { callbackUrl: string; model: string; secret: string; description: string },
  ) => Promise<{ id: string }>
  unregister: (http: Http, id: string) => Promise<void>
  /**
   * The upstream's hooks for these credentials, to adopt one that already exists. `model` names
   * the one the caller is after, for upstreams whose hooks live per model (repository hooks).
   */
  list: (http: Http, model?: string) => Promise<Array<{ id: string; callbackUrl: string; model: string }>>
  /** Why these credentials cannot verify deliveries (e.g. no app secret), or undefined when they can. */
  cannotVerify?: (credentials: Credentials) => string | undefined
  /**
   * The upstream sends a delivery again when it is refused (a non-2xx answer), so the ingress may
   * answer 503 with Retry-After while delivery to agents lags (PATCHBAY_DELIVERY_BACKLOG_LIMIT).
   * An upstream that does not is always accepted: a refused delivery would be lost.
   */
  redelivers: boolean
  /**
   * The upstream removes the webhooks made with credentials that are revoked or expire (the
   * task-board removes a token's): a delivery that arrives, verified, shows the connection's
   * credentials still worked when it was sent, and its periodic health check is not needed
   * meanwhile (engine/connections/connection-health.ts).
   */
  provesCredentials?: boolean
  /** Checks the delivery's signature; `secret` is the one given at registration. */
  verify: (delivery: IncomingDelivery, keys: { secret: string; credentials: Credentials }) => boolean
  /** The upstream's delivery id and the events in it; `ignore` for handshakes such as pings. */
  parse: (
    delivery: IncomingDelivery,
  ) => { deliveryId: string; events: NormalizedEvent[] } | { ignore: string }
  /**
   * For deliveries that do not name the place they concern (an organization's project item
   * names only its content's node id): how to read it with the connection before the events
   * are matched.
   */
  attribute?: EventAttribution
}

/** Where an event lies, as read by an attribution lookup. */
export type EventPlace = Record<string, string | undefined>

/**
 * How a connector reads the place of an event whose delivery does not name it. The engine asks
 * only for events that a listening trigger needing a place (`eventScope` other than `account`)
 * fires for and that name no place (nor a place's group); it keeps the answers per connection for
 * a while (bounded, shared between instances when Redis is configured), waits a bounded time,
 * and records a lookup that fails as `refs.unattributed` (the event then reaches no such trigger).
 */
export interface EventAttribution {
  /** What identifies the lookup (a content's node id); undefined when there is nothing to look up. */
  subject: (event: NormalizedEvent) => string | undefined
  /** The place of `subject`, read with the connection's client; throws when it cannot be read. */
  lookup: (http: Http, subject: string) => Promise<EventPlace>
}

/** How an agent's scope is checked for a connector's steps. */
export interface ScopeSupport {
  /** The place (of one of the connector's place kinds) a scoped input value belongs to (a card's board …). */
  resolve: (http: Http, kind: ScopedKind, value: string) => Promise<{ kind: string; id: string }>
  /** What a refused API Call that names no place should address instead (`/1/boards/{id}/…`). */
  apiCallHint?: string
  /**
   * The kinds `resolve` places that events can move (a card, a list): those an event names in
   * its `refs` are looked up again on their next check, on every instance. Absent: none.
   */
  movable?: string[]
  /**
   * The scoped resources an API Call's input names, read from its method, path and body; null
   * when the call cannot be attributed to any (it is then denied to a scoped agent).
   */
  attributeApiCall(input: object): Array<{ kind: ScopedKind; value: string }> | null
  /**
   * Whether an event certainly leaves every card and list it names where they were (a card made, a
   * comment, a label added): its places are then not announced to every instance's cache of places
   * (nothing there can have become wrong). Absent, or false: they are, as for a move.
   */
  placesUnchanged?: (event: NormalizedEvent) => boolean
}

/**
 * Page addresses users may give instead of an identifier (a board's or card's web address). The
 * engine reads every scoped field of a step's input or a trigger's config that holds one into the
 * identifier before validation: it asks the upstream's API for the identifier behind the page with
 * the connection's credentials, so a step's `run` only ever sees identifiers.
 */
export interface PageAddressSupport {
  /**
   * The API request that reads the identifier behind `url` (a path below the API address, and its
   * query); undefined when `url` is not a page of `kind`.
   */
  request: (kind: ScopedKind, url: URL) => { path: string; query?: Record<string, string> } | undefined
  /** The identifier in the answer. */
  idOf: (kind: ScopedKind, data: unknown) => string | undefined
  /** The page addresses it reads, as a refusal tells them (`…/b/{shortLink}/… for a board`). */
  forms?: string
}

export interface ConnectorDefinition<Id extends string = string, S extends StepDefinition = StepDefinition> {
  id: Id
  name: string
  /** Other names users type into the step search (`task-board`, `task board`). */
  aliases: string[]
  description: string
  beta: boolean
  auth: AuthMethod[]
  /** Ready-made steps are paced to this budget per credential, shared by every caller. */
  pacing?: { points: number; durationMs: number }
  /**
   * The `User-Agent` of this connector's upstream requests; absent: Patchbay's own
   * (`Patchbay/<version>`, kit/version.ts). Every request carries one (kit/http.ts).
   */
  userAgent?: string
  /** Adds the credentials to an outgoing request. The only place a connector sees secrets. */
  authorize: (req: OutgoingRequest, credentials: Credentials) => void
  /**
   * The account behind the credentials, from an identity call; `remember`: what else the
   * upstream said about them that tells this connection apart (a fine-grained token's
   * repositories), kept with the credentials for describeCredentials.
   */
  identify: (
    http: Http,
    credentials: Credentials,
  ) => Promise<{ accountName: string; accountId: string; remember?: Credentials }>
  /**
   * The cheapest request that tells whether the credentials still work (the periodic check of a
   * connection with triggers); absent: identify. A refusal (401) lapses the connection.
   */
  accountCheck?: (http: Http, credentials: Credentials) => Promise<unknown>
  /**
   * For connectors whose address is part of the connection (the generic http connector): the
   * base address from the credentials, used instead of the configured one.
   */
  baseUrlFrom?: (credentials: Credentials) => string
  /** Credential fields that are not secret (an address, a token kind), so errors need not hide them. */
  publicCredentialFields?: string[]
  /**
   * What people need to tell connections apart, read from the credentials (a token's kind, what
   * it is restricted to), shown with each connection. Never anything secret.
   */
  describeCredentials?: (credentials: Credentials) => Record<string, string>
  /**
   * Whether a 401 means the credentials themselves were refused (the connection lapses), as
   * opposed to a permission the account lacks. Absent: every 401 is a credentials failure.
   */
  credentialsRefused?: (text: string) => boolean
  /** The upstream's own error message from an error response, for the error body. */
  errorMessage?: (status: number, text: string) => string | undefined
  /** Reads how long to wait from a refusal (429/403 rate-limit answers). */
  rateLimitHint?: (status: number, headers: Record<string, string>, text: string) => RateLimitHint | undefined
  /** Names upstream refusals the generic mapping would call UPSTREAM_REJECTED (402 → INSUFFICIENT_CREDITS). */
  classifyError?: (status: number, text: string) => ClassifiedError | undefined
  /** For upstreams that charge per request: reads the charge from each response, for the ledger. */
  metering?: Metering
  /**
   * Defaults of the per-connection result cache and of lookup coalescing for steps that use
   * `ctx.cache` / `ctx.batch`; the configuration may override them. 0 turns either off.
   */
  lookups?: { cacheTtlMs: number; cacheMaxEntries: number; coalesceWindowMs: number }
  steps: S[]
  /**
   * Its field names that abbreviate, said in full (`repo` → "Repository"): the title forms label a
   * field of its steps, triggers and credentials with, where the field declares none of its own
   * (`.meta({ title })`). Absent, or a name not listed: a title made from the name (`perPage` →
   * "Per page", `idList` → "List").
   */
  fieldTitles?: Record<string, string>
  /**
   * The upstream resources a step that changes something names in its output as made or changed,
   * as this connector's events name them (`refs.resource`, the ref its `eventRefs` mark `resource`
   * — a task-board's `card` — or the event's id): a tool
   * run remembers them, so the events they cause are known as its own (the loop guard). Absent:
   * the output's `id`s (a task-board card's id).
   */
  changedResources?: (output: unknown) => string[]
  triggers: TriggerDefinition[]
  webhooks?: WebhookSupport
  /**
   * The kinds of place this connector's resources lie in, the unit an agent's scope is written
   * in (the scope's keys are theirs). Absent: nothing of it is scoped beyond its connections.
   */
  places?: PlaceKind[]
  /**
   * The refs its events carry besides their place and its group (NormalizedEvent.refs), in the
   * agent payload's order: a task-board event's `list` and `card`. The agent payload's schema
   * (engine/events/payload.ts, the OpenAPI `webhooks` section, the SDK's types) lists them.
   */
  eventRefs?: EventRef[]
  scope?: ScopeSupport
  /**
   * What the upstream's web address serves, for connectors whose sign-in or pages live apart from
   * the API (`/login/oauth/authorize`, …): it may then be configured (PATCHBAY_<ID>_WEB_URL).
   */
  webPages?: string
  /** Page addresses accepted wherever a board or card identifier is asked for. */
  pageAddresses?: PageAddressSupport
  /** Request budgets the upstream reports on each response (code-host x-ratelimit-*). */
  rateBudget?: RateBudgetSupport
}

// The id's and the steps' types are kept, so the SDK can derive its typed step map from the
// connectors list (sdk/steps.ts) without anything being written twice.
export function defineConnector<const Id extends string, S extends StepDefinition>(
  def: ConnectorDefinition<Id, S>,
): ConnectorDefinition<Id, S> {
  return def
}
