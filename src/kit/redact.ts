// Removes known secret values from any text that might leave the process (errors, logs, excerpts,
// run records), in every spelling an upstream might echo them back in: raw, URL-encoded (both
// %20 and + forms), JSON-escaped, base64 (standard and URL-safe, alone or inside a longer value
// such as `Basic base64(user:password)`).
const REDACTED = '[redacted]'
const MIN_SECRET = 4

/** A base64 or base64url run long enough to hide a secret. */
const BASE64_RUN = /[A-Za-z0-9+/_-]{6,}={0,2}/g

export function redactSecrets(text: string, secrets: Iterable<string | undefined>): string {
  const list = [...new Set([...secrets].filter((s): s is string => !!s && s.length >= MIN_SECRET))]
  if (list.length === 0 || !text) return text
  let out = text
  for (const s of list)
    for (const form of spellings(s)) if (out.includes(form)) out = out.split(form).join(REDACTED)
  // Base64 at any offset: decode every run that could be base64 and drop the ones hiding a secret.
  return out.replace(BASE64_RUN, (run) => {
    const decoded = decodeBase64(run)
    return decoded && list.some((s) => decoded.includes(s)) ? REDACTED : run
  })
}

/** The spellings of one secret, longest first so a longer form is replaced before its part. */
function spellings(s: string): string[] {
  const json = JSON.stringify(s).slice(1, -1)
  const forms = new Set([
    s,
    encodeURIComponent(s),
    new URLSearchParams({ v: s }).toString().slice(2),
    json,
    json.replace(/\//g, '\\/'),
    json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    Buffer.from(s).toString('base64'),
    Buffer.from(s).toString('base64').replace(/=+$/, ''),
    Buffer.from(s).toString('base64url'),
  ])
  return [...forms].filter((f) => f.length >= MIN_SECRET).sort((a, b) => b.length - a.length)
}

function decodeBase64(run: string): string | null {
  const body = run.replace(/=+$/, '')
  if (body.length < 6) return null
  return Buffer.from(body.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8')
}

/** Every string leaf of a credentials object: the values to scrub. */
export function secretValues(credentials: unknown): string[] {
  const out: string[] = []
  const walk = (v: unknown) => {
    if (typeof v === 'string') out.push(v)
    else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x)
  }
  walk(credentials)
  return out
}
