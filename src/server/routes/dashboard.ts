// The dashboard's static files: web/dist, built by `vite build` (npm's prestart and pretest run it).
// Served by a small route of our own: `/` is the page, `/assets/*` the hashed scripts and styles.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { PatchbayError } from '../../kit/errors.ts'
import { publicRoute } from '../authenticate.ts'

const defaultDistDir = fileURLToPath(new URL('../../../web/dist/', import.meta.url))

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
}

// The page loads only its own scripts and styles and talks only to this origin.
const pagePolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

export const dashboardRoutes =
  (distDir: string = defaultDistDir) =>
  async (app: FastifyInstance) => {
    const root = path.resolve(distDir)

    const send = async (reply: FastifyReply, rel: string, immutable: boolean) => {
      const file = path.resolve(root, rel)
      // Nothing outside the build directory, whatever the path says.
      if (file !== root && !file.startsWith(root + path.sep)) return notFound(reply)
      const type = contentTypes[path.extname(file).toLowerCase()]
      if (!type) return notFound(reply)
      let body: Buffer
      try {
        body = await readFile(file)
      } catch {
        return notFound(reply)
      }
      reply
        .type(type)
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      return reply.send(body)
    }

    app.get('/', { config: publicRoute, schema: { hide: true } }, async (_req, reply) => {
      try {
        const html = await readFile(path.join(root, 'index.html'))
        return reply
          .type(contentTypes['.html'])
          .header('cache-control', 'no-cache')
          .header('content-security-policy', pagePolicy)
          .header('x-content-type-options', 'nosniff')
          .header('referrer-policy', 'no-referrer')
          .send(html)
      } catch {
        return reply
          .code(503)
          .type('text/plain; charset=utf-8')
          .send('The dashboard is not built. Run `npm run build:web` (npm start and npm test do it first).\n')
      }
    })
    app.get<{ Params: { '*': string } }>(
      '/assets/*',
      { config: publicRoute, schema: { hide: true } },
      async (req, reply) => send(reply, path.join('assets', req.params['*']), true),
    )
    app.get('/favicon.svg', { config: publicRoute, schema: { hide: true } }, async (_req, reply) =>
      send(reply, 'favicon.svg', false),
    )
  }

function notFound(reply: FastifyReply) {
  return reply
    .code(404)
    .type('application/json; charset=utf-8')
    .send(new PatchbayError('ROUTE_NOT_FOUND', 'There is no such dashboard file.').toBody())
}
