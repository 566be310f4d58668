import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { loadVault, Vault, VaultError } from '../../src/store/vault.ts'
import { tempDir } from '../helpers/databases.ts'

const secret = { key: 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6', token: 'ATTAsupersecrettokenvalue-0123456789' }

test('a sealed secret contains none of the secret, in any encoding, and opens again', () => {
  const vault = new Vault([randomBytes(32)])
  const sealed = vault.seal(secret)
  for (const s of Object.values(secret)) {
    assert.ok(!sealed.includes(s))
    assert.ok(!sealed.includes(Buffer.from(s).toString('base64')))
    assert.ok(!sealed.includes(Buffer.from(s).toString('base64url')))
    assert.ok(!sealed.includes(Buffer.from(s).toString('hex')))
  }
  assert.deepEqual(vault.open(sealed), secret)
})

test('every seal uses a fresh IV, so the same secret never gives the same ciphertext', () => {
  const vault = new Vault([randomBytes(32)])
  assert.notEqual(vault.seal(secret), vault.seal(secret))
})

test('a wrong master key fails loudly instead of returning garbage', () => {
  const sealed = new Vault([randomBytes(32)]).seal(secret)
  assert.throws(() => new Vault([randomBytes(32)]).open(sealed), VaultError)
})

test('a tampered ciphertext is refused', () => {
  const vault = new Vault([randomBytes(32)])
  const parts = vault.seal(secret).split('.')
  const body = Buffer.from(parts[4], 'base64url')
  body[0] ^= 1
  parts[4] = body.toString('base64url')
  assert.throws(() => vault.open(parts.join('.')), /altered or the key is wrong/)
})

test('keys rotate: a secret sealed under the old key opens with the old key in the keyring', () => {
  const oldKey = randomBytes(32)
  const newKey = randomBytes(32)
  const sealed = new Vault([oldKey]).seal(secret)
  const rotated = new Vault([newKey, oldKey])
  assert.deepEqual(rotated.open(sealed), secret)
  assert.equal(rotated.needsRotation(sealed), true)
  assert.equal(rotated.needsRotation(rotated.seal(secret)), false)
  assert.throws(() => new Vault([newKey]).open(sealed), /not configured/)
})

test('without PATCHBAY_MASTER_KEY a key file is generated with mode 0600 and reused', () => {
  const dir = tempDir()
  const a = loadVault({ masterKey: null, previousMasterKeys: [], dataDir: dir })
  const file = path.join(dir, 'master.key')
  assert.equal(fs.statSync(file).mode & 0o777, 0o600)
  const b = loadVault({ masterKey: null, previousMasterKeys: [], dataDir: dir })
  assert.deepEqual(b.open(a.seal(secret)), secret)
})

test('a master key of the wrong length is refused with a clear message', () => {
  assert.throws(
    () =>
      loadVault({
        masterKey: Buffer.from('short').toString('base64'),
        previousMasterKeys: [],
        dataDir: tempDir(),
      }),
    /base64 of exactly 32 bytes/,
  )
})
