// The code-host's GraphQL endpoint answers 200 even when it fails: errors[] says what went wrong.
// Read here into the error model, with the upstream's own messages.
import { type ErrorCode, PatchbayError } from '../../kit/errors.ts'
import type { Http } from '../../kit/http.ts'

export async function graphql<T>(http: Http, query: string, variables: Record<string, unknown>): Promise<T> {
  const res = await http.request<{ data?: T; errors?: Array<{ type?: string; message?: string }> }>({
    method: 'POST',
    path: '/graphql',
    body: { query, variables },
    // Queries are safe to repeat; mutations here set a value, so repeating them changes nothing.
    idempotent: true,
  })
  const errors = res.data?.errors ?? []
  if (errors.length > 0) {
    const type = errors[0].type ?? ''
    const messages = errors.map((e) => e.message ?? e.type ?? 'error').join('; ')
    const [code, hint]: [ErrorCode, string] =
      type === 'NOT_FOUND'
        ? [
            'UPSTREAM_NOT_FOUND',
            'Check the ids: the item or project does not exist, or this connection cannot see it.',
          ]
        : type === 'FORBIDDEN' || type === 'INSUFFICIENT_SCOPES'
          ? ['UPSTREAM_FORBIDDEN', 'The connection lacks the permission (projects need the project scope).']
          : ['GRAPHQL_ERROR', 'Correct the input named in the message and try again.']
    throw new PatchbayError(code, `The code-host's GraphQL API refused the request: ${messages}`, {
      hint,
      upstream: { status: res.status, body: JSON.stringify({ errors }).slice(0, 500) },
    })
  }
  if (!res.data?.data)
    throw new PatchbayError(
      'UPSTREAM_UNEXPECTED_RESPONSE',
      "The code-host's GraphQL API answered without data.",
      {
        hint: 'Try again later.',
      },
    )
  return res.data.data
}
