#!/usr/bin/env node
// The `patchbay` command's launcher (package.json "bin"). Installed from the package, it runs the
// built JavaScript (dist/cli/main.js). In the repository Patchbay is TypeScript that Node 24 runs
// directly; on an older Node (the machine's own may be v20) this starts src/cli/main.ts with the
// Node 24 the `node` devDependency installs (node_modules/node/bin/node), passing the terminal,
// the arguments, signals and the exit status through.
import { spawn } from 'node:child_process'
import { existsSync, realpathSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const here = dirname(realpathSync(fileURLToPath(import.meta.url)))
const main = join(here, 'main.ts')

if (!existsSync(main)) {
  const cli = await import(pathToFileURL(join(here, '..', '..', 'dist', 'cli', 'main.js')).href)
  await cli.run()
} else if (Number(process.versions.node.split('.')[0]) >= 24) {
  const cli = await import(pathToFileURL(main).href)
  await cli.run()
} else {
  let node = null
  for (let dir = here; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', 'node', 'bin', 'node')
    if (existsSync(candidate)) {
      node = candidate
      break
    }
    if (dirname(dir) === dir) break
  }
  if (!node) {
    process.stderr.write(
      `patchbay needs Node 24 or later (this is ${process.version}); run "npm ci" to install the node devDependency, or use Node 24.\n`,
    )
    process.exit(1)
  }
  const child = spawn(node, [main, ...process.argv.slice(2)], { stdio: 'inherit' })
  // Ctrl-C in a terminal reaches the whole process group, the child too: the launcher only waits
  // for it (passing SIGINT on would deliver it twice). Signals sent to the launcher alone are passed on.
  process.on('SIGINT', () => {})
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal))
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal)
      process.kill(process.pid, signal)
    } else process.exit(code ?? 1)
  })
}
