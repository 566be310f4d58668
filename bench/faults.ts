// `node bench/faults.ts`: runs the faults suite (test/faults/, its private PostgreSQL and Redis)
// and prints the figures of each scenario: a Markdown table on stderr (the one in
// docs/operating.md), and one JSON line on stdout with the targets of issue 28 and `met`.
// FAULTS_OUTAGE_MS sets how long each outage lasts (15 s by default).
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

const root = path.resolve(import.meta.dirname, '..')
const files = fs
  .readdirSync(path.join(root, 'test/faults'))
  .filter((f) => f.endsWith('.faults.ts'))
  .sort()
  .map((f) => path.join('test/faults', f))
const started = Date.now()
const run = spawnSync(process.execPath, ['--test', '--test-concurrency=1', '--test-reporter=tap', ...files], {
  cwd: root,
  encoding: 'utf8',
  maxBuffer: 64 * 1024 * 1024,
  env: { ...process.env, NODE_COMPILE_CACHE: 'node_modules/.cache/node-compile' },
})
const out = `${run.stdout ?? ''}\n${run.stderr ?? ''}`
const figures = out
  .split('\n')
  .map((l) => l.replace(/^#\s*/, '').trim())
  .filter((l) => l.startsWith('FAULTS '))
  .map((l) => JSON.parse(l.slice('FAULTS '.length)) as Record<string, any>)
const skipped = out
  .split('\n')
  .filter((l) => /scenario skipped/.test(l))
  .map((l) => l.replace(/^#\s*/, ''))

const count = (o: Record<string, number> | undefined, k: string) => o?.[k] ?? 0
const rows = figures.map((f) => {
  switch (f.scenario) {
    case 'postgresql-stopped':
      return [
        `PostgreSQL stopped ${f.outageMs / 1000} s under ingress, ${f.instances} instance${f.instances > 1 ? 's' : ''}`,
        `${f.processesUp}/${f.instances} up; webhooks ${count(f.answersDuringOutage, '503')} × 503 (all with Retry-After: ${f.withoutRetryAfter === 0 ? 'yes' : 'no'}), 0 × 500; API ${count(f.apiAnswers, '503')} × 503`,
        `503, "${String(f.readyzReason)
          .replace(/ since \S+:/, ':')
          .slice(0, 70)}"`,
        `${f.acknowledged} acknowledged, ${f.delivered} delivered once each`,
        `${(f.recoveredMsAfterDatabaseBack / 1000).toFixed(1)} s after the database`,
      ]
    case 'redis-stopped':
      return [
        `Redis stopped ${f.outageMs / 1000} s under paced steps, ${f.instances} instances`,
        `${f.steps} steps: ${Object.entries(f.answers)
          .map(([k, v]) => `${v} × ${k}`)
          .join(
            ', ',
          )}; ${f.answers500} × 500; ${f.outageWarnings} warning lines, ${f.unhandledIoredisLines} unhandled`,
        'ready (Redis reported, an accelerator)',
        `a change made meanwhile reached the other instance: ${f.changeDuringOutageSeenByOther ? 'yes' : 'no'}`,
        `${(f.readyAgainMsAfterRedisBack / 1000).toFixed(1)} s after Redis`,
      ]
    case 'disk-below-threshold':
    case 'disk-full':
      return [
        f.scenario === 'disk-full'
          ? `embedded database's disk full (${f.tmpfsMb} MiB tmpfs) ${f.fullMs / 1000} s`
          : `free disk under PATCHBAY_MIN_FREE_DISK_MB=${f.minFreeDiskMb} ${f.fullMs / 1000} s`,
        `webhooks ${count(f.answersWhileFull, '503')} × 503 STORAGE_FULL (Retry-After on all: ${f.withoutRetryAfter === 0 ? 'yes' : 'no'}), ${f.answers500} × 500; API write ${f.apiWriteWhileFull}, read ${f.apiReadWhileFull}`,
        `503, "${String(f.readyzWhileFull)
          .replace(/^full since \S+: /, 'full: ')
          .slice(0, 60)}"`,
        `${f.acknowledged} acknowledged, ${f.delivered} delivered once each`,
        `${(f.recoveredMsAfterSpaceFreed / 1000).toFixed(1)} s after space was freed`,
      ]
    case 'sigterm-and-restart-under-traffic':
      return [
        'SIGTERM under load, started again under traffic',
        `exit ${f.exitCode} in ${(f.stopMs / 1000).toFixed(1)} s; ${f.answers401} × 401, ${count(f.answers, '500')} × 500; ${count(f.answers, '503')} × 503 while stopping, ${count(f.answers, '0')} refused connections while down`,
        '—',
        `${f.acknowledged} acknowledged, ${f.delivered} delivered once each`,
        'at once after start',
      ]
    case 'upstream-fails-then-hangs':
      return [
        `upstream answers 500 for ${f.phaseMs / 1000} s, then hangs ${f.phaseMs / 1000} s`,
        `steps ${count(f.steps.failing, '502')} × 502 UPSTREAM_ERROR, then ${count(f.steps.hanging, '504')} × 504 UPSTREAM_TIMEOUT, 0 × 500; manual poll ${f.manualPolls.failing.status} ${f.manualPolls.failing.code}, then ${f.manualPolls.hanging.status} ${f.manualPolls.hanging.code}`,
        'ready (an upstream is not a dependency of readiness)',
        `webhooks meanwhile: ${f.webhooksAcknowledged} acknowledged, ${f.webhooksDelivered} delivered`,
        `${(f.recoveredMsAfterUpstreamBack / 1000).toFixed(1)} s after the upstream`,
      ]
    default:
      return [f.scenario, JSON.stringify(f), '', '', '']
  }
})
const table = [
  '| scenario | what clients saw | /readyz meanwhile | acknowledged → delivered | recovery (no restart) |',
  '|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.join(' | ')} |`),
].join('\n')
process.stderr.write(`${table}\n${skipped.map((s) => `\n${s}`).join('')}\n`)

const byScenario = (name: string) => figures.filter((f) => f.scenario === name)
const pg = byScenario('postgresql-stopped')
const disk = [...byScenario('disk-full'), ...byScenario('disk-below-threshold')]
const target = (figure: string, want: string | number, value: unknown, met: boolean) => ({
  figure,
  want,
  value,
  met,
})
const targets = [
  target(
    'PostgreSQL stopped: instances tried',
    '1 and 3',
    pg.map((f) => f.instances).join(', '),
    pg
      .map((f) => f.instances)
      .sort()
      .join(',') === '1,3',
  ),
  target(
    'PostgreSQL stopped: processes up',
    'all',
    pg.map((f) => `${f.processesUp}/${f.instances}`).join(', '),
    pg.every((f) => f.processesUp === f.instances),
  ),
  target(
    'PostgreSQL stopped: 503 with Retry-After',
    'every refusal',
    pg.map((f) => `${count(f.answersDuringOutage, '503')} × 503, ${f.withoutRetryAfter} without`).join('; '),
    pg.every(
      (f) =>
        count(f.answersDuringOutage, '503') > 0 && f.withoutRetryAfter === 0 && count(f.answers, '500') === 0,
    ),
  ),
  target(
    'PostgreSQL stopped: /readyz says why',
    'unreachable …',
    pg.map((f) => f.readyzReason).join('; '),
    pg.length > 0 && pg.every((f) => /unreachable/.test(f.readyzReason ?? '')),
  ),
  target(
    'PostgreSQL stopped: acknowledged deliveries arrive',
    'all',
    pg.map((f) => `${f.delivered}/${f.acknowledged}`).join(', '),
    pg.every((f) => f.delivered === f.acknowledged),
  ),
  target(
    'Redis stopped: answers of 500',
    0,
    byScenario('redis-stopped')
      .map((f) => f.answers500)
      .join(', '),
    byScenario('redis-stopped').length > 0 && byScenario('redis-stopped').every((f) => f.answers500 === 0),
  ),
  target(
    'full disk: answers of 500, /readyz not ready',
    '0, not ready',
    disk.map((f) => `${f.answers500}, ${f.readyzWhileFull}`).join('; '),
    skipped.length > 0 ||
      (disk.length > 0 && disk.every((f) => f.answers500 === 0 && /^full/.test(f.readyzWhileFull))),
  ),
  target(
    'restart under traffic: deliveries answered 401',
    0,
    byScenario('sigterm-and-restart-under-traffic')
      .map((f) => f.answers401)
      .join(', '),
    byScenario('sigterm-and-restart-under-traffic').every((f) => f.answers401 === 0),
  ),
]
const summary = {
  bench: 'faults',
  seconds: Math.round((Date.now() - started) / 1000),
  suitePassed: run.status === 0,
  scenarios: figures,
  skipped,
  targets,
  met: run.status === 0 && targets.every((t) => t.met),
}
// --write-docs: the table goes into docs/operating.md between its markers, with when it was taken.
if (process.argv.includes('--write-docs')) {
  const doc = path.join(root, 'docs/operating.md')
  const text = fs.readFileSync(doc, 'utf8')
  const when = new Date().toISOString().slice(0, 16).replace('T', ' ')
  const block = `<!-- faults:start -->\nFigures of \`node bench/faults.ts\` (${when} UTC, the shared 2-core machine under other engineers' load; ${summary.seconds} s):\n\n${table}\n<!-- faults:end -->`
  fs.writeFileSync(doc, text.replace(/<!-- faults:start -->[\s\S]*<!-- faults:end -->/, block))
}
process.stdout.write(`${JSON.stringify(summary)}\n`)
process.exit(run.status === 0 ? 0 : 1)
