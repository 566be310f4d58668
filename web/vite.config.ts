// The dashboard's build: web/ is the root, the static files go to web/dist (served by Patchbay at /).
// `npm run dev:web` serves it with hot reload and sends the API to a running Patchbay.
import { fileURLToPath } from 'node:url'
import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

const root = fileURLToPath(new URL('.', import.meta.url))
const api = process.env.PATCHBAY_URL ?? 'http://127.0.0.1:8080'

export default defineConfig({
  root,
  base: '/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No inline scripts or styles, so the page's content security policy can forbid them.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  server: { proxy: { '/v1': api, '/openapi.json': api } },
})
