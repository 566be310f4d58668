// The code-host's place: its repositories (`scope.repositories`, owner/repo, compared without
// regard to case as the code host does), grouped by owner: a thing of an owner that lies in no
// repository (a project's draft issue, a repository made since) is in a scope that holds any
// repository of that owner.
import { z } from 'zod'
import type { PlaceKind } from '../../kit/define.ts'

// Owners: letters, digits and single hyphens (at most 39); repositories: letters, digits, '.',
// '_' and '-' (at most 100), never '.' or '..'.
const REPOSITORY = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/(?!\.\.?$)[A-Za-z0-9._-]{1,100}$/

export const codehostPlaces: PlaceKind[] = [
  {
    kind: 'repository',
    scopeKey: 'repositories',
    id: z
      .string()
      .regex(REPOSITORY, 'must be a code-host repository written owner/repo')
      .describe('A code-host repository, owner/repo.'),
    description: 'Code-host repositories the agent may touch, as owner/repo. Empty: none.',
    summary: 'Code-host repositories (owner/repo) the agent may touch.',
    normalize: (id) => id.toLowerCase(),
    ref: 'owner/name',
    group: {
      kind: 'owner',
      of: (id) => id.split('/')[0],
      ref: 'The account a thing lying in no repository belongs to.',
    },
    nameIn: (data) => {
      const name = (data as { repository?: { full_name?: unknown } } | null)?.repository?.full_name
      return typeof name === 'string' ? name : undefined
    },
  },
]
