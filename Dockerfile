# One image for every linkroute service; the command picks the service:
#   node dist/services/<api|redirector|ingester|webhooks|clickhouse-embedded|all-in-one|cli>/main.js
# Compiled JavaScript only: no TypeScript loader, no dev dependencies in the image.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
# patches/: fixes to dependencies, applied by npm ci's postinstall (patch-package).
COPY patches ./patches
COPY services ./services
COPY shared ./shared
COPY clickhouse ./clickhouse
# npm ci runs `prepare`, the build into dist/ (it needs the dev dependencies: typescript).
RUN npm ci --no-audit --no-fund && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
# node is PID 1, no npm or shell in between: `docker stop`'s SIGTERM reaches the service's handler once.
CMD ["node", "dist/services/api/main.js"]
