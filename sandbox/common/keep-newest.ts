// The sandboxes' logs (requests, webhook deliveries) keep their newest entries only.

/**
 * Keeps the newest `kept` entries of a log that grows at its end: once it holds a twentieth more,
 * the oldest are dropped together. Dropping the oldest at every entry moved the whole array each
 * time (in bench/step-overhead.ts, a sixth of the task-board sandbox's CPU a request once its
 * request log held 20,000).
 */
export function keepNewest<T>(log: T[], kept: number): void {
  if (log.length > kept + Math.ceil(kept / 20)) log.splice(0, log.length - kept)
}
