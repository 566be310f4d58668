// Small helpers shared by the benchmarks.
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'

/**
 * The task-board's ids are ObjectIds: the second they were made, five bytes fixed per server process
 * and a counter, so a server's ids grow. Random ids would spread the events' identity index where the
 * upstream's do not.
 */
const processBytes = randomBytes(5).toString('hex')
let idCounter = randomBytes(3).readUIntBE(0, 3)
export function objectId(): string {
  idCounter = (idCounter + 1) & 0xffffff
  const seconds = Math.floor(Date.now() / 1000)
  return seconds.toString(16).padStart(8, '0') + processBytes + idCounter.toString(16).padStart(6, '0')
}
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[i]
}

export const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

/**
 * Runs `fn` `total` times with `concurrency` in flight; returns each latency (ms), the wall time,
 * and this process's CPU time per call (µs: user + system, whatever else the machine runs).
 */
export async function load(total: number, concurrency: number, fn: () => Promise<void>) {
  const latencies: number[] = []
  let next = 0
  const cpu = process.cpuUsage()
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++
        const t0 = performance.now()
        await fn()
        latencies.push(performance.now() - t0)
      }
    }),
  )
  const wallMs = performance.now() - started
  const used = process.cpuUsage(cpu)
  latencies.sort((a, b) => a - b)
  return {
    latencies,
    wallMs,
    throughput: (total / wallMs) * 1000,
    cpuUsPerCall: (used.user + used.system) / total,
  }
}

/** One target a benchmark sets itself: a figure it measured, the bound it must reach, and whether it did. */
export interface Target {
  /** What is measured, as named in the printed JSON (`c32.ratioToBareProxy`). */
  figure: string
  /** The bound: `>= 0.8`, `<= 0.3`. */
  want: string
  value: number
  met: boolean
}

export function target(figure: string, value: number, op: '>=' | '<=', bound: number): Target {
  const met = Number.isFinite(value) && (op === '>=' ? value >= bound : value <= bound)
  return { figure, want: `${op} ${bound}`, value, met }
}

/**
 * What the figures were measured on, printed with them, so runs of different days and machines are
 * compared knowingly: its processors, its load when the run ended, the kernel's transparent huge
 * pages mode (`always`, `madvise`, `never`; null where the kernel does not tell; tried for the
 * tenancy gap in docs/benchmarks.md) and Node's version.
 */
export function machine() {
  let transparentHugePages: string | null = null
  try {
    const setting = fs.readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8')
    transparentHugePages = /\[(\w+)\]/.exec(setting)?.[1] ?? null
  } catch {
    // Not Linux, or no such setting.
  }
  return {
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model ?? null,
    loadAverage: os.loadavg().map((n) => round(n, 2)),
    transparentHugePages,
    node: process.version,
  }
}

/**
 * Prints a benchmark's one JSON line: its figures, the machine they were measured on, then its
 * targets and `met` (every target met). Missing a target is a finding, not a crash: the exit code
 * stays 0.
 */
export function report(figures: { bench: string } & Record<string, unknown>, targets: Target[]): void {
  console.log(JSON.stringify({ ...figures, machine: machine(), targets, met: targets.every((t) => t.met) }))
}
