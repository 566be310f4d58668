// The loop guard. A change Patchbay's own tool run makes upstream (a card it creates) comes back
// as an event, which may start the same tool again, and so on. Each tool run remembers what its
// steps made or changed one level deeper than the event that started it (tools/tool-service.ts,
// store/causations.ts); an event about one of those carries that depth, and a tool run for an
// event at the limit is refused with the reason recorded on its delivery.
import type { Causations } from '../../store/causations.ts'
import type { Registry } from '../registry.ts'
import type { ToolService } from '../tools/tool-service.ts'

/** The default limit: a tool may answer its own change this many times in a row. */
export const DEFAULT_LOOP_DEPTH_LIMIT = 3
/** How long a run waits for the agent's runs under way to say what they changed. */
const WAIT_FOR_RUNS_MS = 30_000
/** Runs started longer ago than this are not waited for (finished, or their instance stopped). */
const RECENT_RUN_MS = 2 * 60_000

export interface CausedEvent {
  workspaceId: string
  agentId: string
  connector: string
  /** The upstream's id of the happening (an action id: a step's output may name it). */
  upstreamId: string
  refs: { resource?: string; [k: string]: string | undefined }
}

export class LoopGuard {
  readonly limit: number
  #causations: Causations
  #tools: Pick<ToolService, 'running'>
  #registry: Pick<Registry, 'connector'>

  constructor(deps: {
    causations: Causations
    tools: Pick<ToolService, 'running'>
    registry: Pick<Registry, 'connector'>
    limit?: number
  }) {
    this.#causations = deps.causations
    this.#tools = deps.tools
    this.#registry = deps.registry
    this.limit = deps.limit ?? DEFAULT_LOOP_DEPTH_LIMIT
  }

  /** The event's causation depth, and why a tool run for it is refused (null: it may run). */
  async check(e: CausedEvent): Promise<{ depth: number; refused: string | null }> {
    // The event is about the happening itself (its action id) or the resource it changed: the ref
    // its connector marks as naming it (kit/define.ts EventRef.resource: a task-board's card), or
    // refs.resource (a code-host issue or comment).
    const named = (this.#registry.connector(e.connector)?.eventRefs ?? [])
      .filter((r) => r.resource)
      .map((r) => e.refs[r.name])
    const refs = [e.upstreamId, ...named, e.refs.resource].filter(
      (r): r is string => typeof r === 'string' && r !== '',
    )
    let depth = await this.#causations.depthOf(e.workspaceId, e.connector, refs)
    // The upstream may report a change before the step that made it has returned: while the
    // agent has runs under way, they may yet say this event is theirs.
    // Only runs started recently count: one its instance stopped in the middle of stays `running`
    // in the store, and must not hold every later run of the agent up.
    const until = Date.now() + WAIT_FOR_RUNS_MS
    const since = new Date(Date.now() - RECENT_RUN_MS).toISOString()
    while (
      depth === 0 &&
      Date.now() < until &&
      (await this.#tools.running(e.workspaceId, e.agentId, since)) > 0
    ) {
      await new Promise((r) => setTimeout(r, 100))
      depth = await this.#causations.depthOf(e.workspaceId, e.connector, refs)
    }
    if (depth < this.limit) return { depth, refused: null }
    return {
      depth,
      refused:
        `the event was caused by this workspace's own tool runs at depth ${depth} ` +
        `(a tool's change started a tool run whose change started another …); the limit is ${this.limit} ` +
        '(PATCHBAY_LOOP_DEPTH_LIMIT), so the tool was not run. Check that the tool does not make the change its trigger listens for.',
    }
  }
}
