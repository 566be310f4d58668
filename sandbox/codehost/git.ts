// A small git object model: blobs and trees hashed the way git hashes them, commits as snapshots
// of a whole tree, and the diffs, ancestry and three-way merges the REST API needs.
import { sha1 } from './ids.ts'
import type { Commit, GitPerson, Repo, Store } from './store.ts'

export function putBlob(store: Store, content: Buffer): string {
  const sha = sha1(Buffer.concat([Buffer.from(`blob ${content.length}\0`), content]))
  store.blobs.set(sha, content)
  return sha
}

export function treeSha(tree: Map<string, string>): string {
  const entries = [...tree.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return sha1(`tree\0${entries.map(([p, s]) => `${p}\0${s}`).join('\n')}`)
}

export function createCommit(
  store: Store,
  input: {
    tree: Map<string, string>
    parents: string[]
    message: string
    author: GitPerson
    committer?: GitPerson
    authorId: number | null
    committerId?: number | null
  },
): Commit {
  const committer = input.committer ?? input.author
  const tsha = treeSha(input.tree)
  const text = [
    `tree ${tsha}`,
    ...input.parents.map((p) => `parent ${p}`),
    `author ${input.author.name} <${input.author.email}> ${input.author.date}`,
    `committer ${committer.name} <${committer.email}> ${committer.date}`,
    '',
    input.message,
  ].join('\n')
  const commit: Commit = {
    sha: sha1(`commit ${Buffer.byteLength(text)}\0${text}`),
    treeSha: tsha,
    tree: new Map(input.tree),
    parents: input.parents,
    message: input.message,
    author: input.author,
    committer,
    authorId: input.authorId,
    committerId: input.committerId ?? input.authorId,
  }
  store.commits.set(commit.sha, commit)
  return commit
}

/** Resolves a branch, tag, full sha or unique sha prefix (4+ characters) within a repository. */
export function resolveRef(store: Store, repo: Repo, ref: string): Commit | undefined {
  const clean = ref.replace(/^refs\/(heads|tags)\//, '')
  const named = repo.branches.get(clean) ?? repo.tags.get(clean)
  if (named) return store.commits.get(named)
  if (/^[0-9a-f]{4,40}$/i.test(ref)) {
    const lower = ref.toLowerCase()
    const exact = store.commits.get(lower)
    if (exact && reachableInRepo(store, repo, exact.sha)) return exact
    const hits = [...reachableShas(store, repo)].filter((s) => s.startsWith(lower))
    if (hits.length === 1) return store.commits.get(hits[0])
  }
  return undefined
}

function reachableShas(store: Store, repo: Repo): Set<string> {
  const seen = new Set<string>()
  const stack = [...repo.branches.values(), ...repo.tags.values()]
  while (stack.length) {
    const sha = stack.pop()!
    if (seen.has(sha)) continue
    seen.add(sha)
    const c = store.commits.get(sha)
    if (c) stack.push(...c.parents)
  }
  return seen
}

function reachableInRepo(store: Store, repo: Repo, sha: string): boolean {
  return reachableShas(store, repo).has(sha)
}

/** Every commit reachable from `sha`, newest first (committer date, then discovery order). */
export function history(store: Store, sha: string): Commit[] {
  const out: Commit[] = []
  const seen = new Set<string>()
  const queue = [sha]
  while (queue.length) {
    const s = queue.shift()!
    if (seen.has(s)) continue
    seen.add(s)
    const c = store.commits.get(s)
    if (!c) continue
    out.push(c)
    queue.push(...c.parents)
  }
  return out
    .map((c, i) => ({ c, i }))
    .sort((a, b) => b.c.committer.date.localeCompare(a.c.committer.date) || a.i - b.i)
    .map((x) => x.c)
}

export function isAncestor(store: Store, ancestor: string, of: string): boolean {
  return history(store, of).some((c) => c.sha === ancestor)
}

export function mergeBase(store: Store, a: string, b: string): string | null {
  const inA = new Set(history(store, a).map((c) => c.sha))
  for (const c of history(store, b)) if (inA.has(c.sha)) return c.sha
  return null
}

/** Commits on `head` that are not on `base`, oldest first. */
export function commitsBetween(store: Store, base: string, head: string): Commit[] {
  const onBase = new Set(history(store, base).map((c) => c.sha))
  return history(store, head)
    .filter((c) => !onBase.has(c.sha))
    .reverse()
}

export interface FileChange {
  filename: string
  status: 'added' | 'modified' | 'removed'
  sha: string
  additions: number
  deletions: number
  changes: number
  patch: string
}

function lines(store: Store, blob: string | undefined): string[] {
  if (!blob) return []
  const text = store.blobs.get(blob)?.toString('utf8') ?? ''
  if (text === '') return []
  return text.replace(/\n$/, '').split('\n')
}

/** Line counts from trimming the common head and tail; close enough to git's for stats. */
function lineDiff(
  before: string[],
  after: string[],
): { additions: number; deletions: number; patch: string } {
  let start = 0
  while (start < before.length && start < after.length && before[start] === after[start]) start++
  let endB = before.length
  let endA = after.length
  while (endB > start && endA > start && before[endB - 1] === after[endA - 1]) {
    endB--
    endA--
  }
  const removed = before.slice(start, endB)
  const added = after.slice(start, endA)
  const header = `@@ -${start + 1},${removed.length} +${start + 1},${added.length} @@`
  const patch = [header, ...removed.map((l) => `-${l}`), ...added.map((l) => `+${l}`)].join('\n')
  return { additions: added.length, deletions: removed.length, patch }
}

export function diffTrees(
  store: Store,
  before: Map<string, string> | null,
  after: Map<string, string>,
): FileChange[] {
  const old = before ?? new Map<string, string>()
  const paths = new Set([...old.keys(), ...after.keys()])
  const out: FileChange[] = []
  for (const path of [...paths].sort()) {
    const a = old.get(path)
    const b = after.get(path)
    if (a === b) continue
    const d = lineDiff(lines(store, a), lines(store, b))
    out.push({
      filename: path,
      status: !a ? 'added' : !b ? 'removed' : 'modified',
      sha: b ?? a!,
      additions: d.additions,
      deletions: d.deletions,
      changes: d.additions + d.deletions,
      patch: d.patch,
    })
  }
  return out
}

export function commitChanges(store: Store, commit: Commit): FileChange[] {
  const parent = commit.parents[0] ? store.commits.get(commit.parents[0]) : undefined
  return diffTrees(store, parent?.tree ?? null, commit.tree)
}

/** File-level three-way merge; a path changed differently on both sides is a conflict. */
export function mergeTrees(
  base: Map<string, string>,
  ours: Map<string, string>,
  theirs: Map<string, string>,
): { tree: Map<string, string>; conflicts: string[] } {
  const tree = new Map(ours)
  const conflicts: string[] = []
  for (const path of new Set([...base.keys(), ...ours.keys(), ...theirs.keys()])) {
    const b = base.get(path)
    const o = ours.get(path)
    const t = theirs.get(path)
    if (t === b || t === o) continue
    if (o === b) {
      if (t === undefined) tree.delete(path)
      else tree.set(path, t)
      continue
    }
    conflicts.push(path)
  }
  return { tree, conflicts }
}
