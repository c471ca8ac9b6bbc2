# One image for every linkroute service; the command picks the service:
#   npm run start:api | start:redirector | start:ingester | clickhouse:embedded
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# tsx (the TypeScript loader the services run under) is a dev dependency, so install all.
RUN npm ci --no-audit --no-fund || npm install --no-audit --no-fund
COPY tsconfig.json ./
COPY services ./services
COPY shared ./shared
COPY clickhouse ./clickhouse
ENV HOST=0.0.0.0
USER node
CMD ["npm", "run", "start:api"]
