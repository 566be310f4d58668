// Credentials at rest: AES-256-GCM with a fresh IV each time, the key id stored beside the
// ciphertext so master keys can rotate (old keys stay readable through the keyring).
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'

const VERSION = 'v1'

export class VaultError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'VaultError'
  }
}

export class Vault {
  readonly currentKeyId: string
  #keys = new Map<string, Buffer>()

  /** `keys[0]` encrypts; every key decrypts what it encrypted. */
  constructor(keys: Buffer[]) {
    if (keys.length === 0) throw new VaultError('The vault needs at least one master key.')
    for (const k of keys) {
      if (k.length !== 32) throw new VaultError('A master key must be 32 bytes (base64 of 32 bytes).')
      this.#keys.set(keyId(k), k)
    }
    this.currentKeyId = keyId(keys[0])
  }

  /**
   * A keyed digest (HMAC-SHA-256 under the current master key) of `message`: a token only this
   * service can make, that it can check again without storing it. Changes when the key rotates.
   */
  mac(message: string): string {
    return createHmac('sha256', this.#keys.get(this.currentKeyId)!).update(message).digest('base64url')
  }

  seal(value: unknown): string {
    const key = this.#keys.get(this.currentKeyId)!
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', key, iv)
    cipher.setAAD(Buffer.from(`${VERSION}.${this.currentKeyId}`))
    const ciphertext = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()])
    const tag = cipher.getAuthTag()
    return [
      VERSION,
      this.currentKeyId,
      iv.toString('base64url'),
      tag.toString('base64url'),
      ciphertext.toString('base64url'),
    ].join('.')
  }

  open<T = unknown>(sealed: string): T {
    const [version, kid, iv, tag, ciphertext] = sealed.split('.')
    if (version !== VERSION || !kid || !iv || !tag || ciphertext === undefined)
      throw new VaultError('The stored secret is not a vault ciphertext.')
    const key = this.#keys.get(kid)
    if (!key)
      throw new VaultError(
        `The stored secret was sealed with master key ${kid}, which is not configured; set PATCHBAY_MASTER_KEY or PATCHBAY_PREVIOUS_MASTER_KEYS to include it.`,
      )
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
      decipher.setAAD(Buffer.from(`${version}.${kid}`))
      decipher.setAuthTag(Buffer.from(tag, 'base64url'))
      const plain = Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()])
      return JSON.parse(plain.toString('utf8')) as T
    } catch {
      throw new VaultError(
        `The stored secret could not be decrypted with master key ${kid}: it was altered or the key is wrong.`,
      )
    }
  }

  /** Whether a sealed value is under an older key and should be sealed again. */
  needsRotation(sealed: string): boolean {
    return sealed.split('.')[1] !== this.currentKeyId
  }
}

function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 12)
}

export function decodeMasterKey(b64: string, name = 'PATCHBAY_MASTER_KEY'): Buffer {
  const key = Buffer.from(b64, 'base64')
  if (key.length !== 32)
    throw new VaultError(`${name} must be the base64 of exactly 32 bytes (got ${key.length} bytes).`)
  return key
}

/** The master key from the environment, or from (creating if needed) the key file in the data directory. */
export function loadVault(opts: {
  masterKey: string | null
  previousMasterKeys: string[]
  dataDir: string
}): Vault {
  const previous = opts.previousMasterKeys.map((k) => decodeMasterKey(k, 'PATCHBAY_PREVIOUS_MASTER_KEYS'))
  if (opts.masterKey) return new Vault([decodeMasterKey(opts.masterKey), ...previous])
  const file = path.join(opts.dataDir, 'master.key')
  fs.mkdirSync(opts.dataDir, { recursive: true })
  if (!fs.existsSync(file)) {
    fs.writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' })
  }
  fs.chmodSync(file, 0o600)
  return new Vault([decodeMasterKey(fs.readFileSync(file, 'utf8').trim(), file), ...previous])
}
