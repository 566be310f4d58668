// The code-host triggers a personal account gets by polling, because the real service has no
// webhook for them: its new repositories, its new snippets, and status changes of its own
// projects' items. Each poll compares with a cursor (upstream timestamps and ids only, never
// Patchbay's clock), gives every event a stable id, and its first run only sets the cursor —
// nothing that existed before the trigger fires it.
import { z } from 'zod'
import type { NormalizedEvent, PollContext } from '../../kit/define.ts'
import { graphql } from './graphql.ts'
import { slim } from './webhooks.ts'

const PAGE = 100

/** Where a poll of things by creation time stopped: the newest time seen, and the ids seen at it. */
export const CreatedCursor = z.object({ since: z.string().nullable(), seen: z.array(z.string()) })
type CreatedCursor = z.output<typeof CreatedCursor>

function fresh<T>(
  items: T[],
  cursor: CreatedCursor | null,
  created: (x: T) => string,
  id: (x: T) => string,
): { items: T[]; cursor: CreatedCursor } {
  const newest = items.reduce<string | null>(
    (max, x) => (max === null || created(x) > max ? created(x) : max),
    cursor?.since ?? null,
  )
  const next: CreatedCursor = {
    since: newest,
    seen: items.filter((x) => created(x) === newest).map(id),
  }
  if (cursor === null) return { items: [], cursor: next }
  const { since, seen } = cursor
  const out = items.filter(
    (x) => since === null || created(x) > since || (created(x) === since && !seen.includes(id(x))),
  )
  if (newest === since) next.seen = [...new Set([...seen, ...next.seen])]
  return { items: out.reverse(), cursor: next }
}

interface Repository {
  id: number
  full_name: string
  created_at: string
  owner?: { login?: string }
}

/** New Repository for a personal account: its own repositories, newest first. */
export async function pollOwnRepositories(
  ctx: PollContext<CreatedCursor>,
): Promise<{ events: NormalizedEvent[]; cursor: CreatedCursor }> {
  const repos = await ctx.http.get<Repository[]>('/user/repos', {
    affiliation: 'owner',
    sort: 'created',
    direction: 'desc',
    per_page: PAGE,
  })
  const r = fresh(
    repos ?? [],
    ctx.cursor,
    (x) => x.created_at,
    (x) => String(x.id),
  )
  return {
    cursor: r.cursor,
    events: r.items.map((repo) => ({
      id: `repository.created:${repo.id}`,
      type: 'repository.created',
      occurredAt: repo.created_at,
      refs: { repository: repo.full_name, account: repo.owner?.login },
      data: { event: 'repository', action: 'created', repository: slim(repo) },
    })),
  }
}

interface Gist {
  id: string
  created_at: string
  updated_at: string
  owner?: { login?: string }
}

/** New Snippet: the account's snippets updated since the newest one seen (`since` filters on updates). */
export async function pollOwnSnippets(
  ctx: PollContext<CreatedCursor>,
): Promise<{ events: NormalizedEvent[]; cursor: CreatedCursor }> {
  const cursor = ctx.cursor
  const gists = await ctx.http.get<Gist[]>('/gists', {
    per_page: PAGE,
    ...(cursor?.since ? { since: cursor.since } : {}),
  })
  const r = fresh(
    gists ?? [],
    cursor,
    (x) => x.created_at,
    (x) => x.id,
  )
  return {
    cursor: r.cursor,
    events: r.items.map((gist) => ({
      id: `gist.created:${gist.id}`,
      type: 'gist.created',
      occurredAt: gist.created_at,
      refs: { account: gist.owner?.login },
      data: { event: 'gist', action: 'created', gist: slim(gist) },
    })),
  }
}

const PROJECT_ITEMS = `query PatchbayProjectItems($projects: Int!, $items: Int!) {
  viewer {
    login
    projectsV2(first: $projects) {
      nodes {
        id
        number
        title
        items(first: $items) {
          nodes {
            id
            databaseId
            type
            updatedAt
            fieldValueByName(name: "Status") {
              ... on ProjectV2ItemFieldSingleSelectValue {
                name
                optionId
                field {
                  ... on ProjectV2SingleSelectField {
                    id
                  }
                }
              }
            }
            content {
              ... on Issue {
                number
                title
                url
                repository {
                  nameWithOwner
                }
              }
              ... on PullRequest {
                number
                title
                url
                repository {
                  nameWithOwner
                }
              }
              ... on DraftIssue {
                title
              }
            }
          }
        }
      }
    }
  }
}`

interface ProjectItems {
  viewer: {
    login: string
    projectsV2: {
      nodes: Array<{
        id: string
        number: number
        title: string
        items: {
          nodes: Array<{
            id: string
            databaseId: number | null
            type: string
            updatedAt: string
            fieldValueByName: { name?: string; optionId?: string; field?: { id?: string } } | null
            content: {
              number?: number
              title?: string
              url?: string
              repository?: { nameWithOwner: string }
            } | null
          }>
        }
      }>
    }
  }
}

/** item node id → its Status option (id and name), or null when it has none. */
/** Each project item's Status at the last poll (null: none set). */
export const StatusCursor = z.object({
  statuses: z.record(z.string(), z.object({ id: z.string(), name: z.string() }).nullable()),
})
type StatusCursor = z.output<typeof StatusCursor>

/**
 * Project Item Status Changed for a personal account's projects: each item's Status compared with
 * the previous poll's; a change becomes an event shaped like the organization webhook's
 * `projects_v2_item.edited`, so one match serves both.
 */
export async function pollOwnProjectItems(
  ctx: PollContext<StatusCursor>,
  projectNumber: number | undefined,
): Promise<{ events: NormalizedEvent[]; cursor: StatusCursor }> {
  const data = await graphql<ProjectItems>(ctx.http, PROJECT_ITEMS, { projects: 20, items: PAGE })
  const previous = ctx.cursor?.statuses
  const statuses: StatusCursor['statuses'] = {}
  const events: NormalizedEvent[] = []
  for (const project of data.viewer.projectsV2.nodes) {
    if (projectNumber !== undefined && project.number !== projectNumber) continue
    for (const item of project.items.nodes) {
      const v = item.fieldValueByName
      const now = v?.optionId ? { id: v.optionId, name: v.name ?? '' } : null
      statuses[item.id] = now
      if (!previous || !(item.id in previous)) continue
      const before = previous[item.id]
      if ((before?.id ?? null) === (now?.id ?? null)) continue
      // The content's repository is the event's place (asked for in the query, so no lookup is
      // needed); a draft issue lies in none: it is the project owner's, the account's own.
      const repository = item.content?.repository?.nameWithOwner
      const owner = item.type === 'DRAFT_ISSUE' ? data.viewer.login : undefined
      events.push({
        id: `projects_v2_item.edited:${item.id}:${item.updatedAt}`,
        type: 'projects_v2_item.edited',
        occurredAt: item.updatedAt,
        refs: { repository, ...(owner ? { owner } : {}), account: data.viewer.login },
        data: {
          event: 'projects_v2_item',
          action: 'edited',
          projects_v2_item: {
            id: item.databaseId,
            node_id: item.id,
            project_node_id: project.id,
            content_type:
              item.type === 'PULL_REQUEST' ? 'PullRequest' : item.type === 'ISSUE' ? 'Issue' : 'DraftIssue',
            updated_at: item.updatedAt,
          },
          changes: {
            field_value: {
              field_node_id: v?.field?.id ?? null,
              field_type: 'single_select',
              field_name: 'Status',
              project_number: project.number,
              from: before,
              to: now,
            },
          },
          content: item.content,
          ...(repository ? { repository: { full_name: repository } } : {}),
        },
      })
    }
  }
  return { events, cursor: { statuses } }
}
