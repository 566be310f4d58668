// What an account can see upstream (task-board boards, code-host repositories), read through the
// same choices the forms' pickers list (GET /v1/steps/:id/options/:field). Feeds the agent scope
// pickers.
import { useEffect, useState } from 'react'
import { loadChoices } from './choices.ts'
import type { Connection } from './types.ts'

export interface Board {
  id: string
  name: string
}
export interface Repository {
  fullName: string
  private: boolean
}

export interface Directory {
  boards: Board[]
  repositories: Repository[]
}

/** The fields whose choices the directory reads (their pickers, as the step forms do). */
const BOARDS = '/v1/steps/taskboard.create_list/options/idBoard'
const OWNERS = '/v1/steps/codehost.get_repository/options/owner'
const REPOS = '/v1/steps/codehost.get_repository/options/repo'

export async function loadBoards(connectionId: string): Promise<Board[]> {
  return (await loadChoices(BOARDS, { connectionId })).map((c) => ({ id: c.value, name: c.label }))
}

export async function loadRepositories(connectionId: string): Promise<Repository[]> {
  const owners = await loadChoices(OWNERS, { connectionId })
  const per = await Promise.all(
    owners.map(async (o) =>
      (await loadChoices(REPOS, { connectionId, owner: o.value })).map((r) => ({
        fullName: `${o.value}/${r.value}`,
        private: r.detail === 'private',
      })),
    ),
  )
  return per.flat()
}

const cache = new Map<string, Promise<Directory>>()

async function loadDirectory(c: Connection): Promise<Directory> {
  if (c.connector === 'taskboard') {
    return { boards: await loadBoards(c.id), repositories: [] }
  }
  if (c.connector === 'codehost') return { boards: [], repositories: await loadRepositories(c.id) }
  return { boards: [], repositories: [] }
}

export function directoryOf(c: Connection, fresh = false): Promise<Directory> {
  let p = cache.get(c.id)
  if (!p || fresh) {
    p = loadDirectory(c)
    cache.set(c.id, p)
    p.catch(() => cache.delete(c.id))
  }
  return p
}

/** The directories of some connections (boards, lists, repositories), merged. */
export function useDirectory(connections: Connection[]): {
  directory: Directory
  loading: boolean
  error: unknown
  refresh: () => void
} {
  const [directory, setDirectory] = useState<Directory>({ boards: [], repositories: [] })
  const [loading, setLoading] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const [round, setRound] = useState(0)
  const ids = connections
    .filter((c) => c.status === 'active' && (c.connector === 'taskboard' || c.connector === 'codehost'))
    .map((c) => c.id)
    .join(',')
  // biome-ignore lint/correctness/useExhaustiveDependencies: keyed by the connection ids
  useEffect(() => {
    let live = true
    const chosen = connections.filter((c) => ids.split(',').includes(c.id))
    if (chosen.length === 0) {
      setDirectory({ boards: [], repositories: [] })
      return
    }
    setLoading(true)
    Promise.allSettled(chosen.map((c) => directoryOf(c, round > 0))).then((results) => {
      if (!live) return
      const merged: Directory = { boards: [], repositories: [] }
      let firstError: unknown = null
      for (const r of results) {
        if (r.status === 'fulfilled') {
          merged.boards.push(...r.value.boards.filter((b) => !merged.boards.some((x) => x.id === b.id)))
          merged.repositories.push(
            ...r.value.repositories.filter(
              (x) => !merged.repositories.some((y) => y.fullName === x.fullName),
            ),
          )
        } else firstError ??= r.reason
      }
      setDirectory(merged)
      setError(firstError)
      setLoading(false)
    })
    return () => {
      live = false
    }
  }, [ids, round])
  return { directory, loading, error, refresh: () => setRound((r) => r + 1) }
}
