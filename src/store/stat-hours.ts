// Rolled-up hours of the statistics (migration 0013): a series' count, value and latency
// histogram per workspace, hour and key. The histogram column is JSON text, read and written
// here only (bucket → count). Each function takes the database or a transaction.
import type { Kysely } from 'kysely'
import type { Database } from './schema.ts'

type Db = Kysely<Database>

/** Latency counts by log-spaced bucket (engine/stats/stats.ts). */
export type StatHistogram = Map<number, number>

/** One rolled-up hour of a series, its histogram read. */
export interface StatHourRow {
  series: string
  /** `YYYY-MM-DDTHH`. */
  hour: string
  key: string
  n: number
  v: number
  hist: StatHistogram | undefined
}

const readHist = (s: string): StatHistogram =>
  new Map(Object.entries(JSON.parse(s) as Record<string, number>).map(([k, v]) => [Number(k), v]))
const writeHist = (h: StatHistogram) => JSON.stringify(Object.fromEntries(h))

export const statHours = {
  /** A workspace's rolled-up hours of the given series in [fromHour, toHour). */
  async read(
    db: Db,
    workspaceId: string,
    series: string[],
    fromHour: string,
    toHour: string,
  ): Promise<StatHourRow[]> {
    const rows = await db
      .selectFrom('stat_hours')
      .select(['series', 'hour', 'key', 'n', 'v', 'hist'])
      .where('workspace_id', '=', workspaceId)
      .where('series', 'in', series)
      .where('hour', '>=', fromHour)
      .where('hour', '<', toHour)
      .execute()
    return rows.map((r) => ({
      series: r.series,
      hour: r.hour,
      key: r.key,
      n: Number(r.n),
      v: Number(r.v),
      hist: r.hist ? readHist(r.hist) : undefined,
    }))
  },

  /** Replaces a workspace's rolled-up hours in [fromHour, toHour) with `rows` (in a transaction). */
  async replace(
    db: Db,
    workspaceId: string,
    fromHour: string,
    toHour: string,
    rows: Array<Omit<StatHourRow, 'hist'> & { hist?: StatHistogram }>,
  ): Promise<void> {
    await db
      .deleteFrom('stat_hours')
      .where('workspace_id', '=', workspaceId)
      .where('hour', '>=', fromHour)
      .where('hour', '<', toHour)
      .execute()
    const values = rows.map((r) => ({
      workspace_id: workspaceId,
      series: r.series,
      hour: r.hour,
      key: r.key,
      n: r.n,
      v: r.v,
      hist: r.hist ? writeHist(r.hist) : null,
    }))
    for (let i = 0; i < values.length; i += 500)
      await db
        .insertInto('stat_hours')
        .values(values.slice(i, i + 500))
        .execute()
  },
}
