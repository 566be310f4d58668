// The `patchbay` command: `patchbay <command> [subcommand] [arguments] [--flags]`. Started by the
// launcher (patchbay.mjs) or directly: `node src/cli/main.ts …` on Node 24.
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { DEFAULT_URL, PatchbayClient } from '../sdk/client.ts'
import { type Command, type Context, commands, type OptionSpec } from './commands.ts'
import { readLogin, storedKey } from './login.ts'
import { bold, dim, reportError, stdio, UsageError } from './output.ts'

const GLOBAL: Record<string, OptionSpec & { help: string; value?: string }> = {
  url: { type: 'string', help: `Patchbay's address (PATCHBAY_URL, default ${DEFAULT_URL})`, value: 'url' },
  key: { type: 'string', help: 'An API key: the workspace key or an agent key (PATCHBAY_KEY)', value: 'key' },
  json: { type: 'boolean', help: 'Machine-readable output (JSON)' },
  help: { type: 'boolean', short: 'h', help: 'Show help' },
  version: { type: 'boolean', help: 'Show the version' },
}

const version = (): string =>
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version

const flagsHelp = (options: Record<string, OptionSpec & { help: string; value?: string }>) => {
  const rows = Object.entries(options).map(([name, o]) => [
    `${o.short ? `-${o.short}, ` : ''}--${name}${o.value ? ` <${o.value}>` : ''}`,
    `${o.help}${o.multiple ? ' (repeatable)' : ''}`,
  ])
  const width = Math.max(...rows.map((r) => r[0].length))
  return rows.map(([a, b]) => `  ${a.padEnd(width)}  ${b}`).join('\n')
}

function usage(prefix: string[] = []): string {
  const matching = commands.filter((c) => prefix.every((p, i) => c.path[i] === p))
  const exact = matching.find((c) => c.path.length === prefix.length)
  if (exact)
    return [
      `${bold('Usage:')} patchbay ${exact.path.join(' ')}${exact.args ? ` ${exact.args}` : ''}${exact.options ? ' [flags]' : ''}`,
      '',
      exact.summary,
      ...(exact.options ? ['', bold('Flags:'), flagsHelp(exact.options)] : []),
      '',
      bold('Global flags:'),
      flagsHelp(GLOBAL),
    ].join('\n')
  const lines = matching.map((c) => [`patchbay ${c.path.join(' ')}${c.args ? ` ${c.args}` : ''}`, c.summary])
  const width = Math.max(...lines.map((l) => l[0].length))
  return [
    `${bold('Usage:')} patchbay <command> [flags]   (npx patchbay …)`,
    '',
    bold('Commands:'),
    ...lines.map(([a, b]) => `  ${a.padEnd(width)}  ${dim(b)}`),
    '',
    bold('Global flags:'),
    flagsHelp(GLOBAL),
    '',
    `Run "patchbay <command> --help" for a command's flags.`,
  ].join('\n')
}

/** Every option any command knows, so a first pass can tell flag values from command words. */
function allOptions() {
  const all: Record<string, OptionSpec> = { ...GLOBAL }
  for (const c of commands) Object.assign(all, c.options)
  return all
}

function strip(options: Record<string, OptionSpec & { help?: string; value?: string }>) {
  return Object.fromEntries(
    Object.entries(options).map(([k, { type, multiple, short }]) => [
      k,
      { type, ...(multiple ? { multiple } : {}), ...(short ? { short } : {}) },
    ]),
  )
}

function findCommand(words: string[]): { command: Command | null; used: number } {
  for (let n = Math.min(words.length, 3); n > 0; n--) {
    const c = commands.find((x) => x.path.length === n && x.path.every((p, i) => p === words[i]))
    if (c) return { command: c, used: n }
  }
  return { command: null, used: 0 }
}

export async function main(argv: string[]): Promise<number> {
  const loose = parseArgs({ args: argv, options: strip(allOptions()), strict: false, allowPositionals: true })
  const o = stdio(loose.values.json === true)
  try {
    if (loose.values.version) {
      o.out(version())
      return 0
    }
    const words = loose.positionals
    if (words[0] === 'help') {
      o.out(usage(words.slice(1)))
      return 0
    }
    const { command, used } = findCommand(words)
    if (!command) {
      // The longest run of words that begins some command: `agents keys` in `agents keys frob`.
      let depth = 0
      while (
        depth < words.length &&
        commands.some((c) => words.slice(0, depth + 1).every((w, i) => c.path[i] === w))
      )
        depth++
      const prefix = words.slice(0, depth)
      if (loose.values.help) {
        o.out(usage(prefix))
        return 0
      }
      if (words.length === 0) throw new UsageError('Name a command.', usage())
      if (depth === words.length)
        throw new UsageError(`"patchbay ${prefix.join(' ')}" needs a subcommand.`, usage(prefix))
      throw new UsageError(`Unknown command "${words.slice(0, depth + 1).join(' ')}".`, usage(prefix))
    }
    const spec = { ...GLOBAL, ...command.options }
    let parsed: ReturnType<typeof parseArgs>
    try {
      parsed = parseArgs({ args: argv, options: strip(spec), strict: true, allowPositionals: true })
    } catch (err) {
      throw new UsageError(
        `${(err as Error).message.replace(/\. To specify a positional argument.*$/s, '.')}`,
        `Run "patchbay ${command.path.join(' ')} --help" for its flags.`,
      )
    }
    if (parsed.values.help) {
      o.out(usage(command.path))
      return 0
    }
    const positionals = parsed.positionals.slice(used)
    const [least, most] = command.positionals ?? [0, 0]
    if (positionals.length < least || positionals.length > most)
      throw new UsageError(
        positionals.length < least
          ? `"patchbay ${command.path.join(' ')}" needs ${command.args}.`
          : `Unexpected argument "${positionals[most]}".`,
        usage(command.path),
      )
    // The address given, else the one of the login (patchbay login), else the default; the key
    // given, else the login's key for the current workspace when it was made at that address.
    const login = readLogin()
    const url = (
      (parsed.values.url as string | undefined) ??
      process.env.PATCHBAY_URL ??
      login?.url ??
      DEFAULT_URL
    ).replace(/\/+$/, '')
    const key = (parsed.values.key as string | undefined) ?? process.env.PATCHBAY_KEY ?? storedKey(url)
    const ctx: Context = {
      values: parsed.values as Context['values'],
      positionals,
      o,
      url,
      key,
      client: () => {
        if (!key) throw new UsageError('No API key: give --key, set PATCHBAY_KEY, or run "patchbay login".')
        return new PatchbayClient({ url, key })
      },
    }
    return (await command.run(ctx)) ?? 0
  } catch (err) {
    return reportError(o, err)
  }
}

/** Runs the command line of this process and exits with its status. */
export async function run(): Promise<void> {
  const status = await main(process.argv.slice(2))
  // Let stdout drain before leaving (a pipe may still hold output).
  if (process.stdout.writableLength === 0) process.exit(status)
  else process.stdout.once('drain', () => process.exit(status))
}

if (import.meta.main) await run()
