# syntax=docker/dockerfile:1
#
# Laneway in a container (docs/deploy.md, "Docker"). The image holds Laneway only: the app is
# mounted read-only at /app, and its data (the SQLite database, uploaded images, the .eml outbox)
# lives in the volume at /data.
#
#   docker build -t laneway .
#   docker run -p 3000:3000 -v "$PWD/my-app:/app:ro" -v laneway-data:/data \
#     --env-file laneway.env laneway
#
# better-sqlite3 is a native module: every stage uses the same Node.js major version on the same
# Debian release (bookworm), so the binary the deps stage downloads or compiles (and sharp's
# prebuilt libvips) runs unchanged in the final stage.

ARG NODE_VERSION=20

# ---- build: Laneway's TypeScript compiled to dist/, the command bundled into dist/bundle/ ----
FROM node:${NODE_VERSION}-bookworm AS build
WORKDIR /opt/laneway
# Every dependency, TypeScript included. Compiling needs no native module, so no install script
# runs (--ignore-scripts also skips Laneway's own `prepare`: the sources are not copied yet).
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY bin ./bin
COPY starters ./starters
COPY src ./src
RUN npm run build

# ---- deps: the production dependencies only, with the native module built for this platform ----
FROM node:${NODE_VERSION}-bookworm AS deps
WORKDIR /opt/laneway
# `npm rebuild` runs the install script of the one dependency that needs it: better-sqlite3
# fetches the prebuilt binary for this Node.js version and platform, or compiles it (this full
# image has python3, make and g++). sharp's prebuilt libvips comes as an ordinary package. For a
# build without access to nodejs.org, add
#   ENV npm_config_nodedir=/usr/local
# before it: node-gyp then takes the headers of the Node.js in this image instead of downloading
# them.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts \
 && npm rebuild better-sqlite3

# ---- final: Node.js, Laneway and its production dependencies; no compiler, no sources ----
FROM node:${NODE_VERSION}-bookworm-slim
ENV NODE_ENV=production \
    LANEWAY_DATA=/data
WORKDIR /opt/laneway
COPY --from=build /opt/laneway/package.json ./package.json
COPY --from=build /opt/laneway/bin ./bin
COPY --from=build /opt/laneway/dist ./dist
COPY --from=build /opt/laneway/starters ./starters
COPY --from=deps /opt/laneway/node_modules ./node_modules

# `laneway` on the PATH; /app for the app (mount it read-only); /data owned by the user that runs.
RUN ln -s /opt/laneway/bin/laneway /usr/local/bin/laneway \
 && mkdir -p /app /data \
 && chown node:node /data

# The image's unprivileged user (uid 1000), never root.
USER node
VOLUME ["/data"]
EXPOSE 3000

# Liveness from inside the container (the slim image has no curl): GET /__/health must answer 200.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "require('node:http').get({host: '127.0.0.1', port: 3000, path: '/__/health', timeout: 4000}, (r) => process.exit(r.statusCode === 200 ? 0 : 1)).on('timeout', () => process.exit(1)).on('error', () => process.exit(1))"]

# Laneway stops on SIGTERM (docker stop): it stops accepting connections and lets the requests in
# flight finish (up to 10 s) before it exits.
CMD ["laneway", "serve", "/app", "--host", "0.0.0.0", "--port", "3000"]
