// The small server-rendered pages (the sign-in callback's answer, the hosted connect page): one
// frame with a strict content security policy (scripts only with the page's nonce).
import type { FastifyReply } from 'fastify'

/** JSON that is safe inside a <script> element. */
export const scriptJson = (v: unknown) =>
  JSON.stringify(v)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029')

export const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

export function html(reply: FastifyReply, status: number, nonce: string, title: string, body: string) {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header(
      'content-security-policy',
      `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'`,
    )
    .send(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)} · Patchbay</title>
<style>body{font:16px system-ui,sans-serif;margin:3rem auto;max-width:34rem;padding:0 1rem;color:#222}code{background:#f3f3f3;padding:0 .2em}</style></head>
<body><main>
${body}
</main></body></html>`)
}
