// (choice) Discussions have no REST API upstream (only GraphQL); here they are created through the
// control API (`POST /_sandbox/act`) and read through `GET /_sandbox/discussions/{owner}/{repo}`,
// and they emit `discussion` and `discussion_comment` webhooks with the upstream payload shapes.
import { type Ctx, notFound, validationFailed } from './context.ts'
import { emit, envelope } from './events.ts'
import { nodeId } from './ids.ts'
import type { Discussion, Repo, User } from './store.ts'
import { association, reactions, repoApi, repoHtml, userView } from './views.ts'

const CATEGORIES: Record<string, { id: number; emoji: string; answerable: boolean }> = {
  General: { id: 1, emoji: ':speech_balloon:', answerable: false },
  Ideas: { id: 2, emoji: ':bulb:', answerable: false },
  'Q&A': { id: 3, emoji: ':pray:', answerable: true },
  Announcements: { id: 4, emoji: ':mega:', answerable: false },
}

export function discussionView(ctx: Ctx, repo: Repo, d: Discussion) {
  const cat = CATEGORIES[d.category] ?? CATEGORIES.General
  return {
    repository_url: repoApi(ctx, repo),
    category: {
      id: repo.id * 10 + cat.id,
      node_id: nodeId('DIC', repo.id * 10 + cat.id),
      repository_id: repo.id,
      emoji: cat.emoji,
      name: d.category,
      description: '',
      created_at: repo.createdAt,
      updated_at: repo.createdAt,
      slug: d.category
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-|-$/g, ''),
      is_answerable: cat.answerable,
    },
    answer_html_url: null,
    answer_chosen_at: null,
    answer_chosen_by: null,
    html_url: `${repoHtml(ctx, repo)}/discussions/${d.number}`,
    id: d.id,
    node_id: nodeId('D', d.id),
    number: d.number,
    title: d.title,
    user: userView(ctx, ctx.store.user(d.userId)),
    state: 'open',
    state_reason: null,
    locked: false,
    comments: d.comments.length,
    created_at: d.createdAt,
    updated_at: d.updatedAt,
    author_association: association(ctx, repo, d.userId),
    active_lock_reason: null,
    body: d.body,
  }
}

export function createDiscussion(
  ctx: Ctx,
  repo: Repo,
  actor: User,
  input: { title?: string; body?: string; category?: string },
): Discussion {
  if (!input.title)
    throw validationFailed([{ resource: 'Discussion', code: 'missing_field', field: 'title' }])
  const now = ctx.emulator.clock.iso()
  const d: Discussion = {
    id: ctx.store.nextId('discussion', 6_000_001),
    repoId: repo.id,
    number: repo.nextNumber++,
    title: input.title,
    body: input.body ?? '',
    userId: actor.id,
    category: input.category && CATEGORIES[input.category] ? input.category : 'General',
    createdAt: now,
    updatedAt: now,
    comments: [],
  }
  repo.discussions.set(d.number, d)
  repo.hasDiscussions = true
  const view = discussionView(ctx, repo, d)
  emit(ctx, 'discussion', { action: 'created', discussion: view, ...envelope(ctx, repo, actor) }, { repo })
  return d
}

export function commentOnDiscussion(
  ctx: Ctx,
  repo: Repo,
  number: number,
  actor: User,
  body: string,
  parentId: number | null = null,
) {
  const d = repo.discussions.get(number)
  if (!d) throw notFound()
  if (!body) throw validationFailed([{ resource: 'DiscussionComment', code: 'missing_field', field: 'body' }])
  const now = ctx.emulator.clock.iso()
  const c = {
    id: ctx.store.nextId('discussion_comment', 8_000_001),
    body,
    userId: actor.id,
    createdAt: now,
    parentId,
  }
  d.comments.push(c)
  d.updatedAt = now
  const comment = {
    id: c.id,
    node_id: nodeId('DC', c.id),
    html_url: `${repoHtml(ctx, repo)}/discussions/${d.number}#discussioncomment-${c.id}`,
    parent_id: c.parentId,
    child_comment_count: 0,
    repository_url: `${ctx.store.user(repo.ownerId).login}/${repo.name}`,
    discussion_id: d.id,
    author_association: association(ctx, repo, actor.id),
    user: userView(ctx, actor),
    created_at: now,
    updated_at: now,
    body,
    reactions: reactions(`${repoApi(ctx, repo)}/discussions/${d.number}/comments/${c.id}`),
  }
  const view = discussionView(ctx, repo, d)
  emit(
    ctx,
    'discussion_comment',
    { action: 'created', comment, discussion: view, ...envelope(ctx, repo, actor) },
    { repo },
  )
  return comment
}
