// Counts the requests an emulated upstream receives under a path prefix, to prove that something
// was (or was not) sent. It rides on the sandbox's fault injection: a fault of 1 ms latency with a
// large use count is consumed once per matching request, and what is left tells how many came.
import { control } from './taskboard.ts'

const USES = 1_000_000

export interface RequestCounter {
  /** Requests received under the prefix since the counter was started. */
  count(): Promise<number>
  stop(): Promise<void>
}

export async function countRequests(sandbox: { url: string }, pathPrefix: string): Promise<RequestCounter> {
  const fault = await control(sandbox, 'POST', '/faults', { latencyMs: 1, count: USES, pathPrefix })
  const remaining = async () => {
    const { faults } = await control(sandbox, 'GET', '/faults')
    const f = faults.find((x: { id: number }) => x.id === fault.id)
    if (!f) throw new Error(`request counter for ${pathPrefix} is gone (was the sandbox reset?)`)
    return f.remaining as number
  }
  return {
    count: async () => USES - (await remaining()),
    // Clearing removes every fault; the tests using counters add no others.
    stop: async () => {
      await control(sandbox, 'DELETE', '/faults')
    },
  }
}
