import { z } from 'zod'
import { defineStep } from '../../../kit/define.ts'
import { PatchbayError } from '../../../kit/errors.ts'
import { graphql } from '../graphql.ts'

const ITEM = `query($item: ID!, $field: String!) {
  node(id: $item) {
    __typename
    ... on ProjectV2Item {
      id
      project {
        id
        number
        title
        field(name: $field) {
          __typename
          ... on ProjectV2SingleSelectField { id name options { id name } }
        }
      }
      fieldValueByName(name: $field) {
        __typename
        ... on ProjectV2ItemFieldSingleSelectValue { name optionId }
      }
      content {
        __typename
        ... on Issue { number title repository { nameWithOwner } }
        ... on PullRequest { number title repository { nameWithOwner } }
        ... on DraftIssue { title }
      }
    }
  }
}`

/** What ITEM reads: the node, when it is a project item (other node types carry only __typename). */
interface ItemNode {
  __typename: string
  id: string
  project: {
    id: string
    number: number
    title: string
    /** A single-select field carries its options; another kind of field only its __typename. */
    field: {
      __typename: string
      id: string
      name: string
      options?: Array<{ id: string; name: string }>
    } | null
  }
  fieldValueByName?: { __typename?: string; name?: string | null } | null
  content?: {
    __typename: string
    number?: number
    title?: string
    repository?: { nameWithOwner: string }
  } | null
}

const SET = `mutation($project: ID!, $item: ID!, $field: ID!, $option: String!) {
  updateProjectV2ItemFieldValue(
    input: { projectId: $project, itemId: $item, fieldId: $field, value: { singleSelectOptionId: $option } }
  ) { projectV2Item { id } }
}`

export const updateProjectV2ItemStatus = defineStep({
  key: 'update_project_v2_item_status',
  name: 'Update Project (V2) Item Status',
  description:
    'Moves an item of a project (v2) to another status by the status name, e.g. "In Progress" or "Done" (matched without regard to case). itemId is the project item node id (PVTI_…) from a Project Item Status Changed event or the GraphQL API; the item knows its project. A name the project does not have fails with STATUS_OPTION_NOT_FOUND listing the names it has.',
  input: z.object({
    itemId: z.string().min(1).max(200).describe('The project item node id, e.g. PVTI_lADOA….'),
    status: z.string().min(1).max(100).describe('The status option name to set, e.g. Done.'),
    projectId: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe('The project node id (PVT_…), to make sure the item is on that project.'),
    field: z
      .string()
      .min(1)
      .max(100)
      .default('Status')
      .describe('The single-select field to set (default Status).'),
  }),
  output: z.object({
    itemId: z.string(),
    project: z.object({ id: z.string(), number: z.number(), title: z.string() }),
    field: z.string(),
    previousStatus: z.string().nullable(),
    status: z.string().describe('The option name now set.'),
    optionId: z.string(),
    content: z
      .object({
        type: z.string().describe('Issue, PullRequest or DraftIssue.'),
        number: z.number().nullable(),
        title: z.string().nullable(),
        repository: z.string().nullable(),
      })
      .nullable(),
  }),
  hints: { readOnly: false, destructive: false, idempotent: true },
  run: async (ctx, input) => {
    const got = await graphql<{ node: ItemNode | null }>(ctx.http, ITEM, {
      item: input.itemId,
      field: input.field,
    })
    const item = got.node
    if (item?.__typename !== 'ProjectV2Item')
      throw new PatchbayError(
        'UPSTREAM_NOT_FOUND',
        `${input.itemId} is not a project item (it is ${item?.__typename ?? 'nothing'}).`,
        {
          hint: 'Give the project item node id (PVTI_…), not the issue or project id.',
        },
      )
    const project = item.project
    if (input.projectId && project.id !== input.projectId)
      throw new PatchbayError(
        'ITEM_NOT_IN_PROJECT',
        `Item ${input.itemId} is on project ${project.id} ("${project.title}"), not ${input.projectId}.`,
        {
          hint: 'Check the project id, or leave it out.',
        },
      )
    const content = item.content
      ? {
          type: item.content.__typename,
          number: item.content.number ?? null,
          title: item.content.title ?? null,
          repository: item.content.repository?.nameWithOwner ?? null,
        }
      : null
    // A scoped agent may move only items of issues and pull requests in its repositories.
    if (ctx.scope) {
      const repo = content?.repository
      if (!repo || !ctx.scope.repositories.some((r) => r.toLowerCase() === repo.toLowerCase()))
        throw new PatchbayError(
          'SCOPE_DENIED',
          `This agent may not change item ${input.itemId}: ${repo ? `its ${content?.type} is in ${repo}, outside` : 'it belongs to no repository in'} the agent's scope (repositories: ${ctx.scope.repositories.join(', ') || 'none'}).`,
          {
            hint: "Use an item of an issue or pull request in the agent's repositories, or a workspace key.",
          },
        )
    }
    const field = project.field
    if (field?.__typename !== 'ProjectV2SingleSelectField')
      throw new PatchbayError(
        'FIELD_NOT_FOUND',
        `Project "${project.title}" has no single-select field named "${input.field}".`,
        {
          hint: 'Status fields are single-select fields; name the field exactly as the project shows it.',
        },
      )
    const wanted = input.status.trim().toLowerCase()
    const option = (field.options ?? []).find((o) => String(o.name).trim().toLowerCase() === wanted)
    if (!option)
      throw new PatchbayError(
        'STATUS_OPTION_NOT_FOUND',
        `Project "${project.title}" has no ${field.name} "${input.status}"; its options are: ${(field.options ?? []).map((o) => o.name).join(', ')}.`,
        {
          hint: 'Use one of the option names listed.',
          details: { options: (field.options ?? []).map((o) => o.name) },
        },
      )
    await graphql(ctx.http, SET, { project: project.id, item: item.id, field: field.id, option: option.id })
    return {
      itemId: item.id,
      project: { id: project.id, number: project.number, title: project.title },
      field: field.name,
      previousStatus: item.fieldValueByName?.name ?? null,
      status: option.name,
      optionId: option.id,
      content,
    }
  },
})
