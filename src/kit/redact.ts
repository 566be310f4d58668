// Removes known secret values from any text that might leave the process (errors, logs, excerpts).
export function redactSecrets(text: string, secrets: Iterable<string | undefined>): string {
  let out = text
  for (const s of secrets) {
    if (!s || s.length < 4) continue
    out = out.split(s).join('[redacted]')
    const encoded = encodeURIComponent(s)
    if (encoded !== s) out = out.split(encoded).join('[redacted]')
  }
  return out
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
