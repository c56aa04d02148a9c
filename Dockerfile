# Gatehouse's image: compiled once, shipped without the compiler.
#   build   installs every dependency and compiles the TypeScript to dist/
#   runtime the production dependencies, dist/ and the launcher only (no
#           TypeScript, no tsx: bin/gatehouse.js runs dist/ when no sources are
#           beside it), as the unprivileged `node` user.
# docker compose up builds it (docker-compose.yml); by hand:
#   docker build -t gatehouse . && docker run -p 6443:6443 gatehouse serve --bind-address 0.0.0.0
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY lib ./lib
COPY gateway ./gateway
COPY backends ./backends
COPY certs ./certs
COPY policies ./policies
RUN npm run build

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/dist ./dist
COPY bin ./bin
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 6443
ENTRYPOINT ["node", "bin/gatehouse.js"]
CMD ["serve", "--bind-address", "0.0.0.0", "--data-dir", "/data"]
