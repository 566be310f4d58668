// JSON shapes of accounts, repositories, issues and pull requests in REST answers and in webhook
// payloads (upstream uses the same shapes in both). Commits, contents, runs and the rest are in
// views-git.ts, views-actions.ts and views-misc.ts.
import type { Ctx } from './context.ts'
import { commitChanges } from './git.ts'
import { nodeId } from './ids.ts'
import { roleAtLeast, roleOf } from './permissions.ts'
import {
  type Issue,
  type IssueComment,
  type Label,
  mergeSettingsOf,
  type Repo,
  type Review,
  type Role,
  type User,
} from './store.ts'

const web = (ctx: Ctx) => ctx.webUrl

export function userView(ctx: Ctx, u: User) {
  const api = `${ctx.url}/users/${u.login}`
  return {
    login: u.login,
    id: u.id,
    node_id: nodeId(u.type === 'User' ? 'U' : 'O', u.id),
    avatar_url: `${web(ctx)}/avatars/${u.login}`,
    gravatar_id: '',
    url: api,
    html_url: `${web(ctx)}/${u.login}`,
    followers_url: `${api}/followers`,
    following_url: `${api}/following{/other_user}`,
    gists_url: `${api}/gists{/gist_id}`,
    starred_url: `${api}/starred{/owner}{/repo}`,
    subscriptions_url: `${api}/subscriptions`,
    organizations_url: `${api}/orgs`,
    repos_url: `${api}/repos`,
    events_url: `${api}/events{/privacy}`,
    received_events_url: `${api}/received_events`,
    type: u.type,
    user_view_type: 'public',
    site_admin: false,
  }
}

/** An organization as payloads and lists show it (organization-simple). */
export function orgView(ctx: Ctx, o: User) {
  const api = `${ctx.url}/orgs/${o.login}`
  return {
    login: o.login,
    id: o.id,
    node_id: nodeId('O', o.id),
    url: api,
    repos_url: `${api}/repos`,
    events_url: `${api}/events`,
    hooks_url: `${api}/hooks`,
    issues_url: `${api}/issues`,
    members_url: `${api}/members{/member}`,
    public_members_url: `${api}/public_members{/member}`,
    avatar_url: `${web(ctx)}/avatars/${o.login}`,
    description: o.bio,
  }
}

export function userFullView(ctx: Ctx, u: User, self = false) {
  const store = ctx.store
  const repos = [...store.repos.values()].filter((r) => r.ownerId === u.id)
  const gists = [...store.gists.values()].filter((g) => g.ownerId === u.id)
  return {
    ...userView(ctx, u),
    name: u.name,
    company: u.company,
    blog: '',
    location: u.location,
    email: u.email,
    hireable: null,
    bio: u.bio,
    twitter_username: null,
    public_repos: repos.filter((r) => !r.private).length,
    public_gists: gists.filter((g) => g.public).length,
    followers: 0,
    following: 0,
    created_at: u.createdAt,
    updated_at: u.createdAt,
    ...(self
      ? {
          private_gists: gists.filter((g) => !g.public).length,
          total_private_repos: repos.filter((r) => r.private).length,
          owned_private_repos: repos.filter((r) => r.private).length,
          disk_usage: 0,
          collaborators: 0,
          two_factor_authentication: false,
          plan: { name: 'free', space: 976562499, collaborators: 0, private_repos: 10000 },
        }
      : {}),
  }
}

/**
 * An organization as `GET /orgs/{org}` shows it (organization-full): the public part to anyone,
 * and to its owners the plan, the counts of private things and the member settings too.
 */
export function orgFullView(ctx: Ctx, o: User, viewer: User | null) {
  const store = ctx.store
  const repos = [...store.repos.values()].filter((r) => r.ownerId === o.id)
  const publicPart = {
    ...orgView(ctx, o),
    name: o.name,
    // The description has these as strings (an unset one is empty), the blog as an address.
    company: o.company ?? '',
    blog: `${web(ctx)}/${o.login}`,
    location: o.location ?? '',
    email: o.email ?? '',
    twitter_username: null,
    is_verified: false,
    has_organization_projects: true,
    has_repository_projects: true,
    public_repos: repos.filter((r) => !r.private).length,
    public_gists: 0,
    followers: 0,
    following: 0,
    html_url: `${web(ctx)}/${o.login}`,
    type: 'Organization',
    created_at: o.createdAt,
    updated_at: o.createdAt,
    archived_at: null,
  }
  if (!viewer || o.members.get(viewer.id) !== 'admin') return publicPart
  const privateRepos = repos.filter((r) => r.private).length
  return {
    ...publicPart,
    total_private_repos: privateRepos,
    owned_private_repos: privateRepos,
    private_gists: 0,
    disk_usage: 0,
    collaborators: 0,
    billing_email: o.email,
    plan: { name: 'free', space: 976562499, private_repos: 10000, filled_seats: o.members.size, seats: 0 },
    default_repository_permission: 'read',
    default_repository_branch: 'main',
    members_can_create_repositories: true,
    two_factor_requirement_enabled: false,
    members_allowed_repository_creation_type: 'all',
    members_can_create_public_repositories: true,
    members_can_create_private_repositories: true,
    members_can_create_internal_repositories: false,
    members_can_create_pages: true,
    members_can_create_public_pages: true,
    members_can_create_private_pages: true,
    members_can_delete_repositories: true,
    members_can_change_repo_visibility: true,
    members_can_invite_outside_collaborators: true,
    members_can_delete_issues: false,
    display_commenter_full_name_setting_enabled: false,
    readers_can_create_discussions: true,
    members_can_create_teams: true,
    members_can_view_dependency_insights: true,
    members_can_fork_private_repositories: false,
    web_commit_signoff_required: false,
    advanced_security_enabled_for_new_repositories: false,
    dependabot_alerts_enabled_for_new_repositories: false,
    dependabot_security_updates_enabled_for_new_repositories: false,
    dependency_graph_enabled_for_new_repositories: false,
    secret_scanning_enabled_for_new_repositories: false,
    secret_scanning_push_protection_enabled_for_new_repositories: false,
    secret_scanning_push_protection_custom_link_enabled: false,
    secret_scanning_push_protection_custom_link: null,
    deploy_keys_enabled_for_repositories: true,
  }
}

export function permissionsOf(role: Role | null) {
  const at = (r: Role) => roleAtLeast(role, r)
  return {
    admin: at('admin'),
    maintain: at('maintain'),
    push: at('write'),
    triage: at('triage'),
    pull: at('read'),
  }
}

export function repoView(ctx: Ctx, r: Repo, viewer: User | null, full = true): Record<string, unknown> {
  const store = ctx.store
  const owner = store.user(r.ownerId)
  const full_name = `${owner.login}/${r.name}`
  const api = `${ctx.url}/repos/${full_name}`
  const forks = [...store.repos.values()].filter((x) => x.parentId === r.id).length
  const openIssues = [...r.issues.values()].filter((i) => i.state === 'open').length
  const base: Record<string, unknown> = {
    id: r.id,
    node_id: nodeId('R', r.id),
    name: r.name,
    full_name,
    private: r.private,
    owner: userView(ctx, owner),
    html_url: `${web(ctx)}/${full_name}`,
    description: r.description,
    fork: r.parentId !== null,
    url: api,
    forks_url: `${api}/forks`,
    keys_url: `${api}/keys{/key_id}`,
    collaborators_url: `${api}/collaborators{/collaborator}`,
    teams_url: `${api}/teams`,
    hooks_url: `${api}/hooks`,
    issue_events_url: `${api}/issues/events{/number}`,
    events_url: `${api}/events`,
    assignees_url: `${api}/assignees{/user}`,
    branches_url: `${api}/branches{/branch}`,
    tags_url: `${api}/tags`,
    blobs_url: `${api}/git/blobs{/sha}`,
    git_tags_url: `${api}/git/tags{/sha}`,
    git_refs_url: `${api}/git/refs{/sha}`,
    trees_url: `${api}/git/trees{/sha}`,
    statuses_url: `${api}/statuses/{sha}`,
    languages_url: `${api}/languages`,
    stargazers_url: `${api}/stargazers`,
    contributors_url: `${api}/contributors`,
    subscribers_url: `${api}/subscribers`,
    subscription_url: `${api}/subscription`,
    commits_url: `${api}/commits{/sha}`,
    git_commits_url: `${api}/git/commits{/sha}`,
    comments_url: `${api}/comments{/number}`,
    issue_comment_url: `${api}/issues/comments{/number}`,
    contents_url: `${api}/contents/{+path}`,
    compare_url: `${api}/compare/{base}...{head}`,
    merges_url: `${api}/merges`,
    archive_url: `${api}/{archive_format}{/ref}`,
    downloads_url: `${api}/downloads`,
    issues_url: `${api}/issues{/number}`,
    pulls_url: `${api}/pulls{/number}`,
    milestones_url: `${api}/milestones{/number}`,
    notifications_url: `${api}/notifications{?since,all,participating}`,
    labels_url: `${api}/labels{/name}`,
    releases_url: `${api}/releases{/id}`,
    deployments_url: `${api}/deployments`,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
    pushed_at: r.pushedAt,
    git_url: `${web(ctx).replace(/^http/, 'git')}/${full_name}.git`,
    ssh_url: `git@codehost.local:${full_name}.git`,
    clone_url: `${web(ctx)}/${full_name}.git`,
    svn_url: `${web(ctx)}/${full_name}`,
    homepage: r.homepage,
    size: 0,
    stargazers_count: r.stars.size,
    watchers_count: r.stars.size,
    language: null,
    has_issues: r.hasIssues,
    has_projects: r.hasProjects,
    has_downloads: true,
    has_wiki: r.hasWiki,
    has_pages: false,
    has_discussions: r.hasDiscussions,
    forks_count: forks,
    mirror_url: null,
    archived: r.archived,
    disabled: false,
    open_issues_count: openIssues,
    license: null,
    allow_forking: true,
    is_template: false,
    web_commit_signoff_required: false,
    topics: r.topics,
    visibility: r.private ? 'private' : 'public',
    // The repository's custom property values (none are set in the sandbox).
    custom_properties: {},
    forks,
    open_issues: openIssues,
    watchers: r.stars.size,
    default_branch: r.defaultBranch,
  }
  if (viewer) base.permissions = permissionsOf(roleOf(store, r, viewer.id))
  if (full) {
    // The merge settings are shown to whoever may push, as upstream.
    if (viewer && roleAtLeast(roleOf(store, r, viewer.id), 'write')) Object.assign(base, mergeSettingsOf(r))
    base.subscribers_count = r.watchers.size
    base.network_count = forks
    if (r.parentId !== null) {
      const parent = store.repos.get(r.parentId)
      if (parent) {
        base.parent = repoView(ctx, parent, viewer, false)
        let source = parent
        while (source.parentId !== null && store.repos.get(source.parentId))
          source = store.repo(source.parentId)
        base.source = repoView(ctx, source, viewer, false)
      }
    }
  }
  return base
}

export function repoApi(ctx: Ctx, r: Repo): string {
  return `${ctx.url}/repos/${ctx.store.user(r.ownerId).login}/${r.name}`
}

export function repoHtml(ctx: Ctx, r: Repo): string {
  return `${web(ctx)}/${ctx.store.user(r.ownerId).login}/${r.name}`
}

export function labelView(ctx: Ctx, repo: Repo, l: Label) {
  return {
    id: l.id,
    node_id: nodeId('LA', l.id),
    url: `${repoApi(ctx, repo)}/labels/${encodeURIComponent(l.name)}`,
    name: l.name,
    color: l.color,
    default: l.isDefault,
    description: l.description,
  }
}

export function issueView(ctx: Ctx, repo: Repo, i: Issue) {
  const store = ctx.store
  const api = `${repoApi(ctx, repo)}/issues/${i.number}`
  const html = `${repoHtml(ctx, repo)}/${i.pull ? 'pull' : 'issues'}/${i.number}`
  const assignees = i.assigneeIds.map((id) => userView(ctx, store.user(id)))
  return {
    url: api,
    repository_url: repoApi(ctx, repo),
    labels_url: `${api}/labels{/name}`,
    comments_url: `${api}/comments`,
    events_url: `${api}/events`,
    html_url: html,
    id: i.id,
    node_id: nodeId('I', i.id),
    number: i.number,
    title: i.title,
    user: userView(ctx, store.user(i.userId)),
    labels: i.labelIds
      .map((id) => repo.labels.get(id))
      .filter((l) => l !== undefined)
      .map((l) => labelView(ctx, repo, l)),
    state: i.state,
    locked: i.locked,
    assignee: assignees[0] ?? null,
    assignees,
    milestone: null,
    comments: i.comments.length,
    created_at: i.createdAt,
    updated_at: i.updatedAt,
    closed_at: i.closedAt,
    closed_by: i.closedById ? userView(ctx, store.user(i.closedById)) : null,
    author_association: association(ctx, repo, i.userId),
    active_lock_reason: null,
    ...(i.pull
      ? {
          draft: i.pull.draft,
          pull_request: {
            url: `${repoApi(ctx, repo)}/pulls/${i.number}`,
            html_url: html,
            diff_url: `${html}.diff`,
            patch_url: `${html}.patch`,
            merged_at: i.pull.mergedAt,
          },
        }
      : {}),
    body: i.body,
    reactions: reactions(api),
    timeline_url: `${api}/timeline`,
    performed_via_github_app: null,
    state_reason: i.stateReason,
  }
}

export function reactions(url: string) {
  return {
    url: `${url}/reactions`,
    total_count: 0,
    '+1': 0,
    '-1': 0,
    laugh: 0,
    hooray: 0,
    confused: 0,
    heart: 0,
    rocket: 0,
    eyes: 0,
  }
}

export function association(_ctx: Ctx, repo: Repo, userId: number): string {
  if (repo.ownerId === userId) return 'OWNER'
  if (repo.collaborators.has(userId)) return 'COLLABORATOR'
  const authored = [...repo.issues.values()].some((i) => i.pull?.merged && i.userId === userId)
  return authored ? 'CONTRIBUTOR' : 'NONE'
}

export function commentView(ctx: Ctx, repo: Repo, c: IssueComment) {
  const api = `${repoApi(ctx, repo)}/issues/comments/${c.id}`
  const issue = repo.issues.get(c.issueNumber)
  return {
    url: api,
    html_url: `${repoHtml(ctx, repo)}/${issue?.pull ? 'pull' : 'issues'}/${c.issueNumber}#issuecomment-${c.id}`,
    issue_url: `${repoApi(ctx, repo)}/issues/${c.issueNumber}`,
    id: c.id,
    node_id: nodeId('IC', c.id),
    user: userView(ctx, ctx.store.user(c.userId)),
    created_at: c.createdAt,
    updated_at: c.updatedAt,
    author_association: association(ctx, repo, c.userId),
    body: c.body,
    reactions: reactions(api),
    performed_via_github_app: null,
  }
}

function branchRefView(ctx: Ctx, repoId: number, ref: string, sha: string) {
  const repo = ctx.store.repos.get(repoId)
  const owner = repo ? ctx.store.user(repo.ownerId) : null
  return {
    label: `${owner?.login ?? 'unknown'}:${ref}`,
    ref,
    sha,
    user: owner ? userView(ctx, owner) : null,
    repo: repo ? repoView(ctx, repo, null, false) : null,
  }
}

export function liveBaseSha(_ctx: Ctx, repo: Repo, i: Issue): string {
  const p = i.pull!
  if (p.merged || i.state === 'closed') return p.baseSha
  return repo.branches.get(p.baseRef) ?? p.baseSha
}

export function pullView(ctx: Ctx, repo: Repo, i: Issue, mergeable: boolean | null) {
  const p = i.pull!
  const store = ctx.store
  const iv = issueView(ctx, repo, i)
  const api = `${repoApi(ctx, repo)}/pulls/${i.number}`
  const html = `${repoHtml(ctx, repo)}/pull/${i.number}`
  const merged = p.merged
  const mergeableState =
    merged || i.state === 'closed' ? 'unknown' : p.draft ? 'draft' : mergeable === false ? 'dirty' : 'clean'
  const baseSha = liveBaseSha(ctx, repo, i)
  const headCommits = commitCountAndStats(ctx, baseSha, p.headSha)
  return {
    url: api,
    id: p.id,
    node_id: nodeId('PR', p.id),
    html_url: html,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    issue_url: iv.url,
    commits_url: `${api}/commits`,
    review_comments_url: `${api}/comments`,
    review_comment_url: `${repoApi(ctx, repo)}/pulls/comments{/number}`,
    comments_url: iv.comments_url,
    statuses_url: `${repoApi(ctx, repo)}/statuses/${p.headSha}`,
    number: i.number,
    state: i.state,
    locked: i.locked,
    title: i.title,
    user: iv.user,
    body: i.body,
    labels: iv.labels,
    milestone: null,
    active_lock_reason: null,
    created_at: i.createdAt,
    updated_at: i.updatedAt,
    closed_at: i.closedAt,
    merged_at: p.mergedAt,
    merge_commit_sha: p.mergeCommitSha,
    assignee: iv.assignee,
    assignees: iv.assignees,
    requested_reviewers: p.requestedReviewerIds.map((id) => userView(ctx, store.user(id))),
    requested_teams: [],
    head: branchRefView(ctx, p.headRepoId, p.headRef, p.headSha),
    base: branchRefView(ctx, repo.id, p.baseRef, baseSha),
    _links: {
      self: { href: api },
      html: { href: html },
      issue: { href: iv.url },
      comments: { href: iv.comments_url },
      review_comments: { href: `${api}/comments` },
      review_comment: { href: `${repoApi(ctx, repo)}/pulls/comments{/number}` },
      commits: { href: `${api}/commits` },
      statuses: { href: `${repoApi(ctx, repo)}/statuses/${p.headSha}` },
    },
    author_association: iv.author_association,
    auto_merge: null,
    draft: p.draft,
    merged,
    mergeable: merged || i.state === 'closed' ? null : mergeable,
    rebaseable: merged || i.state === 'closed' ? null : mergeable,
    mergeable_state: mergeableState,
    merged_by: p.mergedById ? userView(ctx, store.user(p.mergedById)) : null,
    comments: i.comments.length,
    review_comments: 0,
    maintainer_can_modify: p.maintainerCanModify,
    commits: headCommits.commits,
    additions: headCommits.additions,
    deletions: headCommits.deletions,
    changed_files: headCommits.files,
  }
}

function commitCountAndStats(ctx: Ctx, baseSha: string, headSha: string) {
  const store = ctx.store
  const onBase = new Set<string>()
  const stack = [baseSha]
  while (stack.length) {
    const s = stack.pop()!
    if (onBase.has(s)) continue
    onBase.add(s)
    stack.push(...(store.commits.get(s)?.parents ?? []))
  }
  let commits = 0
  let additions = 0
  let deletions = 0
  const files = new Set<string>()
  const seen = new Set<string>()
  const queue = [headSha]
  while (queue.length) {
    const s = queue.pop()!
    if (seen.has(s) || onBase.has(s)) continue
    seen.add(s)
    const c = store.commits.get(s)
    if (!c) continue
    commits++
    for (const f of commitChanges(store, c)) {
      additions += f.additions
      deletions += f.deletions
      files.add(f.filename)
    }
    queue.push(...c.parents)
  }
  return { commits, additions, deletions, files: files.size }
}

export function reviewView(ctx: Ctx, repo: Repo, i: Issue, r: Review) {
  const html = `${repoHtml(ctx, repo)}/pull/${i.number}#pullrequestreview-${r.id}`
  const pullUrl = `${repoApi(ctx, repo)}/pulls/${i.number}`
  return {
    id: r.id,
    node_id: nodeId('PRR', r.id),
    user: userView(ctx, ctx.store.user(r.userId)),
    body: r.body,
    state: r.state,
    html_url: html,
    pull_request_url: pullUrl,
    author_association: association(ctx, repo, r.userId),
    _links: { html: { href: html }, pull_request: { href: pullUrl } },
    submitted_at: r.submittedAt ?? undefined,
    commit_id: r.commitId,
  }
}
