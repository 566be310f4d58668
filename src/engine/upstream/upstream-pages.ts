// An upstream's web pages, as far as connections and inputs need them: the address of the page
// where a user fetches a token (POST /v1/connectors/:id/token-url), and page addresses users give
// instead of identifiers (a page's web address), read into identifiers through the
// upstream's API before a step's input or a trigger's config is validated
// (ConnectorDefinition.pageAddresses).
import type { ConnectorDefinition, Credentials, ScopedField } from '../../kit/define.ts'
import { PatchbayError, validationError } from '../../kit/errors.ts'
import type { Registry } from '../registry.ts'
import type { UpstreamClients } from './upstream-clients.ts'

const ADDRESS = /^https?:\/\//i

export class UpstreamPages {
  #registry: Registry
  #clients: UpstreamClients
  #webUrls: Record<string, string | undefined>

  constructor(deps: {
    registry: Registry
    clients: UpstreamClients
    /** The upstreams' web addresses where they differ from their API address (PATCHBAY_<ID>_WEB_URL). */
    webUrls?: Record<string, string | undefined>
  }) {
    this.#registry = deps.registry
    this.#clients = deps.clients
    this.#webUrls = deps.webUrls ?? {}
  }

  /** The upstream's web address: configured, or its API address. */
  webUrl(connector: ConnectorDefinition): string {
    return (this.#webUrls[connector.id] ?? this.#clients.baseUrl(connector)).replace(/\/$/, '')
  }

  /** The address of the page where a user approves a token for their API key. */
  tokenPageUrl(connectorId: string, input: unknown): { url: string } {
    const connector = this.#registry.connector(connectorId)
    if (!connector)
      throw new PatchbayError('UNKNOWN_CONNECTOR', `There is no connector "${connectorId}".`, {
        hint: `Use one of: ${this.#registry.connectors.map((c) => c.id).join(', ')}.`,
        status: 404,
      })
    const method = connector.auth.find((a) => a.tokenPage)
    if (!method?.tokenPage)
      throw new PatchbayError(
        'TOKEN_PAGE_NOT_SUPPORTED',
        `The ${connector.name} connector has no token page.`,
        {
          hint: `Connect it with: ${connector.auth.map((a) => a.id).join(', ')}.`,
        },
      )
    const parsed = method.tokenPage.input.safeParse(input ?? {})
    if (!parsed.success) throw validationError(parsed.error.issues, 'body')
    return { url: method.tokenPage.url(this.webUrl(connector), parsed.data) }
  }

  /** Whether a scoped field of the input holds a page address (reading it needs credentials). */
  holdsPageAddress(
    connector: ConnectorDefinition,
    fields: ScopedField[] | undefined,
    input: unknown,
  ): boolean {
    if (!connector.pageAddresses || !fields) return false
    return fields.some((f) => f.field && values(readPath(input, f.field)).some((v) => ADDRESS.test(v)))
  }

  /**
   * A copy of the input with every page address in a scoped field replaced by the identifier
   * read from the data behind the page (with these credentials). `prefix` names the input in errors.
   */
  async resolve(
    connector: ConnectorDefinition,
    fields: ScopedField[],
    input: unknown,
    credentials: Credentials,
    prefix: 'input' | 'config',
  ): Promise<unknown> {
    const support = connector.pageAddresses
    if (!support) return input
    const out = structuredClone(input) as Record<string, unknown>
    const web = this.webUrl(connector)
    const origin = new URL(web).origin
    const http = this.#clients.create({
      connector,
      credentials,
      paced: true,
      storedConnection: false,
    })
    for (const f of fields) {
      if (!f.field) continue
      const current = readPath(out, f.field)
      const list = Array.isArray(current) ? [...current] : [current]
      let changed = false
      for (const [i, value] of list.entries()) {
        if (typeof value !== 'string' || !ADDRESS.test(value)) continue
        const name = `${prefix}.${f.field}${Array.isArray(current) ? `.${i}` : ''}`
        let url: URL
        try {
          url = new URL(value)
        } catch {
          throw invalid(name, `${value} is not a valid address`, connector, origin)
        }
        if (url.origin !== origin)
          throw invalid(name, `${value} is not a ${connector.name} page address`, connector, origin)
        const request = support.request(f.kind, url)
        if (!request)
          throw invalid(name, `${value} is not the page address of a ${f.kind}`, connector, origin)
        let data: unknown
        try {
          data = await http.get(request.path, request.query)
        } catch (err) {
          if (
            err instanceof PatchbayError &&
            err.status >= 400 &&
            err.status < 500 &&
            err.code !== 'RATE_LIMITED'
          )
            throw new PatchbayError(
              'PAGE_ADDRESS_UNRESOLVED',
              `${name}: the page ${value} could not be read (${err.message}).`,
              {
                hint: `Check the address, and that the connection's account can open that ${f.kind}; or give the ${f.kind}'s identifier.`,
                upstream: err.upstream,
                status: err.status === 404 ? undefined : 400,
              },
            )
          throw err
        }
        const id = support.idOf(f.kind, data)
        if (!id)
          throw new PatchbayError(
            'PAGE_ADDRESS_UNRESOLVED',
            `${name}: the page ${value} gave no ${f.kind} identifier.`,
            {
              hint: `Give the ${f.kind}'s identifier instead.`,
              status: 502,
            },
          )
        list[i] = id
        changed = true
      }
      if (changed) writePath(out, f.field, Array.isArray(current) ? list : list[0])
    }
    return out
  }
}

function invalid(name: string, why: string, connector: ConnectorDefinition, origin: string) {
  return new PatchbayError('PAGE_ADDRESS_INVALID', `${name}: ${why}.`, {
    hint: `Give the identifier, or a ${connector.name} page address on ${origin}${connector.pageAddresses?.forms ? ` (${connector.pageAddresses.forms})` : ''}.`,
  })
}

const values = (v: unknown): string[] => (Array.isArray(v) ? v : [v]).filter((x) => typeof x === 'string')

function readPath(obj: unknown, path: string): unknown {
  let cur = obj
  for (const k of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, k)) return undefined
    cur = (cur as Record<string, unknown>)[k]
  }
  return cur
}

function writePath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.')
  let cur: Record<string, unknown> = obj
  for (const k of keys.slice(0, -1)) cur = cur[k] as Record<string, unknown>
  cur[keys[keys.length - 1]] = value
}
