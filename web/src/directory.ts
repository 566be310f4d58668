// What an account can see upstream (task-board boards and lists, code-host repositories), read
// through the connectors' own API Call steps with the connection's credentials. Feeds the scope
// pickers and the suggestions of id fields in generated forms.
import { useEffect, useState } from 'react'
import { post } from './api.ts'
import type { Connection } from './types.ts'

export interface Board {
  id: string
  name: string
}
export interface List {
  id: string
  name: string
  idBoard: string
  boardName: string
}
export interface Repository {
  fullName: string
  private: boolean
}

export interface Directory {
  boards: Board[]
  lists: List[]
  repositories: Repository[]
}

interface ApiCallOutput {
  status: number
  body: unknown
}

async function apiCall(
  stepId: string,
  connectionId: string,
  input: Record<string, unknown>,
): Promise<unknown> {
  const res = await post<{ output: ApiCallOutput }>(`/v1/steps/${stepId}/run`, { connectionId, input })
  const out = res.output
  if (out && typeof out === 'object' && 'status' in out) {
    if (out.status >= 400) throw new Error(`The upstream answered ${out.status}.`)
    return out.body
  }
  return out
}

export async function loadBoards(connectionId: string): Promise<Board[]> {
  const body = await apiCall('taskboard.api_call', connectionId, {
    method: 'GET',
    endpoint: '/1/members/me/boards',
    query: { filter: 'open', fields: 'name' },
  })
  return Array.isArray(body) ? body.map((b: any) => ({ id: String(b.id), name: String(b.name ?? b.id) })) : []
}

export async function loadLists(connectionId: string, boards: Board[]): Promise<List[]> {
  const per = await Promise.all(
    boards.slice(0, 25).map(async (b) => {
      const body = await apiCall('taskboard.api_call', connectionId, {
        method: 'GET',
        endpoint: `/1/boards/${b.id}/lists`,
        query: { filter: 'open', fields: 'name,idBoard' },
      })
      return Array.isArray(body)
        ? body.map((l: any) => ({
            id: String(l.id),
            name: String(l.name ?? l.id),
            idBoard: b.id,
            boardName: b.name,
          }))
        : []
    }),
  )
  return per.flat()
}

export async function loadRepositories(connectionId: string): Promise<Repository[]> {
  const body = await apiCall('codehost.api_call', connectionId, {
    method: 'GET',
    endpoint: '/user/repos?per_page=100&sort=full_name',
    headers: { accept: 'application/vnd.codehost+json' },
  })
  return Array.isArray(body)
    ? body.map((r: any) => ({ fullName: String(r.full_name), private: Boolean(r.private) }))
    : []
}

const cache = new Map<string, Promise<Directory>>()

async function loadDirectory(c: Connection): Promise<Directory> {
  if (c.connector === 'taskboard') {
    const boards = await loadBoards(c.id)
    const lists = await loadLists(c.id, boards).catch(() => [])
    return { boards, lists, repositories: [] }
  }
  if (c.connector === 'codehost') return { boards: [], lists: [], repositories: await loadRepositories(c.id) }
  return { boards: [], lists: [], repositories: [] }
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
  const [directory, setDirectory] = useState<Directory>({ boards: [], lists: [], repositories: [] })
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
      setDirectory({ boards: [], lists: [], repositories: [] })
      return
    }
    setLoading(true)
    Promise.allSettled(chosen.map((c) => directoryOf(c, round > 0))).then((results) => {
      if (!live) return
      const merged: Directory = { boards: [], lists: [], repositories: [] }
      let firstError: unknown = null
      for (const r of results) {
        if (r.status === 'fulfilled') {
          merged.boards.push(...r.value.boards.filter((b) => !merged.boards.some((x) => x.id === b.id)))
          merged.lists.push(...r.value.lists.filter((l) => !merged.lists.some((x) => x.id === l.id)))
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

/** Suggestions for id fields of generated forms, from a directory. */
export function suggestFrom(d: Directory) {
  return (name: string): Array<{ value: string; label?: string }> | undefined => {
    const n = name.toLowerCase()
    if (n === 'idboard' || n === 'boardid') return d.boards.map((b) => ({ value: b.id, label: b.name }))
    if (n === 'idlist' || n === 'listid')
      return d.lists.map((l) => ({ value: l.id, label: `${l.boardName} › ${l.name}` }))
    if (n === 'repository' || n === 'repo_full_name' || n === 'fullname')
      return d.repositories.map((r) => ({ value: r.fullName }))
    if (n === 'owner')
      return [...new Set(d.repositories.map((r) => r.fullName.split('/')[0]))].map((v) => ({ value: v }))
    if (n === 'repo')
      return [...new Set(d.repositories.map((r) => r.fullName.split('/')[1]))].map((v) => ({ value: v }))
    return undefined
  }
}
