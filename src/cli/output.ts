// How the CLI talks: tables and readable lines for people, JSON for scripts (--json), a spinner on
// stderr while waiting (only when stderr is a terminal), and errors with code, message and hint.
import stringWidth from 'string-width'
import { ERROR_CODES, type ErrorCodeDefinition } from '../kit/error-codes.ts'
import { PatchbayApiError } from '../sdk/errors.ts'

/** A mistake in the command line itself: exit status 2. */
export class UsageError extends Error {
  readonly help?: string
  constructor(message: string, help?: string) {
    super(message)
    this.name = 'UsageError'
    this.help = help
  }
}

export interface Output {
  json: boolean
  out: (line: string) => void
  err: (line: string) => void
}

export const stdio = (json: boolean): Output => ({
  json,
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
})

const color = (code: number) => (s: string) => (process.stderr.isTTY ? `\x1b[${code}m${s}\x1b[0m` : s)
export const bold = color(1)
export const dim = color(2)
export const red = color(31)
export const green = color(32)

/**
 * A table with a header row; cells are cut to `max` columns on a terminal. Widths are the columns
 * a terminal gives the text (string-width: a CJK character or an emoji takes two), not its length.
 */
export function table(rows: ReadonlyArray<object>, columns: string[], max = 60): string {
  const cut = (v: unknown) => {
    const s = v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v)
    const flat = s.replace(/\s+/g, ' ')
    if (!process.stdout.isTTY || stringWidth(flat) <= max) return flat
    let out = ''
    for (const { segment } of new Intl.Segmenter().segment(flat)) {
      if (stringWidth(out + segment) > max - 1) break
      out += segment
    }
    return `${out}…`
  }
  const cells = rows.map((r) => columns.map((c) => cut((r as Record<string, unknown>)[c])))
  // accountName → ACCOUNT NAME
  const header = columns.map((c) => c.replace(/([a-z])([A-Z])/g, '$1 $2').toUpperCase())
  const widths = header.map((h, i) => Math.max(stringWidth(h), ...cells.map((row) => stringWidth(row[i]))))
  const line = (values: string[]) =>
    values
      .map((v, i) => (i === values.length - 1 ? v : v + ' '.repeat(widths[i] - stringWidth(v))))
      .join('  ')
      .trimEnd()
  return [line(header), ...cells.map(line)].join('\n')
}

/** Shows a spinner with `label` on stderr (a terminal only) until `work` settles. */
export async function withProgress<T>(label: string, work: Promise<T>): Promise<T> {
  if (!process.stderr.isTTY) return work
  const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']
  const started = Date.now()
  let i = 0
  const draw = () => {
    const seconds = ((Date.now() - started) / 1000).toFixed(1)
    process.stderr.write(`\r\x1b[K${frames[i++ % frames.length]} ${label} ${dim(`${seconds}s`)}`)
  }
  draw()
  const timer = setInterval(draw, 80)
  try {
    return await work
  } finally {
    clearInterval(timer)
    process.stderr.write('\r\x1b[K')
  }
}

/** Prints an error the way a person (or, with --json, a script) can act on; returns the exit status. */
export function reportError(o: Output, err: unknown): number {
  if (err instanceof UsageError) {
    o.err(`${red('error:')} ${err.message}`)
    if (err.help) o.err(err.help)
    return 2
  }
  if (err instanceof PatchbayApiError) {
    if (o.json)
      o.out(
        JSON.stringify({
          error: {
            code: err.code,
            message: err.message,
            hint: err.hint,
            retryAfterMs: err.retryAfterMs,
            upstream: err.upstream,
            details: err.details,
          },
        }),
      )
    o.err(`${red('error:')} ${bold(err.code)} (HTTP ${err.status}): ${err.message}`)
    if (err.hint) o.err(`${dim('hint:')} ${err.hint}`)
    const here = (ERROR_CODES as Record<string, ErrorCodeDefinition>)[err.code]?.cli
    if (here) o.err(`${dim('with patchbay:')} ${here}`)
    if (err.retryAfterMs !== undefined) o.err(`${dim('retry after:')} ${err.retryAfterMs} ms`)
    if (err.upstream) o.err(`${dim('upstream:')} ${err.upstream.status} ${err.upstream.body ?? ''}`.trimEnd())
    return 1
  }
  const e = err as Error & { cause?: { code?: string; message?: string } }
  if (e?.name === 'TypeError' && e.message === 'fetch failed') {
    o.err(`${red('error:')} could not reach Patchbay: ${e.cause?.code ?? e.cause?.message ?? 'no answer'}`)
    o.err(`${dim('hint:')} Is it running? Set its address with --url or PATCHBAY_URL.`)
    return 1
  }
  o.err(`${red('error:')} ${e?.message ?? String(err)}`)
  return 1
}

/**
 * A progress bar on stderr for long work: redrawn in place on a terminal; elsewhere (or with
 * `lines`) one line per whole ten per cent, so a log or a script sees it too.
 */
export function progressBar(label: string, opts: { lines?: boolean } = {}) {
  const tty = process.stderr.isTTY && !opts.lines
  let lastTenth = -1
  return {
    update(done: number, total: number) {
      const share = total > 0 ? Math.min(1, done / total) : 1
      const pct = Math.floor(share * 100)
      if (tty) {
        const width = 30
        const full = Math.round(share * width)
        process.stderr.write(
          `\r\x1b[K${label} [${'#'.repeat(full)}${'.'.repeat(width - full)}] ${pct} % (${done} of ${total})`,
        )
        if (share >= 1) process.stderr.write('\n')
        return
      }
      const tenth = Math.floor(pct / 10)
      if (!opts.lines || tenth === lastTenth) return
      lastTenth = tenth
      process.stderr.write(`${label}: ${pct} % (${done} of ${total})\n`)
    },
  }
}
