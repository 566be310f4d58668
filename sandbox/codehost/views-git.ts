// JSON shapes of commits, changed files and repository contents.
import type { Ctx } from './context.ts'
import { commitChanges, type FileChange } from './git.ts'
import { nodeId } from './ids.ts'
import type { Commit, Repo } from './store.ts'
import { repoApi, repoHtml, userView } from './views.ts'

function gitPersonView(p: { name: string; email: string; date: string }) {
  return { name: p.name, email: p.email, date: p.date }
}

export function commitView(ctx: Ctx, repo: Repo, c: Commit, withFiles = true) {
  const store = ctx.store
  const api = repoApi(ctx, repo)
  const files: FileChange[] = withFiles ? commitChanges(store, c) : []
  const additions = files.reduce((n, f) => n + f.additions, 0)
  const deletions = files.reduce((n, f) => n + f.deletions, 0)
  return {
    sha: c.sha,
    node_id: nodeId('C', c.sha),
    commit: {
      author: gitPersonView(c.author),
      committer: gitPersonView(c.committer),
      message: c.message,
      tree: { sha: c.treeSha, url: `${api}/git/trees/${c.treeSha}` },
      url: `${api}/git/commits/${c.sha}`,
      comment_count: 0,
      verification: {
        verified: false,
        reason: 'unsigned',
        signature: null,
        payload: null,
        verified_at: null,
      },
    },
    url: `${api}/commits/${c.sha}`,
    html_url: `${repoHtml(ctx, repo)}/commit/${c.sha}`,
    comments_url: `${api}/commits/${c.sha}/comments`,
    author: c.authorId ? userView(ctx, store.user(c.authorId)) : null,
    committer: c.committerId ? userView(ctx, store.user(c.committerId)) : null,
    parents: c.parents.map((p) => ({
      sha: p,
      url: `${api}/commits/${p}`,
      html_url: `${repoHtml(ctx, repo)}/commit/${p}`,
    })),
    ...(withFiles
      ? {
          stats: { total: additions + deletions, additions, deletions },
          files: files.map((f) => fileView(ctx, repo, c.sha, f)),
        }
      : {}),
  }
}

export function fileView(ctx: Ctx, repo: Repo, ref: string, f: FileChange) {
  const enc = f.filename.split('/').map(encodeURIComponent).join('/')
  return {
    sha: f.sha,
    filename: f.filename,
    status: f.status,
    additions: f.additions,
    deletions: f.deletions,
    changes: f.changes,
    blob_url: `${repoHtml(ctx, repo)}/blob/${ref}/${enc}`,
    raw_url: `${repoHtml(ctx, repo)}/raw/${ref}/${enc}`,
    contents_url: `${repoApi(ctx, repo)}/contents/${enc}?ref=${ref}`,
    patch: f.patch,
  }
}

/** The short commit shape of `PUT /contents` answers and of `git/commits`. */
export function gitCommitView(ctx: Ctx, repo: Repo, c: Commit) {
  const api = repoApi(ctx, repo)
  return {
    sha: c.sha,
    node_id: nodeId('C', c.sha),
    url: `${api}/git/commits/${c.sha}`,
    html_url: `${repoHtml(ctx, repo)}/commit/${c.sha}`,
    author: gitPersonView(c.author),
    committer: gitPersonView(c.committer),
    message: c.message,
    tree: { sha: c.treeSha, url: `${api}/git/trees/${c.treeSha}` },
    parents: c.parents.map((p) => ({
      sha: p,
      url: `${api}/git/commits/${p}`,
      html_url: `${repoHtml(ctx, repo)}/commit/${p}`,
    })),
    verification: { verified: false, reason: 'unsigned', signature: null, payload: null, verified_at: null },
  }
}

export function contentView(
  ctx: Ctx,
  repo: Repo,
  path: string,
  blobSha: string,
  ref: string,
  withContent = true,
) {
  const store = ctx.store
  const data = store.blobs.get(blobSha) ?? Buffer.alloc(0)
  const api = repoApi(ctx, repo)
  const enc = path.split('/').map(encodeURIComponent).join('/')
  const self = `${api}/contents/${enc}?ref=${encodeURIComponent(ref)}`
  const html = `${repoHtml(ctx, repo)}/blob/${ref}/${enc}`
  const git = `${api}/git/blobs/${blobSha}`
  const b64 = data.toString('base64')
  return {
    type: 'file',
    ...(withContent ? { encoding: 'base64' } : {}),
    size: data.length,
    name: path.split('/').pop()!,
    path,
    ...(withContent ? { content: (b64.match(/.{1,60}/g) ?? []).join('\n') + (b64 ? '\n' : '') } : {}),
    sha: blobSha,
    url: self,
    git_url: git,
    html_url: html,
    download_url: `${ctx.webUrl}/raw/${ctx.store.user(repo.ownerId).login}/${repo.name}/${ref}/${enc}`,
    _links: { self, git, html },
  }
}

export function dirEntryView(ctx: Ctx, repo: Repo, path: string, ref: string) {
  const api = repoApi(ctx, repo)
  const self = `${api}/contents/${path}?ref=${encodeURIComponent(ref)}`
  const html = `${repoHtml(ctx, repo)}/tree/${ref}/${path}`
  return {
    type: 'dir',
    size: 0,
    name: path.split('/').pop()!,
    path,
    sha: '',
    url: self,
    git_url: null,
    html_url: html,
    download_url: null,
    _links: { self, git: null, html },
  }
}
