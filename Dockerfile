# The production image: one image, two roles (MAILER_ROLE=api or worker), configured entirely by environment
# (README, "Configuration"). It also carries the operator CLI: `docker compose exec api mailer accounts list`,
# or `docker run --rm IMAGE mailer --help`.
#
# Three stages: `deps` installs the production dependencies only, `build` compiles TypeScript (with the dev
# dependencies) and prebuilds the workflow bundle, and the runtime stage takes the compiled JavaScript laid
# out as the repository is (src/, workflows/, cli/, bin/), so that package.json, bin/run.js and every
# relative path in the code work unchanged. test/packaging/dockerfile.test.ts checks this file against the
# repository, and test/packaging/image-layout.test.ts runs its build steps outside Docker.
ARG NODE_IMAGE=node:20.20.2-bookworm-slim

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY workflows ./workflows
COPY cli ./cli
# dist/src, dist/workflows, dist/cli (tsc) and dist/workflow-bundle.js (what workers load instead of bundling
# workflows/ with webpack at every start).
RUN npm run build

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    MAILER_DATA_DIR=/data \
    MAILER_WORKFLOW_BUNDLE=/app/workflow-bundle.js
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
# The CLI: bin/run.js finds its commands where package.json's "oclif" section says (./cli/commands), here
# compiled; tsx, a production dependency, is what it registers.
COPY bin ./bin
COPY docker/healthcheck.js ./docker/healthcheck.js
COPY --from=build /app/dist/src ./src
COPY --from=build /app/dist/workflows ./workflows
COPY --from=build /app/dist/cli ./cli
COPY --from=build /app/dist/workflow-bundle.js ./workflow-bundle.js
# The console's static files are served as they are (src/console/console-plugin.ts finds them beside it).
COPY src/console/static ./src/console/static
# Direct delivery's built-in egress shaping rules (src/delivery/egress/rules-file.ts finds them at ../../../config).
COPY config ./config
RUN ln -s /app/bin/run.js /usr/local/bin/mailer \
 && mkdir -p /data && chown node:node /data
# The image's own unprivileged user (uid 1000); every port it listens on is above 1024.
USER node
# REST, gRPC/Connect, worker probes, inbound reports (SMTP), SMTP submission.
EXPOSE 8080 8081 8082 2526 2587
# /readyz of whichever role this container runs (docker/healthcheck.js picks the port).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=6 \
  CMD ["node", "/app/docker/healthcheck.js"]
CMD ["node", "src/start.js"]
