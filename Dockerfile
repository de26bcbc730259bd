# The production image: compiled JavaScript and a prebuilt workflow bundle; one image, two roles
# (MAILER_ROLE=api or worker), configured entirely by environment (see README, "Configuration").
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json buf.yaml buf.gen.yaml ./
COPY proto ./proto
COPY src ./src
COPY workflows ./workflows
COPY cli ./cli
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    MAILER_DATA_DIR=/data \
    MAILER_WORKFLOW_BUNDLE=/app/dist/workflow-bundle.js
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The console's static files are served as they are (src/console/console-plugin.ts finds them here).
COPY --from=build /app/src/console/static ./src/console/static
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080 8081 2526
HEALTHCHECK --interval=10s --timeout=3s --retries=6 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(process.env.MAILER_ROLE==='worker'?0:1))"
CMD ["node", "dist/src/start.js"]
