// People's passwords: hashed with argon2id, the memory-hard function RFC 9106 and OWASP recommend,
// from Node's own crypto (crypto.argon2, Node 24.7 and later; this repository runs Node 24 from its
// `node` devDependency and the container's node:24 image). No package: the argon2 packages need an
// install script (a native build) or bring a WebAssembly build, and scrypt, the other built-in
// choice, is memory-hard too but argon2id resists GPU and side-channel attacks better at the same
// cost.
//
// Parameters: 19 MiB of memory, 2 passes, 1 lane (OWASP's first argon2id configuration, which it
// deems equivalent to its others): about 20–40 ms of one core per hash here, so a sign-in costs
// little and a guess costs an attacker as much. They are stored with each hash in the PHC string
// format ($argon2id$v=19$m=19456,t=2,p=1$salt$hash), so stronger parameters can come later and
// every stored hash still verifies (and is hashed again with the new ones at the next sign-in:
// needsRehash).
import { argon2, randomBytes, timingSafeEqual } from 'node:crypto'

const PARAMS = { memory: 19_456, passes: 2, parallelism: 1 } as const
const TAG_LENGTH = 32
const SALT_LENGTH = 16

/** The password rules, told in one sentence (the sign-up error's hint). */
export const PASSWORD_RULES = 'A password has 10 to 200 characters and is not the email address.'

/** What is wrong with a new password, or null when it may be used. */
export function passwordProblem(password: string, email: string): string | null {
  const length = [...password].length
  if (length < 10) return `The password has ${length} characters; it needs at least 10.`
  if (length > 200) return `The password has ${length} characters; at most 200 are accepted.`
  if (password.trim().toLowerCase() === email.trim().toLowerCase())
    return 'The password is the email address.'
  if (new Set(password).size < 3) return 'The password repeats one or two characters only.'
  return null
}

function derive(
  password: string,
  salt: Buffer,
  p: { memory: number; passes: number; parallelism: number },
  tagLength: number,
) {
  return new Promise<Buffer>((resolve, reject) =>
    argon2(
      'argon2id',
      { message: Buffer.from(password, 'utf8'), nonce: salt, tagLength, ...p },
      (err, key) => (err ? reject(err) : resolve(key)),
    ),
  )
}

const b64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '')

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_LENGTH)
  const tag = await derive(password, salt, PARAMS, TAG_LENGTH)
  return `$argon2id$v=19$m=${PARAMS.memory},t=${PARAMS.passes},p=${PARAMS.parallelism}$${b64(salt)}$${b64(tag)}`
}

interface Parsed {
  memory: number
  passes: number
  parallelism: number
  salt: Buffer
  tag: Buffer
}

function parse(stored: string): Parsed | null {
  const m = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/.exec(stored)
  if (!m) return null
  return {
    memory: Number(m[1]),
    passes: Number(m[2]),
    parallelism: Number(m[3]),
    salt: Buffer.from(m[4], 'base64'),
    tag: Buffer.from(m[5], 'base64'),
  }
}

/** Whether the password matches the stored hash; compared in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const p = parse(stored)
  if (!p) return false
  const tag = await derive(password, p.salt, p, p.tag.length)
  return tag.length === p.tag.length && timingSafeEqual(tag, p.tag)
}

/** A hash made with weaker parameters than today's: hash the password again when it is next given. */
export function needsRehash(stored: string): boolean {
  const p = parse(stored)
  return (
    !p ||
    p.memory < PARAMS.memory ||
    p.passes < PARAMS.passes ||
    p.tag.length < TAG_LENGTH ||
    p.salt.length < SALT_LENGTH
  )
}

let decoy: Promise<string> | null = null

/**
 * Spends the time a verification takes, for a sign-in of an unknown account: its answer then
 * comes as late as a wrong password's, so timing does not tell which addresses have accounts.
 */
export async function verifyAgainstDecoy(password: string): Promise<false> {
  decoy ??= hashPassword(randomBytes(16).toString('hex'))
  await verifyPassword(password, await decoy)
  return false
}
