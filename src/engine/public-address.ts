// Where people and upstreams reach this instance (PATCHBAY_PUBLIC_URL, or where it listens): one
// object, made with the engine and told the address when the server starts listening, read by
// every part that writes an address of Patchbay's — webhook callbacks, OAuth callbacks, connect
// links, mails and single sign-on.
export class PublicAddress {
  #url = ''

  /** The address, without a trailing slash; '' until the server starts. */
  get url(): string {
    return this.#url
  }

  /** Set once the server knows where it listens (EventSystem.start). */
  set(url: string): void {
    this.#url = url.replace(/\/+$/, '')
  }

  /** The address of a path of Patchbay's (`/hooks/…`, `/v1/oauth/callback/…`). */
  of(path: string): string {
    return `${this.#url}${path}`
  }
}
