// Search for issues and pull requests (and a plain repository search) across every repository
// the caller can see, with the usual qualifier syntax.
import type { FastifyInstance } from 'fastify'
import { canSee, principalOf } from '../auth.ts'
import { type Ctx, validationFailed } from '../context.ts'
import { paginate, query } from '../http.ts'
import type { Issue, Repo } from '../store.ts'
import { issueView, repoView } from '../views.ts'

interface Term {
  negate: boolean
  key: string | null
  value: string
}

function tokenize(q: string): Term[] {
  const out: Term[] = []
  const re = /(-?)([A-Za-z][\w-]*):("[^"]*"|\S+)|(-?)"([^"]*)"|(\S+)/g
  for (const m of q.matchAll(re)) {
    if (m[2]) out.push({ negate: m[1] === '-', key: m[2].toLowerCase(), value: m[3].replace(/^"|"$/g, '') })
    else if (m[5] !== undefined) out.push({ negate: m[4] === '-', key: null, value: m[5] })
    else if (m[6]) out.push({ negate: false, key: null, value: m[6] })
  }
  return out
}

/** Matches `>x`, `>=x`, `<x`, `<=x`, `a..b` or an exact value, on numbers or ISO dates. */
function rangeMatch(spec: string, actual: number, parse: (s: string) => number): boolean {
  const m = /^(>=|<=|>|<)?(.+)$/.exec(spec)
  if (!m) return false
  if (!m[1] && m[2].includes('..')) {
    const [a, b] = m[2].split('..')
    return (
      (a === '*' || actual >= parse(a)) &&
      (b === '*' || actual <= parse(b) + (b.length <= 10 ? 86_399_999 : 0))
    )
  }
  const v = parse(m[2])
  if (Number.isNaN(v)) return false
  switch (m[1]) {
    case '>':
      return actual > v + (m[2].length <= 10 && parse === Date.parse ? 86_399_999 : 0)
    case '>=':
      return actual >= v
    case '<':
      return actual < v
    case '<=':
      return actual <= v + (m[2].length <= 10 && parse === Date.parse ? 86_399_999 : 0)
    default:
      return parse === Date.parse && m[2].length <= 10 ? actual >= v && actual < v + 86_400_000 : actual === v
  }
}

function matchesTerm(ctx: Ctx, repo: Repo, i: Issue, t: Term, inFields: string[]): boolean {
  const store = ctx.store
  const login = (id: number) => store.user(id).login.toLowerCase()
  const v = t.value.toLowerCase()
  const labels = i.labelIds.map((id) => repo.labels.get(id)?.name.toLowerCase())
  const p = i.pull
  switch (t.key) {
    case null: {
      const hay = [
        inFields.includes('title') ? i.title : '',
        inFields.includes('body') ? (i.body ?? '') : '',
        inFields.includes('comments') ? i.comments.map((c) => c.body).join('\n') : '',
      ]
        .join('\n')
        .toLowerCase()
      return hay.includes(v)
    }
    case 'repo':
      return `${store.user(repo.ownerId).login}/${repo.name}`.toLowerCase() === v
    case 'user':
    case 'org':
    case 'owner':
      return store.user(repo.ownerId).login.toLowerCase() === v
    case 'is':
    case 'type':
    case 'state':
      switch (v) {
        case 'open':
        case 'closed':
          return i.state === v
        case 'issue':
          return !p
        case 'pr':
        case 'pull-request':
          return !!p
        case 'merged':
          return !!p?.merged
        case 'unmerged':
          return !!p && !p.merged && i.state === 'closed'
        case 'draft':
          return !!p?.draft
        case 'public':
          return !repo.private
        case 'private':
          return repo.private
        case 'locked':
          return i.locked
        case 'unlocked':
          return !i.locked
        default:
          return false
      }
    case 'label':
      return v.split(',').some((l) => labels.includes(l))
    case 'author':
      return login(i.userId) === v
    case 'assignee':
      return i.assigneeIds.some((id) => login(id) === v)
    case 'mentions':
      return new RegExp(`@${v.replace(/[^\w-]/g, '')}\\b`, 'i').test(
        [i.body ?? '', ...i.comments.map((c) => c.body)].join('\n'),
      )
    case 'commenter':
      return i.comments.some((c) => login(c.userId) === v)
    case 'involves':
      return (
        login(i.userId) === v ||
        i.assigneeIds.some((id) => login(id) === v) ||
        i.comments.some((c) => login(c.userId) === v) ||
        new RegExp(`@${v.replace(/[^\w-]/g, '')}\\b`, 'i').test(i.body ?? '')
      )
    case 'no':
      if (v === 'label') return i.labelIds.length === 0
      if (v === 'assignee') return i.assigneeIds.length === 0
      if (v === 'milestone') return true
      return false
    case 'reason':
      return (i.stateReason ?? '').replace('_', ' ') === v.replace(/"/g, '').replace('_', ' ')
    case 'draft':
      return !!p && String(p.draft) === v
    case 'head':
      return !!p && p.headRef.toLowerCase() === v
    case 'base':
      return !!p && p.baseRef.toLowerCase() === v
    case 'review-requested':
      return !!p && p.requestedReviewerIds.some((id) => login(id) === v)
    case 'reviewed-by':
      return !!p && p.reviews.some((r) => r.state !== 'PENDING' && login(r.userId) === v)
    case 'review': {
      if (!p) return false
      const states = p.reviews.map((r) => r.state)
      if (v === 'none') return states.filter((s) => s !== 'PENDING').length === 0
      if (v === 'approved') return states.includes('APPROVED')
      if (v === 'changes_requested') return states.includes('CHANGES_REQUESTED')
      if (v === 'required') return !states.includes('APPROVED')
      return false
    }
    case 'created':
      return rangeMatch(t.value, Date.parse(i.createdAt), Date.parse)
    case 'updated':
      return rangeMatch(t.value, Date.parse(i.updatedAt), Date.parse)
    case 'closed':
      return i.closedAt !== null && rangeMatch(t.value, Date.parse(i.closedAt), Date.parse)
    case 'merged':
      return !!p?.mergedAt && rangeMatch(t.value, Date.parse(p.mergedAt), Date.parse)
    case 'comments':
      return rangeMatch(t.value, i.comments.length, Number)
    case 'in':
    case 'sort':
      return true
    default:
      // An unknown qualifier is searched for as text, as upstream does.
      return `${i.title}\n${i.body ?? ''}`.toLowerCase().includes(`${t.key}:${v}`)
  }
}

const CANNOT_SEARCH =
  'The listed users and repositories cannot be searched either because the resources do not exist or you do not have permission to view them.'

export function registerSearchRoutes(api: FastifyInstance, ctx: Ctx): void {
  api.get('/search/issues', async (req, reply) => {
    const q = query(req)
    if (!q.q?.trim()) throw validationFailed([{ resource: 'Search', field: 'q', code: 'missing' }])
    const principal = principalOf(req)
    const terms = tokenize(q.q)
    const inFields = terms.filter((t) => t.key === 'in').flatMap((t) => t.value.toLowerCase().split(','))
    const fields = inFields.length ? inFields : ['title', 'body', 'comments']
    const visible = [...ctx.store.repos.values()].filter((r) => canSee(ctx, principal, r))
    for (const t of terms.filter(
      (x) => x.key === 'repo' || x.key === 'user' || x.key === 'org' || x.key === 'owner',
    )) {
      const ok =
        t.key === 'repo'
          ? visible.some(
              (r) => `${ctx.store.user(r.ownerId).login}/${r.name}`.toLowerCase() === t.value.toLowerCase(),
            )
          : ctx.store.userByLogin(t.value) !== undefined
      if (!ok)
        throw validationFailed([{ message: CANNOT_SEARCH, resource: 'Search', field: 'q', code: 'invalid' }])
    }
    // Several repo:/user: qualifiers widen the search (OR); everything else narrows it (AND).
    const scopes = terms.filter((t) => !t.negate && ['repo', 'user', 'org', 'owner'].includes(t.key ?? ''))
    const rest = terms.filter((t) => !scopes.includes(t))
    const hits: { repo: Repo; issue: Issue }[] = []
    for (const repo of visible) {
      for (const issue of repo.issues.values()) {
        if (scopes.length && !scopes.some((t) => matchesTerm(ctx, repo, issue, t, fields))) continue
        if (rest.every((t) => matchesTerm(ctx, repo, issue, t, fields) !== t.negate))
          hits.push({ repo, issue })
      }
    }
    const sort = q.sort
    const order = q.order === 'asc' ? 1 : -1
    hits.sort((a, b) => {
      const v =
        sort === 'comments'
          ? a.issue.comments.length - b.issue.comments.length
          : sort === 'updated'
            ? a.issue.updatedAt.localeCompare(b.issue.updatedAt)
            : a.issue.createdAt.localeCompare(b.issue.createdAt) || a.issue.id - b.issue.id
      return order * v
    })
    const limited = hits.slice(0, 1000)
    const page = paginate(ctx, req, reply, limited)
    return {
      total_count: hits.length,
      incomplete_results: false,
      items: page.map((h) => ({ ...issueView(ctx, h.repo, h.issue), score: 1.0 })),
      // The sandbox searches words only (lexical); semantic and hybrid searches are not emulated.
      search_type: 'lexical',
    }
  })

  api.get('/search/repositories', async (req, reply) => {
    const q = query(req)
    if (!q.q?.trim()) throw validationFailed([{ resource: 'Search', field: 'q', code: 'missing' }])
    const principal = principalOf(req)
    const terms = tokenize(q.q)
    const hits = [...ctx.store.repos.values()].filter((r) => {
      if (!canSee(ctx, principal, r)) return false
      return terms.every((t) => {
        const owner = ctx.store.user(r.ownerId).login.toLowerCase()
        const v = t.value.toLowerCase()
        let ok: boolean
        if (t.key === 'user' || t.key === 'org' || t.key === 'owner') ok = owner === v
        else if (t.key === 'repo') ok = `${owner}/${r.name.toLowerCase()}` === v
        else if (t.key === 'is')
          ok =
            v === 'public'
              ? !r.private
              : v === 'private'
                ? r.private
                : v === 'fork'
                  ? r.parentId !== null
                  : false
        else if (t.key === 'fork') ok = true
        else if (t.key === 'topic') ok = r.topics.includes(v)
        else ok = `${r.name}\n${r.description ?? ''}`.toLowerCase().includes(v)
        return ok !== t.negate
      })
    })
    const page = paginate(ctx, req, reply, hits)
    return {
      total_count: hits.length,
      incomplete_results: false,
      items: page.map((r) => ({ ...repoView(ctx, r, principal.user, false), score: 1.0 })),
    }
  })
}
