// `POST /_sandbox/act`: one user does one thing (star, fork, comment, open a pull request,
// review, publish a release…) through the same code as the REST API, so the same webhooks fire.
import { dispatch, findWorkflow } from './actions.ts'
import { ApiError, type Ctx, notFound } from './context.ts'
import { issueOf, repoOf, str, userOf } from './control-args.ts'
import { commentOnDiscussion, createDiscussion, discussionView } from './discussions.ts'
import { createGist } from './gists.ts'
import { addComment, changeLabels, createIssue, updateIssue } from './issues.ts'
import { roleFromPermission } from './permissions.ts'
import { addItem, createCard, moveCard, setItemField } from './projects.ts'
import {
  createPull,
  createReview,
  mergePull,
  pullJson,
  requestReviewers,
  setDraft,
  updatePull,
} from './pulls.ts'
import { createRelease } from './releases.ts'
import { acceptInvitation, addCollaborator, createRepo, forkRepo, star, subscribe, unstar } from './repos.ts'
import type { User } from './store.ts'
import { commentView, issueView, repoView, userView } from './views.ts'
import { runView } from './views-actions.ts'
import { cardView, gistView, releaseView } from './views-misc.ts'

export function act(ctx: Ctx, action: string, actor: User, b: Record<string, any>): unknown {
  switch (action) {
    case 'star':
    case 'unstar':
    case 'watch': {
      const repo = repoOf(ctx, b)
      if (action === 'star') star(ctx, actor, repo)
      else if (action === 'unstar') unstar(ctx, actor, repo)
      else subscribe(ctx, actor, repo)
      return repoView(ctx, repo, actor)
    }
    case 'fork':
      return repoView(ctx, forkRepo(ctx, actor, repoOf(ctx, b), { name: str(b, 'name') }), actor)
    case 'create_repo':
      return repoView(
        ctx,
        createRepo(ctx, actor, b.org ? userOf(ctx, b.org) : actor, {
          name: str(b, 'name', true)!,
          private: !!b.private,
          autoInit: b.auto_init !== false,
          description: str(b, 'description'),
        }),
        actor,
      )
    case 'open_issue': {
      const repo = repoOf(ctx, b)
      return issueView(
        ctx,
        repo,
        createIssue(ctx, repo, actor, {
          title: str(b, 'title', true)!,
          body: str(b, 'body'),
          labels: b.labels,
          assignees: b.assignees,
        }),
      )
    }
    case 'update_issue': {
      const repo = repoOf(ctx, b)
      const issue = issueOf(repo, b.number)
      updateIssue(ctx, repo, issue, actor, {
        title: str(b, 'title'),
        body: b.body,
        state: b.state,
        stateReason: b.state_reason,
        labels: b.labels,
        assignees: b.assignees,
      })
      return issueView(ctx, repo, issue)
    }
    case 'label': {
      const repo = repoOf(ctx, b)
      const issue = issueOf(repo, b.number)
      changeLabels(
        ctx,
        repo,
        issue,
        actor,
        'add',
        Array.isArray(b.labels) ? b.labels : [str(b, 'label', true)!],
      )
      return issueView(ctx, repo, issue)
    }
    case 'comment': {
      const repo = repoOf(ctx, b)
      const issue = issueOf(repo, b.number)
      return commentView(ctx, repo, addComment(ctx, repo, issue, actor, str(b, 'body', true)!))
    }
    case 'mention': {
      const repo = repoOf(ctx, b)
      const who = str(b, 'login', true)!
      const text = str(b, 'body') ?? `Hey @${who}, could you take a look?`
      if (b.number !== undefined)
        return commentView(ctx, repo, addComment(ctx, repo, issueOf(repo, b.number), actor, text))
      return issueView(
        ctx,
        repo,
        createIssue(ctx, repo, actor, { title: str(b, 'title') ?? `Question for @${who}`, body: text }),
      )
    }
    case 'open_pull': {
      const repo = repoOf(ctx, b)
      const issue = createPull(ctx, repo, actor, {
        title: str(b, 'title', true),
        body: str(b, 'body') ?? null,
        head: str(b, 'head', true),
        base: str(b, 'base') ?? repo.defaultBranch,
        draft: !!b.draft,
      })
      return pullJson(ctx, repo, issue)
    }
    case 'update_pull': {
      const repo = repoOf(ctx, b)
      const issue = issueOf(repo, b.number)
      updatePull(ctx, repo, issue, actor, {
        title: str(b, 'title'),
        body: b.body,
        state: b.state,
        base: str(b, 'base'),
        draft: b.draft,
      })
      return pullJson(ctx, repo, issue)
    }
    case 'ready_for_review':
    case 'convert_to_draft': {
      const repo = repoOf(ctx, b)
      const issue = issueOf(repo, b.number)
      if (!issue.pull) throw new ApiError(422, 'Not a pull request')
      setDraft(ctx, repo, issue, actor, action === 'convert_to_draft')
      return pullJson(ctx, repo, issue)
    }
    case 'request_review': {
      const repo = repoOf(ctx, b)
      const issue = issueOf(repo, b.number)
      requestReviewers(
        ctx,
        repo,
        issue,
        actor,
        Array.isArray(b.reviewers) ? b.reviewers.map(String) : [str(b, 'reviewer', true)!],
      )
      return pullJson(ctx, repo, issue)
    }
    case 'review': {
      const repo = repoOf(ctx, b)
      const issue = issueOf(repo, b.number)
      if (!issue.pull) throw new ApiError(422, 'Not a pull request')
      const r = createReview(ctx, repo, issue, actor, {
        body: str(b, 'body'),
        event: str(b, 'event') ?? 'APPROVE',
      })
      return { id: r.id, state: r.state }
    }
    case 'merge': {
      const repo = repoOf(ctx, b)
      const issue = issueOf(repo, b.number)
      if (!issue.pull) throw new ApiError(422, 'Not a pull request')
      return mergePull(ctx, repo, issue, actor, { mergeMethod: str(b, 'merge_method'), sha: str(b, 'sha') })
    }
    case 'add_collaborator': {
      const repo = repoOf(ctx, b)
      const role = roleFromPermission(str(b, 'permission') ?? 'push')
      if (!role) throw new ApiError(422, 'invalid permission')
      const user = userOf(ctx, b.login)
      addCollaborator(ctx, actor, repo, user, role)
      return userView(ctx, user)
    }
    case 'accept_invitation': {
      const pending = [...ctx.store.invitations.values()].filter(
        (i) => i.inviteeId === actor.id && (!b.owner || i.repoId === repoOf(ctx, b).id),
      )
      for (const inv of pending) acceptInvitation(ctx, inv)
      return { accepted: pending.map((i) => i.id) }
    }
    case 'create_discussion': {
      const repo = repoOf(ctx, b)
      return discussionView(
        ctx,
        repo,
        createDiscussion(ctx, repo, actor, {
          title: str(b, 'title'),
          body: str(b, 'body'),
          category: str(b, 'category'),
        }),
      )
    }
    case 'discussion_comment': {
      const repo = repoOf(ctx, b)
      return commentOnDiscussion(
        ctx,
        repo,
        Number(b.number),
        actor,
        str(b, 'body', true)!,
        b.parent_id ?? null,
      )
    }
    case 'publish_release':
    case 'create_release': {
      const repo = repoOf(ctx, b)
      const r = createRelease(ctx, repo, actor, {
        tagName: str(b, 'tag_name', true),
        name: str(b, 'name'),
        body: str(b, 'body'),
        draft: action === 'create_release' ? !!b.draft : false,
        prerelease: !!b.prerelease,
        targetCommitish: str(b, 'target_commitish'),
      })
      return releaseView(ctx, repo, r)
    }
    case 'create_gist':
      return gistView(
        ctx,
        createGist(ctx, actor, {
          description: str(b, 'description') ?? null,
          public: b.public !== false,
          files: b.files ?? { 'note.md': { content: 'Hello from the sandbox' } },
        }),
      )
    case 'create_project_card': {
      let contentId: number | undefined
      let contentType: string | undefined
      if (b.number !== undefined) {
        const repo = repoOf(ctx, b)
        const issue = issueOf(repo, b.number)
        contentId = issue.pull ? issue.pull.id : issue.id
        contentType = issue.pull ? 'PullRequest' : 'Issue'
      }
      const { project, column, card } = createCard(ctx, actor, Number(b.column_id), {
        note: str(b, 'note') ?? null,
        contentId,
        contentType,
      })
      return cardView(ctx, project, column, card)
    }
    case 'move_project_card':
      moveCard(
        ctx,
        actor,
        Number(b.card_id),
        str(b, 'position') ?? 'top',
        b.column_id === undefined ? undefined : Number(b.column_id),
      )
      return { moved: Number(b.card_id) }
    case 'set_project_item_status':
    case 'set_project_item_field': {
      const project = b.project_id
        ? ctx.store.projectsV2.find((p) => p.nodeId === b.project_id)
        : ctx.store.projectsV2.find((p) => p.items.some((i) => i.nodeId === b.item_id))
      if (!project) throw new ApiError(404, 'No such project')
      const item = project.items.find((i) => i.nodeId === b.item_id)
      if (!item) throw new ApiError(404, 'No such item')
      const field = project.fields.find((f) => f.nodeId === b.field_id || f.name === (b.field ?? 'Status'))
      if (!field) throw new ApiError(404, 'No such field')
      const option = field.options.find((o) => o.id === b.option_id || o.name === b.status)
      const value =
        field.dataType === 'SINGLE_SELECT'
          ? { singleSelectOptionId: option?.id ?? '' }
          : { text: str(b, 'text') ?? '' }
      setItemField(ctx, actor, project, item, field, value)
      return { item: item.nodeId, field: field.name, value }
    }
    case 'add_project_item': {
      const project = ctx.store.projectsV2.find((p) => p.nodeId === b.project_id) ?? ctx.store.projectsV2[0]
      const repo = repoOf(ctx, b)
      const issue = issueOf(repo, b.number)
      const item = addItem(ctx, actor, project, {
        repoId: repo.id,
        number: issue.number,
        type: issue.pull ? 'PullRequest' : 'Issue',
      })
      return { id: item.nodeId }
    }
    case 'dispatch_workflow': {
      const repo = repoOf(ctx, b)
      const wf = findWorkflow(repo, String(b.workflow ?? 'ci.yml'))
      if (!wf) throw notFound()
      return runView(ctx, repo, dispatch(ctx, repo, wf, actor, str(b, 'ref') ?? repo.defaultBranch, b.inputs))
    }
    default:
      throw new ApiError(422, `Unknown action ${action}`)
  }
}
