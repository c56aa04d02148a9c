// The composition root of `gatehouse serve`: builds the authenticators,
// authorizers, health checks, backends and the pipeline from the parsed
// options, then listens. Expensive things are built here once.
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { builtinRegistry } from '../../lib/registry/index.js';
import { startCoreBackend, type RunningCoreBackend } from '../../backends/core/index.js';
import { ensureDevPki } from '../../certs/devpki.js';
import type { ServeOptions } from '../config/flags.js';
import { X509Authenticator } from '../authn/x509.js';
import { UnionAuthenticator } from '../authn/union.js';
import type { Authenticator } from '../authn/types.js';
import { alwaysAllow, alwaysDeny, privilegedGroups } from '../authz/always.js';
import { AuthorizerChain } from '../authz/chain.js';
import type { Authorizer } from '../authz/types.js';
import { log as logCheck, ping, PostStartHook, ShutdownCheck, withStartupGrace, type HealthCheck } from '../health/checks.js';
import { HealthEndpoint } from '../health/endpoint.js';
import { buildHandlerChain } from '../pipeline/chain.js';
import { DROP_AUDIT } from '../pipeline/audit.js';
import { InflightLimiter } from '../pipeline/inflight.js';
import type { RequestContext } from '../pipeline/context.js';
import { pathNotFound } from '../../lib/api/status.js';
import { serveLocal } from '../local/router.js';
import { registryDiscovery } from '../local/discovery.js';
import { installShutdown } from './shutdown.js';
import { buildOpenApiV3 } from '../../lib/openapi/v3.js';

export interface RunningServer {
  readonly server: Server;
  readonly url: string;
  readonly kubeconfig?: string;
  readonly core: RunningCoreBackend;
  shutdown(signal: string): Promise<void>;
}

export interface AppHooks {
  log(msg: string): void;
  clock?: () => number;
  /** Test knobs. */
  bookmarkIntervalMs?: number;
  tooLargeWaitMs?: number;
}

function authorizerFor(mode: string): Authorizer {
  switch (mode) {
    case 'AlwaysAllow': return alwaysAllow;
    case 'AlwaysDeny': return alwaysDeny;
    default: throw new Error(`invalid value "${mode}" for --authorization-mode: mode not implemented yet`);
  }
}

async function readAll(files: readonly string[]): Promise<string[]> {
  return Promise.all(files.map((f) => readFile(f, 'utf8')));
}

export async function startServer(opts: ServeOptions, hooks: AppHooks): Promise<RunningServer> {
  const clock = hooks.clock ?? Date.now;
  const startedAt = clock();
  const connectHost = opts.bindAddress === '0.0.0.0' || opts.bindAddress === '::' ? '127.0.0.1' : opts.bindAddress;

  let certFile = opts.tlsCertFile;
  let keyFile = opts.tlsPrivateKeyFile;
  let clientCaFiles = opts.clientCaFiles;
  let kubeconfig: string | undefined;
  if (!certFile || !keyFile) {
    const pki = await ensureDevPki(opts.dataDir, { host: connectHost, port: opts.securePort });
    certFile = pki.servingCert;
    keyFile = pki.servingKey;
    if (clientCaFiles.length === 0) clientCaFiles = [pki.caCert];
    kubeconfig = pki.kubeconfig;
  }
  const [cert, key] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
  const clientCas = await readAll(clientCaFiles);

  const registry = builtinRegistry();
  const core = await startCoreBackend({
    storageBackend: opts.storageBackend,
    ...(opts.storageBackend === 'redis' ? { redisUrl: opts.redisUrl, storagePrefix: opts.storagePrefix } : {}),
    dataDir: opts.dataDir,
    historyWindowMs: opts.watchHistoryMs,
    registry,
    bodyLimit: opts.maxRequestBodyBytes,
    log: hooks.log,
    clock,
    ...(hooks.bookmarkIntervalMs !== undefined ? { bookmarkIntervalMs: hooks.bookmarkIntervalMs } : {}),
    ...(hooks.tooLargeWaitMs !== undefined ? { tooLargeWaitMs: hooks.tooLargeWaitMs } : {}),
  });

  const authenticators: Authenticator[] = [];
  if (clientCas.length > 0) authenticators.push(new X509Authenticator());
  const authenticator = new UnionAuthenticator(authenticators, { anonymous: opts.anonymousAuth, log: hooks.log });
  const authorizer = new AuthorizerChain([privilegedGroups(['system:masters']), ...opts.authorizationModes.map(authorizerFor)]);

  const postStart = core.hooks.map((h) => new PostStartHook(h.name, h.run));
  const storeCheck: HealthCheck = { name: 'etcd', check: () => core.checkStore() };
  const shutdownCheck = new ShutdownCheck();
  const logChk = logCheck(clock);
  const liveChecks: HealthCheck[] = [ping(), logChk, storeCheck, ...postStart.map((h) => withStartupGrace(h, opts.livezGracePeriodMs, startedAt, clock))];
  const readyChecks: HealthCheck[] = [ping(), logChk, storeCheck, ...postStart, shutdownCheck];
  const health = {
    healthz: new HealthEndpoint('healthz', [ping(), logChk, storeCheck, ...postStart], hooks.log),
    livez: new HealthEndpoint('livez', liveChecks, hooks.log),
    readyz: new HealthEndpoint('readyz', readyChecks, hooks.log),
  };
  const discovery = registryDiscovery(registry, `${connectHost}:${opts.securePort}`);
  const version = (JSON.parse(discovery.version.body) as { gitVersion: string }).gitVersion;
  const routes = { health, discovery, openapi: buildOpenApiV3(registry, version) };

  const dispatch = async (ctx: RequestContext): Promise<void> => {
    const { info } = ctx;
    if (!info.isResourceRequest) return serveLocal(routes, ctx.req, ctx.res, info.path, ctx.query);
    if (!core.backend.serves(info.apiGroup, info.apiVersion)) throw pathNotFound();
    return core.backend.serve({ req: ctx.req, res: ctx.res, query: ctx.query, info, user: ctx.user });
  };

  const handler = buildHandlerChain({
    authenticator, authorizer, admission: [], inflight: new InflightLimiter(400, 200),
    requestTimeoutMs: 60_000, audit: DROP_AUDIT, dispatch, log: hooks.log, clock,
  });

  const server = createServer({
    cert, key,
    ...(clientCas.length > 0 ? { ca: clientCas } : {}),
    requestCert: clientCas.length > 0,
    rejectUnauthorized: false,
    keepAliveTimeout: 65_000,
    minVersion: 'TLSv1.2',
  }, handler);
  server.headersTimeout = 60_000;
  server.requestTimeout = 0;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.securePort, opts.bindAddress, () => { server.off('error', reject); resolve(); });
  });
  server.on('tlsClientError', () => undefined);
  server.on('clientError', (_err, socket) => { if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\n\r\n'); else socket.destroy(); });

  for (const h of postStart) {
    h.start().catch((err: unknown) => hooks.log(`post-start hook ${h.name} failed: ${err instanceof Error ? err.message : String(err)}`));
  }

  const port = (server.address() as AddressInfo).port;
  const shutdown = installShutdown({
    server, check: shutdownCheck, delayMs: opts.shutdownDelayMs, log: hooks.log,
    closeLongRunning: () => core.backend.closeWatches(),
    closeBackends: () => core.close(),
  });
  return { server, url: `https://${connectHost.includes(':') ? `[${connectHost}]` : connectHost}:${port}`, core, shutdown, ...(kubeconfig ? { kubeconfig } : {}) };
}
