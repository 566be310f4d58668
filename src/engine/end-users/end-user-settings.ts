// A workspace's settings for end users, kept in its settings document (workspaces.settings, key
// `endUsers`): the origins connect sessions may return to, and the notification URL lifecycle
// notices are posted to with the secret they are signed with (sealed in the vault).
import { randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { EgressGuard } from '../../kit/egress.ts'
import { PatchbayError } from '../../kit/errors.ts'
import type { Database } from '../../store/schema.ts'
import type { Vault } from '../../store/vault.ts'
import { putWorkspaceSettings, workspaceDocument } from '../../store/workspaces.ts'

interface Stored {
  allowedOrigins?: string[]
  notificationUrl?: string | null
  /** Vault ciphertext of the whsec_… secret. */
  notificationSecret?: string | null
}

export interface EndUserSettingsView {
  allowedOrigins: string[]
  notificationUrl: string | null
}

export interface EndUserSettingsChanges {
  allowedOrigins?: string[]
  notificationUrl?: string | null
  /** Make a new notification secret (returned this once). */
  rotateNotificationSecret?: boolean
}

const KEY = 'endUsers'

export class EndUserSettings {
  #db: Kysely<Database>
  #vault: Vault
  #egress: EgressGuard
  constructor(deps: { db: Kysely<Database>; vault: Vault; egress: EgressGuard }) {
    this.#db = deps.db
    this.#vault = deps.vault
    this.#egress = deps.egress
  }

  async #document(workspaceId: string, db: Kysely<Database> = this.#db) {
    const row = await workspaceDocument(db, workspaceId)
    const all = row?.settings ?? {}
    return { all, mine: (all[KEY] ?? {}) as Stored, name: row?.name ?? '' }
  }

  /** The settings with the notification secret in clear (for signing). */
  async get(workspaceId: string): Promise<EndUserSettingsView & { notificationSecret: string | null }> {
    const { mine } = await this.#document(workspaceId)
    return {
      allowedOrigins: mine.allowedOrigins ?? [],
      notificationUrl: mine.notificationUrl ?? null,
      notificationSecret: mine.notificationSecret ? this.#vault.open<string>(mine.notificationSecret) : null,
    }
  }

  async workspaceName(workspaceId: string): Promise<string> {
    return (await this.#document(workspaceId)).name
  }

  /** Merges the changes in; a notification URL set for the first time gets a secret (returned once). */
  async update(
    workspaceId: string,
    changes: EndUserSettingsChanges,
  ): Promise<EndUserSettingsView & { notificationSecret?: string }> {
    const origins = changes.allowedOrigins?.map((o, i) => originOf(o, `allowedOrigins.${i}`))
    if (changes.notificationUrl) await this.#egress.check(changes.notificationUrl, 'notificationUrl')
    return this.#db.transaction().execute(async (tx) => {
      const { all, mine } = await this.#document(workspaceId, tx)
      const next: Stored = { ...mine }
      if (origins) next.allowedOrigins = [...new Set(origins)]
      if (changes.notificationUrl !== undefined) next.notificationUrl = changes.notificationUrl
      let secret: string | undefined
      if (changes.rotateNotificationSecret || (next.notificationUrl && !next.notificationSecret)) {
        secret = `whsec_${randomBytes(24).toString('base64')}`
        next.notificationSecret = this.#vault.seal(secret)
      }
      await putWorkspaceSettings(tx, workspaceId, { ...all, [KEY]: next })
      return {
        allowedOrigins: next.allowedOrigins ?? [],
        notificationUrl: next.notificationUrl ?? null,
        ...(secret ? { notificationSecret: secret } : {}),
      }
    })
  }

  /**
   * returnTo of a connect session: an http(s) address on one of the workspace's allowed origins
   * (RETURN_TO_NOT_ALLOWED otherwise).
   */
  async checkReturnTo(workspaceId: string, returnTo: string): Promise<string> {
    const { allowedOrigins } = await this.get(workspaceId)
    let url: URL | undefined
    try {
      url = new URL(returnTo)
    } catch {}
    const ok =
      url !== undefined &&
      (url.protocol === 'https:' || url.protocol === 'http:') &&
      !url.username &&
      !url.password &&
      !/[\r\n\\]/.test(returnTo) &&
      allowedOrigins.includes(url.origin)
    if (!ok)
      throw new PatchbayError(
        'RETURN_TO_NOT_ALLOWED',
        `returnTo "${returnTo.slice(0, 300)}" is not on one of the workspace's allowed origins (${allowedOrigins.join(', ') || 'none set'}). Nothing was made.`,
        {
          hint: 'Add its origin with PATCH /v1/workspace/settings {"allowedOrigins": ["https://app.example.com"]}, or give a returnTo on an allowed origin.',
        },
      )
    return url!.toString()
  }
}

/** An origin as the browser writes it (scheme://host[:port]); anything more is refused. */
function originOf(value: string, at: string): string {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new PatchbayError('VALIDATION_FAILED', `Invalid body: ${at}: "${value}" is not an origin.`, {
      hint: 'Give origins like https://app.example.com (scheme, host and port only).',
    })
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin === 'null')
    throw new PatchbayError(
      'VALIDATION_FAILED',
      `Invalid body: ${at}: "${value}" is not an http(s) origin.`,
      {
        hint: 'Give origins like https://app.example.com.',
      },
    )
  if (`${url.origin}/` !== url.toString() && url.origin !== value)
    throw new PatchbayError(
      'VALIDATION_FAILED',
      `Invalid body: ${at}: "${value}" has a path; give the origin only.`,
      {
        hint: `Give "${url.origin}".`,
      },
    )
  return url.origin
}
