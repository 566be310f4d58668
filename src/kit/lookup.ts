// Lookups that spend credits wisely, for any connector whose upstream charges per record: answers
// still fresh in the connection's cache (or being fetched by another caller) are reused for free;
// the rest are held against the caller's budget at their worst-case cost, then sent through the
// connection's batcher (bulk calls, shared with concurrent callers) and kept in the cache.
import type { BatchSpec } from './batcher.ts'
import type { StepContext } from './define.ts'
import type { Http } from './http.ts'

export interface LookupOutcome<R> {
  result: R
  /** True when this run was not charged for the result: it came from the cache or another caller. */
  cached: boolean
}

export function defineLookup<Q, R>(spec: BatchSpec<Q, R>): BatchSpec<Q, R> {
  return spec
}

export async function lookupAll<Q, R>(
  ctx: StepContext,
  spec: BatchSpec<Q, R>,
  queries: Q[],
): Promise<LookupOutcome<R>[]> {
  const keys = queries.map((q) => spec.cacheKey(q))
  const out: Array<Promise<LookupOutcome<R>> | undefined> = new Array(queries.length)
  const reused = (p: Promise<R> | R) => {
    const r = Promise.resolve(p).then((result) => ({ result, cached: true }))
    // Observed by Promise.all below, or by nobody when the budget refuses first.
    r.catch(() => {})
    return r
  }

  // Results another instance paid for are fetched into this process's cache first.
  if (ctx.cache) {
    const local = keys.filter((k) => ctx.cache!.lookup(k).state === 'miss')
    await ctx.cache.fetchShared([...new Set(local)])
  }
  // What the cache holds or is fetching already costs nothing; the rest, once per distinct key.
  const wanted = new Map<string, { query: Q; indexes: number[] }>()
  keys.forEach((key, i) => {
    const found = ctx.cache?.lookup<R>(key) ?? { state: 'miss' as const }
    if (found.state === 'hit') out[i] = reused(found.value)
    else if (found.state === 'pending') out[i] = reused(found.promise)
    else {
      const w = wanted.get(key)
      if (w) w.indexes.push(i)
      else wanted.set(key, { query: queries[i], indexes: [i] })
    }
  })

  let worstCase = 0
  for (const { query } of wanted.values()) worstCase += spec.worstCaseCredits?.(query) ?? 0
  const release = worstCase > 0 && ctx.credits ? await ctx.credits.reserve(worstCase) : () => {}
  try {
    // Claim each key: another caller may have started fetching it while the budget was checked.
    const mine: Array<{
      query: Q
      indexes: number[]
      settle: (r: R, keep: boolean) => void
      fail: (e: unknown) => void
    }> = []
    for (const [key, w] of wanted) {
      const claim = ctx.cache?.claim<R>(key) ?? { owner: true as const, settle: () => {}, fail: () => {} }
      if (claim.owner) {
        mine.push({ query: w.query, indexes: w.indexes, settle: claim.settle, fail: claim.fail })
        continue
      }
      const p = reused(claim.lookup.state === 'hit' ? claim.lookup.value : claim.lookup.promise)
      for (const i of w.indexes) out[i] = p
    }
    if (mine.length > 0) {
      let results: R[]
      try {
        const qs = mine.map((m) => m.query)
        results = ctx.batch ? await ctx.batch(spec, qs) : await sendDirect(ctx.http, spec, qs)
      } catch (err) {
        for (const m of mine) m.fail(err)
        throw err
      }
      mine.forEach((m, j) => {
        const result = results[j]
        const keep = spec.cacheable?.(result) ?? true
        m.settle(result, keep)
        if (keep && ctx.cache) for (const k of spec.resultKeys?.(result) ?? []) ctx.cache.put(k, result)
        // A record asked for twice in one request is paid for once.
        m.indexes.forEach((i, n) => {
          out[i] = Promise.resolve({ result, cached: n > 0 })
        })
      })
    }
    return await Promise.all(out as Array<Promise<LookupOutcome<R>>>)
  } finally {
    release()
  }
}

/** Without a batcher: the same bulk chunks, sent one after another with the step's own client. */
async function sendDirect<Q, R>(http: Http, spec: BatchSpec<Q, R>, queries: Q[]): Promise<R[]> {
  if (queries.length === 1 && spec.sendOne) return [(await spec.sendOne(http, queries[0])).data]
  const out: R[] = []
  const max = Math.max(1, spec.maxSize)
  for (let i = 0; i < queries.length; i += max) {
    const res = await spec.sendMany(http, queries.slice(i, i + max))
    out.push(...res.data)
  }
  return out
}
