# Patchbay's container image: Node 24 runs the TypeScript sources directly (type stripping), as
# `npm start` does; the dashboard is built in a first stage, production dependencies in a second.
#   docker build -t patchbay .
#   docker run -p 8080:8080 -v patchbay-data:/data patchbay
# Runs as the unprivileged `node` user; the store (SQLite) and master.key live in /data unless
# PATCHBAY_DATABASE_URL and PATCHBAY_MASTER_KEY are set.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/service/package.json ./packages/service/
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY . .
RUN npm run build:web

FROM node:24-bookworm-slim AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
# The service's own dependencies are a workspace's (packages/service): the root's are the installable
# SDK's and command's only.
COPY packages/service/package.json ./packages/service/
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts

FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    PATCHBAY_DATA_DIR=/data \
    LOG_FORMAT=json
WORKDIR /app
COPY --from=dependencies /app/node_modules ./node_modules
COPY package.json ./
COPY packages/service/package.json ./packages/service/
COPY src ./src
# The sandbox upstreams: started in-process for any upstream whose address is not configured.
COPY sandbox ./sandbox
COPY --from=build /app/web/dist ./web/dist
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# Ready means: the store answers, its migrations are applied, and Redis answers when configured.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM from `docker stop` reaches Node directly (no shell in between). The young generation and
# the heap are bounded as `npm start` bounds them (README: Operating, Memory).
CMD ["node", "--max-semi-space-size=16", "--max-old-space-size=1024", "src/main.ts"]
