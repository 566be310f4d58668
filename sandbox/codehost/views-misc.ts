// JSON shapes of snippets, releases, hooks and classic projects.
import type { Ctx } from './context.ts'
import { nodeId } from './ids.ts'
import type { ClassicProject, Gist, Hook, ProjectCard, Release, Repo } from './store.ts'
import { repoApi, repoHtml, userView } from './views.ts'

export function gistView(ctx: Ctx, g: Gist, withContent = true) {
  const api = `${ctx.url}/gists/${g.id}`
  const owner = userView(ctx, ctx.store.user(g.ownerId))
  const files: Record<string, unknown> = {}
  for (const [name, content] of [...g.files.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    files[name] = {
      filename: name,
      type: name.endsWith('.md')
        ? 'text/markdown'
        : name.endsWith('.json')
          ? 'application/json'
          : 'text/plain',
      language: languageOf(name),
      raw_url: `${ctx.webUrl}/gist-raw/${g.id}/${encodeURIComponent(name)}`,
      size: Buffer.byteLength(content),
      ...(withContent ? { truncated: false, content, encoding: 'utf-8' } : {}),
    }
  }
  return {
    url: api,
    forks_url: `${api}/forks`,
    commits_url: `${api}/commits`,
    id: g.id,
    node_id: nodeId('G', g.id),
    git_pull_url: `${ctx.webUrl}/gist/${g.id}.git`,
    git_push_url: `${ctx.webUrl}/gist/${g.id}.git`,
    html_url: `${ctx.webUrl}/gist/${g.id}`,
    files,
    public: g.public,
    created_at: g.createdAt,
    updated_at: g.updatedAt,
    description: g.description,
    comments: 0,
    comments_enabled: true,
    user: null,
    comments_url: `${api}/comments`,
    owner,
    truncated: false,
    ...(withContent
      ? {
          forks: [],
          history: [...g.history].reverse().map((h) => ({
            user: userView(ctx, ctx.store.user(h.userId)),
            version: h.version,
            committed_at: h.committedAt,
            change_status: { total: 0, additions: 0, deletions: 0 },
            url: `${api}/${h.version}`,
          })),
        }
      : {}),
  }
}

function languageOf(name: string): string | null {
  const ext = name.split('.').pop()?.toLowerCase()
  const map: Record<string, string> = {
    md: 'Markdown',
    ts: 'TypeScript',
    js: 'JavaScript',
    py: 'Python',
    json: 'JSON',
    yml: 'YAML',
    yaml: 'YAML',
    txt: 'Text',
  }
  return ext ? (map[ext] ?? null) : null
}

export function releaseView(ctx: Ctx, repo: Repo, r: Release) {
  const api = `${repoApi(ctx, repo)}/releases/${r.id}`
  return {
    url: api,
    assets_url: `${api}/assets`,
    upload_url: `${ctx.url.replace('://', '://uploads.')}/repos/${ctx.store.user(repo.ownerId).login}/${repo.name}/releases/${r.id}/assets{?name,label}`,
    html_url: `${repoHtml(ctx, repo)}/releases/${r.draft ? `untagged-${r.id}` : `tag/${r.tagName}`}`,
    id: r.id,
    author: userView(ctx, ctx.store.user(r.authorId)),
    node_id: nodeId('RE', r.id),
    tag_name: r.tagName,
    target_commitish: r.targetCommitish,
    name: r.name,
    draft: r.draft,
    immutable: false,
    prerelease: r.prerelease,
    created_at: r.createdAt,
    updated_at: r.publishedAt ?? r.createdAt,
    published_at: r.publishedAt,
    assets: [],
    tarball_url: `${repoApi(ctx, repo)}/tarball/${r.tagName}`,
    zipball_url: `${repoApi(ctx, repo)}/zipball/${r.tagName}`,
    body: r.body,
  }
}

export function hookView(ctx: Ctx, h: Hook) {
  const store = ctx.store
  const base =
    h.kind === 'repo'
      ? `${repoApi(ctx, store.repo(h.targetId))}/hooks/${h.id}`
      : `${ctx.url}/orgs/${store.user(h.targetId).login}/hooks/${h.id}`
  const last = [...store.deliveries].reverse().find((d) => d.hookId === h.id && d.event !== 'ping')
  const attempt = last?.record.attempts.at(-1)
  return {
    type: h.kind === 'repo' ? 'Repository' : 'Organization',
    id: h.id,
    name: h.name,
    active: h.active,
    events: h.events,
    config: {
      content_type: h.contentType,
      insecure_ssl: h.insecureSsl,
      url: h.url,
      ...(h.secret ? { secret: '********' } : {}),
    },
    updated_at: h.updatedAt,
    created_at: h.createdAt,
    url: base,
    ...(h.kind === 'repo' ? { test_url: `${base}/test` } : {}),
    ping_url: `${base}/pings`,
    deliveries_url: `${base}/deliveries`,
    last_response: attempt
      ? {
          code: attempt.status,
          status: attempt.status && attempt.status < 300 ? 'active' : 'failed',
          message: attempt.error ?? null,
        }
      : { code: null, status: 'unused', message: null },
  }
}

export function projectView(ctx: Ctx, p: ClassicProject) {
  const store = ctx.store
  const api = `${ctx.url}/projects/${p.id}`
  const ownerUrl =
    p.repoId !== null ? repoApi(ctx, store.repo(p.repoId)) : `${ctx.url}/users/${store.user(p.ownerId).login}`
  return {
    owner_url: ownerUrl,
    url: api,
    html_url: `${ctx.webUrl}/projects/${p.id}`,
    columns_url: `${api}/columns`,
    id: p.id,
    node_id: nodeId('PRO', p.id),
    name: p.name,
    body: p.body,
    number: p.number,
    state: p.state,
    creator: userView(ctx, store.user(p.creatorId)),
    created_at: p.createdAt,
    updated_at: p.updatedAt,
  }
}

export function columnView(ctx: Ctx, p: ClassicProject, col: ClassicProject['columns'][number]) {
  const api = `${ctx.url}/projects/columns/${col.id}`
  return {
    url: api,
    project_url: `${ctx.url}/projects/${p.id}`,
    cards_url: `${api}/cards`,
    id: col.id,
    node_id: nodeId('PC', col.id),
    name: col.name,
    created_at: col.createdAt,
    updated_at: col.updatedAt,
  }
}

export function cardView(
  ctx: Ctx,
  p: ClassicProject,
  col: ClassicProject['columns'][number],
  card: ProjectCard,
) {
  const store = ctx.store
  const content = card.repoId !== null && card.number !== null ? store.repos.get(card.repoId) : undefined
  return {
    url: `${ctx.url}/projects/columns/cards/${card.id}`,
    id: card.id,
    node_id: nodeId('PCA', card.id),
    note: card.note,
    creator: userView(ctx, store.user(card.creatorId)),
    created_at: card.createdAt,
    updated_at: card.updatedAt,
    archived: card.archived,
    column_url: `${ctx.url}/projects/columns/${col.id}`,
    ...(content ? { content_url: `${repoApi(ctx, content)}/issues/${card.number}` } : {}),
    project_url: `${ctx.url}/projects/${p.id}`,
    column_id: col.id,
    column_name: col.name,
    project_id: p.id,
  }
}
