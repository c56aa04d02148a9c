// The composition root of `gatehouse serve`: builds the authenticators,
// authorizers, health checks, backends and the pipeline from the parsed
// options, then listens. Expensive things are built here once.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { builtinRegistry } from '../../lib/registry/index.js';
import { startCoreBackend } from '../../backends/core/index.js';
import { ensureDevPki } from '../../certs/devpki.js';
import type { ServeOptions } from '../config/flags.js';
import { X509Authenticator } from '../authn/x509.js';
import { buildTokenMethods, loadTokenMethods } from './tokenmethods.js';
import { controllerEnabled } from '../config/flags.js';
import { serverUrl } from '../../certs/kubeconfig.js';
import { devPkiPaths } from '../../certs/devpki.js';
import { UnionAuthenticator } from '../authn/union.js';
import { BearerAuthenticator, TokenUnion, type TokenAuthenticator } from '../authn/token.js';
import { buildWebhookAuthenticator } from '../authn/webhook.js';
import { startOidc } from '../authn/jwt/start.js';
import { metricsText } from '../metrics/registry.js';
import { identityHeaderNames, RequestHeaderAuthenticator, type RequestHeaderConfig } from '../authn/requestheader.js';
import { serveTokenReview } from '../reviews/tokenreview.js';
import { serveSelfSubjectReview } from '../reviews/selfsubjectreview.js';
import type { Authenticator } from '../authn/types.js';
import { privilegedGroups } from '../authz/always.js';
import { AuthorizerChain } from '../authz/chain.js';
import { startRbac } from '../authz/rbac/index.js';
import { rbacEscalation } from '../admission/rbacescalation.js';
import { nodeRestriction } from '../admission/noderestriction.js';
import { applyCreateAuthorization } from '../admission/applycreate.js';
import { buildAuthorizers } from '../authz/build.js';
import { accessReviewHandlers } from '../reviews/accessreviews.js';
import { privilegedRules, ruleResolverFor } from '../reviews/accessrules.js';
import { log as logCheck, ping, PostStartHook, ShutdownCheck, withStartupGrace, type HealthCheck } from '../health/checks.js';
import { HealthEndpoint } from '../health/endpoint.js';
import { buildHandlerChain } from '../pipeline/chain.js';
import { DROP_AUDIT } from '../pipeline/audit.js';
import { InflightLimiter } from '../pipeline/inflight.js';
import type { RequestContext } from '../pipeline/context.js';
import { pathNotFound } from '../../lib/api/status.js';
import { serveLocal } from '../local/router.js';
import { registryDiscovery } from '../local/discovery.js';
import { localGroupVersions, registerUpgrade, startAggregation, withAvailableCondition } from '../aggregation/index.js';
import { loadProxyClientCert } from '../aggregation/clientcert.js';
import { remoteFor, serveRemote } from '../aggregation/dispatch.js';
import { installShutdown } from './shutdown.js';
import { startRemoteCore, type GatewayCore } from '../aggregation/remotecore.js';
import { buildOpenApiV3 } from '../../lib/openapi/v3.js';
import { listenServing } from '../../lib/http/listen.js';

export interface RunningServer {
  readonly server: Server;
  readonly url: string;
  readonly kubeconfig?: string;
  /** In-process, or a remote core backend (--core-backend-url). */
  readonly core: GatewayCore;
  shutdown(signal: string): Promise<void>;
}

export interface AppHooks {
  log(msg: string): void;
  clock?: () => number;
  /** Test knobs. */
  bookmarkIntervalMs?: number;
  tooLargeWaitMs?: number;
  tokenWebhookTimeoutMs?: number;
}

function requestheaderConfig(opts: ServeOptions): RequestHeaderConfig {
  return {
    usernameHeaders: opts.requestheaderUsernameHeaders, uidHeaders: opts.requestheaderUidHeaders, groupHeaders: opts.requestheaderGroupHeaders,
    extraHeaderPrefixes: opts.requestheaderExtraHeadersPrefix, allowedNames: opts.requestheaderAllowedNames,
  };
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
  // Read in order, so a start with both files wrong always names the certificate first.
  const cert = await readFile(certFile, 'utf8');
  const key = await readFile(keyFile, 'utf8');
  // Checked here so a bad file is named, rather than an OpenSSL code surfacing from createServer.
  try { new X509Certificate(cert); } catch { throw new Error(`--tls-cert-file "${certFile}": no PEM certificate found`); }
  try { createPrivateKey(key); } catch { throw new Error(`--tls-private-key-file "${keyFile}": no PEM private key found`); }
  const clientCas = await readAll(clientCaFiles);
  const requestheaderCas = opts.requestheaderClientCaFile ? await readAll([opts.requestheaderClientCaFile]) : [];

  const registry = builtinRegistry();
  const tokenMethods = await loadTokenMethods(opts, hooks.log);
  const { serviceAccounts } = tokenMethods;
  // Presented to the remote core backend and to aggregated backends alike: loaded once.
  const proxyClientCert = await loadProxyClientCert(opts, hooks.log);
  // The cluster CA for cluster-info and legacy token secrets: the dev CA, else the first client CA bundle, else the serving chain.
  const clusterCaPem = kubeconfig ? await readFile(devPkiPaths(opts.dataDir).caCert, 'utf8') : clientCas[0] ?? cert;
  // --core-backend-url: the built-in groups live in a remote `gatehouse core-backend` (gateway/aggregation/remotecore.ts).
  const core: GatewayCore = opts.coreBackendUrl ? startRemoteCore({
    url: opts.coreBackendUrl, caPem: await readFile(opts.coreBackendCaFile!, 'utf8'), clientCert: proxyClientCert,
    registry, identityHeaders: identityHeaderNames(requestheaderCas.length > 0 ? requestheaderConfig(opts) : undefined), log: hooks.log,
  }) : await startCoreBackend({
    tokens: serviceAccounts.issuing,
    controllers: {
      ...(controllerEnabled(opts, 'serviceaccount-token') ? { serviceAccountToken: { caPem: clusterCaPem } } : {}),
      tokenCleaner: controllerEnabled(opts, 'tokencleaner'),
      ...(controllerEnabled(opts, 'bootstrapsigner') ? { bootstrapSigner: { server: serverUrl(connectHost, opts.securePort), caPem: clusterCaPem } } : {}),
    },
    storageBackend: opts.storageBackend,
    ...(opts.storageBackend === 'redis' ? { redisUrl: opts.redisUrl, storagePrefix: opts.storagePrefix } : {}),
    dataDir: opts.dataDir,
    historyWindowMs: opts.watchHistoryMs,
    registry,
    allowUnsafeMalformedObjectDeletion: opts.featureGates.AllowUnsafeMalformedObjectDeletion,
    autoregister: localGroupVersions(registry),
    bodyLimit: opts.maxRequestBodyBytes,
    log: hooks.log,
    clock,
    ...(hooks.bookmarkIntervalMs !== undefined ? { bookmarkIntervalMs: hooks.bookmarkIntervalMs } : {}),
    ...(hooks.tooLargeWaitMs !== undefined ? { tooLargeWaitMs: hooks.tooLargeWaitMs } : {}),
  });

  // Audiences tokens must be valid for when presented to this server (--api-audiences).
  const apiAudiences: readonly string[] = serviceAccounts.apiAudiences;
  // Every bearer-token method; TokenReview runs the same ones. Each method appends itself here.
  const tokenAuthenticators: TokenAuthenticator[] = [];
  tokenAuthenticators.push(...buildTokenMethods({ opts, loaded: tokenMethods, objects: core.objects, clock }));
  const closeAuthn: Array<() => void> = [];
  // OIDC: --oidc-* flags or --authentication-config (reloaded on change).
  const oidc = await startOidc(opts, { log: hooks.log, clock, apiAudiences, serviceAccountIssuers: opts.serviceAccountIssuers });
  if (oidc) {
    tokenAuthenticators.push(oidc.authenticator);
    closeAuthn.push(oidc.close);
  }
  // The webhook comes last, as in kube-apiserver: a token another method knows is never sent out.
  if (opts.authenticationTokenWebhookConfigFile) {
    const webhook = await buildWebhookAuthenticator({
      configFile: opts.authenticationTokenWebhookConfigFile, cacheTtlMs: opts.authenticationTokenWebhookCacheTtlMs,
      version: opts.authenticationTokenWebhookVersion, apiAudiences, log: hooks.log, clock,
      ...(hooks.tokenWebhookTimeoutMs !== undefined ? { timeoutMs: hooks.tokenWebhookTimeoutMs } : {}),
    });
    tokenAuthenticators.push(webhook.authenticator);
    closeAuthn.push(webhook.close);
  }
  const tokens = new TokenUnion(tokenAuthenticators);
  const requestheader: RequestHeaderConfig | undefined = requestheaderCas.length > 0 ? requestheaderConfig(opts) : undefined;

  const authenticators: Authenticator[] = [];
  if (requestheader) authenticators.push(new RequestHeaderAuthenticator(requestheaderCas, requestheader, clock));
  if (clientCas.length > 0) authenticators.push(new X509Authenticator({ caPems: clientCas, clock }));
  authenticators.push(new BearerAuthenticator(tokens, apiAudiences));
  const authenticator = new UnionAuthenticator(authenticators, { anonymous: opts.anonymousAuth, log: hooks.log });
  // The RBAC policy is kept whatever the modes: the escalation checks resolve rules from it.
  const rbac = await startRbac(core.objects, hooks.log);
  // --authorization-mode or --authorization-config (reloaded on change), built in gateway/authz/build.ts; RBAC's authorizer is shared.
  const authz = await buildAuthorizers(opts, { objects: core.objects, log: hooks.log, clock, rbac: () => rbac.authorizer });
  const authorizer = new AuthorizerChain([privilegedGroups(['system:masters']), authz.authorizer]);
  const ruleResolvers = () => [privilegedRules(['system:masters']), ...authz.current().map((c) => ruleResolverFor(c.type, c.authorizer))];
  const admission = [rbacEscalation({ registry, authorizer, rbac: rbac.authorizer, policy: rbac.policy, objects: core.objects, bodyLimit: opts.maxRequestBodyBytes, privilegedGroups: ['system:masters'] })];
  admission.push(applyCreateAuthorization({ authorizer, objects: core.objects, registry }));
  if (opts.enableAdmissionPlugins.includes('NodeRestriction')) admission.push(nodeRestriction({ registry, objects: core.objects, bodyLimit: opts.maxRequestBodyBytes }));

  const postStart = core.hooks.map((h) => new PostStartHook(h.name, h.run));
  const storeCheck: HealthCheck = { name: 'etcd', check: () => core.checkStore() };
  const shutdownCheck = new ShutdownCheck();
  const logChk = logCheck(clock);
  // Post-start hooks and autoregister-completion are boot-sequence checks: in /healthz and /readyz as they are, in /livez after the grace period.
  const bootChecks = (): HealthCheck[] => [...postStart, aggregation.completion];
  // Aggregation: APIService routing, availability and merged discovery (gateway/aggregation).
  const autoregisterHook = postStart.find((h) => h.name === 'poststarthook/start-kube-apiserver-autoregistration');
  const aggregation = startAggregation({
    objects: core.objects, registry, localDiscovery: registryDiscovery(registry, `${connectHost}:${opts.securePort}`),
    clientCert: proxyClientCert, identityHeaders: identityHeaderNames(requestheader),
    writeStatus: async (name, cond, now) => { await core.updateStatus('apiregistration.k8s.io', 'apiservices', '', name, (st) => withAvailableCondition(st, cond, now)); },
    autoregisterDone: () => autoregisterHook?.finished ?? opts.coreBackendUrl !== undefined, log: hooks.log, clock,
  });
  const liveChecks: HealthCheck[] = [ping(), logChk, storeCheck, ...bootChecks().map((c) => withStartupGrace(c, opts.livezGracePeriodMs, startedAt, clock))];
  const readyChecks: HealthCheck[] = [ping(), logChk, storeCheck, ...bootChecks(), shutdownCheck];
  const health = {
    healthz: new HealthEndpoint('healthz', [ping(), logChk, storeCheck, ...bootChecks()], hooks.log),
    livez: new HealthEndpoint('livez', liveChecks, hooks.log),
    readyz: new HealthEndpoint('readyz', readyChecks, hooks.log),
  };
  const discovery = aggregation.discovery;
  const version = (JSON.parse(discovery.version.body) as { gitVersion: string }).gitVersion;
  const routes = { health, discovery, openapi: buildOpenApiV3(registry, version), metrics: metricsText };

  // Virtual types the gateway answers itself (registry entries with servedBy: 'gateway').
  const gatewayServed: Record<string, (ctx: RequestContext) => Promise<void>> = {
    'authentication.k8s.io/tokenreviews': (ctx) => serveTokenReview(ctx, { tokens, apiAudiences, bodyLimit: opts.maxRequestBodyBytes, log: hooks.log }),
    'authentication.k8s.io/selfsubjectreviews': (ctx) => serveSelfSubjectReview(ctx, opts.maxRequestBodyBytes),
    ...accessReviewHandlers({ evaluate: (a) => authorizer.evaluate(a), resolvers: ruleResolvers, bodyLimit: opts.maxRequestBodyBytes }),
  };

  const dispatch = async (ctx: RequestContext): Promise<void> => {
    const { info } = ctx;
    const remote = remoteFor(aggregation, info);
    if (remote) return serveRemote(remote, ctx);
    if (!info.isResourceRequest) return serveLocal(routes, ctx.req, ctx.res, info.path, ctx.query);
    if (registry.lookup(info.apiGroup, info.apiVersion, info.resource)?.servedBy === 'gateway') {
      const serve = gatewayServed[`${info.apiGroup}/${info.resource}`];
      if (!serve) throw pathNotFound();
      return serve(ctx);
    }
    if (!core.backend.serves(info.apiGroup, info.apiVersion)) throw pathNotFound();
    return core.backend.serve({ req: ctx.req, res: ctx.res, query: ctx.query, info, user: ctx.user, ...(ctx.body ? { body: ctx.body } : {}) });
  };

  const handler = buildHandlerChain({
    authenticator, identityHeaders: identityHeaderNames(requestheader), authorizer, admission, inflight: new InflightLimiter(400, 200),
    requestTimeoutMs: 60_000, audit: DROP_AUDIT, dispatch, log: hooks.log, clock,
  });

  // Certificates are requested from every CA we trust for clients; each authenticator verifies against its own bundle.
  const tlsClientCas = [...clientCas, ...requestheaderCas];
  const server = createServer({
    cert, key,
    ...(tlsClientCas.length > 0 ? { ca: tlsClientCas } : {}),
    requestCert: tlsClientCas.length > 0,
    rejectUnauthorized: false,
    keepAliveTimeout: 65_000,
    // Go's net/http limit (1 MiB + 4 KiB), as kube-apiserver: a huge bearer token gets a 401, not a 431.
    maxHeaderSize: (1 << 20) + 4096,
    minVersion: 'TLSv1.2',
  }, handler);
  await listenServing(server, opts.securePort, opts.bindAddress);
  // Upgrades run the same pipeline with a response bound to their socket; only dispatch (after authorization)
  // may forward them, and any other answer closes the socket once written.
  server.on('upgrade', (req, socket: Socket, head: Buffer) => {
    const res = new ServerResponse(req);
    res.assignSocket(socket);
    res.shouldKeepAlive = false;
    res.once('finish', () => socket.end());
    socket.on('error', () => socket.destroy());
    registerUpgrade(req, { socket, head });
    handler(req, res);
  });

  for (const h of postStart) {
    h.start().catch((err: unknown) => hooks.log(`post-start hook ${h.name} failed: ${err instanceof Error ? err.message : String(err)}`));
  }

  for (const note of serviceAccounts.notes) hooks.log(note);
  const port = (server.address() as AddressInfo).port;
  const shutdown = installShutdown({
    server, check: shutdownCheck, delayMs: opts.shutdownDelayMs, log: hooks.log,
    closeLongRunning: () => core.backend.closeWatches(),
    closeBackends: () => { for (const c of closeAuthn) c(); authz.close(); rbac.stop(); aggregation.stop(); return core.close(); },
  });
  return { server, url: `https://${connectHost.includes(':') ? `[${connectHost}]` : connectHost}:${port}`, core, shutdown, ...(kubeconfig ? { kubeconfig } : {}) };
}
