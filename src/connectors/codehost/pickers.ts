// How the code-host fields that name a resource list their choices: the owners and repositories
// the token reaches, and the open issues, pull requests, branches and workflows of a repository.
import type { StepContext } from '../../kit/define.ts'
import { definePicker, type Picker } from '../../kit/pickers.ts'

/** `/repos/{owner}/{repo}/…`, each part encoded (the parents come from the caller's query). */
const inRepo = (owner: string, repo: string, ...rest: string[]) =>
  ['', 'repos', owner, repo, ...rest].map(encodeURIComponent).join('/')

type Repo = { full_name: string; name: string; owner: { login: string }; private?: boolean }

/** The repositories the connection reaches (one page of 100, by name), inside an agent's scope. */
async function reachable(ctx: StepContext): Promise<Repo[]> {
  const repos = await ctx.http.get<Repo[]>('/user/repos', { per_page: 100, sort: 'full_name' })
  const scope = ctx.scope?.repositories.map((r) => r.toLowerCase())
  return repos.filter((r) => !scope || scope.includes(r.full_name.toLowerCase()))
}

export const owners: Picker = definePicker({
  noun: 'owner',
  parents: [],
  list: async (ctx) =>
    [...new Set((await reachable(ctx)).map((r) => r.owner.login))].map((login) => ({
      value: login,
      label: login,
    })),
})

export const repos: Picker = definePicker({
  noun: 'repository',
  parents: [{ field: 'owner', picker: owners }],
  list: async (ctx, { owner }) =>
    (await reachable(ctx))
      .filter((r) => r.owner.login.toLowerCase() === owner.toLowerCase())
      .map((r) => ({ value: r.name, label: r.name, detail: r.private ? 'private' : undefined })),
})

const inRepository = {
  parents: [
    { field: 'owner', picker: owners },
    { field: 'repo', picker: repos },
  ],
  scoped: [
    { kind: 'repository' as const, value: (i: { owner?: string; repo?: string }) => `${i.owner}/${i.repo}` },
  ],
}

type Numbered = { number: number; title: string; pull_request?: unknown }

export const issues: Picker = definePicker({
  noun: 'issue',
  ...inRepository,
  list: async (ctx, { owner, repo }) =>
    (await ctx.http.get<Numbered[]>(inRepo(owner, repo, 'issues'), { state: 'open', per_page: 100 }))
      .filter((i) => !i.pull_request)
      .map((i) => ({ value: String(i.number), label: `#${i.number} ${i.title}` })),
})

export const pulls: Picker = definePicker({
  noun: 'pull request',
  ...inRepository,
  list: async (ctx, { owner, repo }) =>
    (await ctx.http.get<Numbered[]>(inRepo(owner, repo, 'pulls'), { state: 'open', per_page: 100 })).map(
      (p) => ({
        value: String(p.number),
        label: `#${p.number} ${p.title}`,
      }),
    ),
})

/** The branches of a repository (one page of 100, by name; the default branch first). */
export const branches: Picker = definePicker({
  noun: 'branch',
  ...inRepository,
  list: async (ctx, { owner, repo }) => {
    const [about, list] = await Promise.all([
      ctx.http.get<{ default_branch?: string }>(inRepo(owner, repo)),
      ctx.http.get<Array<{ name: string; protected?: boolean }>>(inRepo(owner, repo, 'branches'), {
        per_page: 100,
      }),
    ])
    const main = about.default_branch
    return [...list]
      .sort((a, b) => Number(b.name === main) - Number(a.name === main))
      .map((b) => ({
        value: b.name,
        label: b.name,
        detail:
          [b.name === main ? 'default branch' : '', b.protected ? 'protected' : '']
            .filter(Boolean)
            .join(', ') || undefined,
      }))
  },
})

/** The workflows of a repository, by their file name (what the workflow fields take). */
export const workflows: Picker = definePicker({
  noun: 'workflow',
  ...inRepository,
  list: async (ctx, { owner, repo }) =>
    (
      await ctx.http.get<{ workflows: Array<{ id: number; name: string; path: string; state: string }> }>(
        inRepo(owner, repo, 'actions', 'workflows'),
        { per_page: 100 },
      )
    ).workflows.map((w) => ({
      value: w.path.split('/').pop() ?? String(w.id),
      label: w.name,
      detail: w.state === 'active' ? `id ${w.id}` : `id ${w.id}, ${w.state.replaceAll('_', ' ')}`,
    })),
})
