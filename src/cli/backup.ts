// `patchbay backup`: a consistent copy of the embedded SQLite store, made with SQLite's own online
// backup API (node:sqlite backup()), so it is safe while Patchbay is running and writing. The copy
// is checked (PRAGMA integrity_check) before it is reported done.
import fs from 'node:fs'
import path from 'node:path'
import { backup, DatabaseSync } from 'node:sqlite'
import { UsageError } from './output.ts'

export interface BackupResult {
  from: string
  to: string
  pages: number
  /** Where the master key is, which the copy does not hold. */
  masterKey: string
}

export async function backupStore(opts: {
  dataDir: string
  to?: string
  now?: Date
  /** Told the pages copied and the store's pages after each step of the copy (64 pages a step). */
  onProgress?: (copied: number, total: number) => void
}): Promise<BackupResult> {
  const from = path.resolve(opts.dataDir, 'patchbay.db')
  if (!fs.existsSync(from))
    throw new UsageError(
      `There is no store at ${from}. Give --data-dir (or PATCHBAY_DATA_DIR) of the Patchbay to back up.`,
    )
  const stamp = (opts.now ?? new Date()).toISOString().replace(/[:.]/g, '-')
  const to = path.resolve(opts.to ?? `patchbay-backup-${stamp}.db`)
  if (fs.existsSync(to)) throw new UsageError(`${to} already exists; give another --to.`)
  const source = new DatabaseSync(from)
  let pages: number
  try {
    source.exec('PRAGMA busy_timeout = 5000')
    pages = await backup(source, to, {
      rate: 64,
      progress: ({ totalPages, remainingPages }) =>
        opts.onProgress?.(totalPages - remainingPages, totalPages),
    })
    opts.onProgress?.(pages, pages)
  } finally {
    source.close()
  }
  const copy = new DatabaseSync(to, { readOnly: true })
  try {
    const check = copy.prepare('PRAGMA integrity_check').get() as { integrity_check: string }
    if (check.integrity_check !== 'ok')
      throw new Error(`The copy at ${to} failed its check: ${check.integrity_check}`)
  } finally {
    copy.close()
  }
  return { from, to, pages, masterKey: path.resolve(opts.dataDir, 'master.key') }
}
