// The composition root of `gatehouse serve`: reads the TLS material and
// token files, starts the backends, then builds each part by its named
// builder — authentication, authorization, health, dispatch, serving — and
// listens. Expensive things are built once, in those builders.
import type { Http2SecureServer } from 'node:http2';
import { LiveRegistry, type RegistrySource } from '../../lib/registry/live.js';
import { liveOpenApiV3 } from '../../lib/openapi/live.js';
import type { ServeOptions } from '../config/flags.js';
import { identityHeaderNames } from '../authn/requestheader.js';
import { collectRuntimeMetrics, metricsBody, registry as metricsRegistry } from '../metrics/registry.js';
import { serveTokenReview } from '../reviews/tokenreview.js';
import { serveSelfSubjectReview } from '../reviews/selfsubjectreview.js';
import { accessReviewHandlers } from '../reviews/accessreviews.js';
import { explanationHandlers } from '../reviews/explanations.js';
import { serveSubjectsReview } from '../reviews/subjectsreview.js';
import { PostStartHook } from '../health/checks.js';
import { buildHealth, leaderElectionCheck, startPostStartHooks, type HealthEndpoints } from '../health/build.js';
import { buildHandlerChain } from '../pipeline/chain.js';
import { buildAuditor } from '../audit/index.js';
import { servedRegistry } from '../config/runtimeconfig.js';
import { featureGateWarnings } from '../config/featuregates.js';
import { buildTracing } from '../tracing/index.js';
import { InflightLimiter } from '../pipeline/inflight.js';
import { RequestWaitGroup } from '../pipeline/waitgroup.js';
import { httpLogOption } from '../pipeline/httplog.js';
import { Classifier, ClassifierSync } from '../flowcontrol/classifier.js';
import { Dispatcher } from '../flowcontrol/dispatcher.js';
import { ListedCounts } from '../flowcontrol/width.js';
import { DEBUG_PREFIX, serveDebug } from '../flowcontrol/debug.js';
import type { LocalRoutes } from '../local/router.js';
import type { Aggregation } from '../aggregation/index.js';
import type { GatewayCore } from '../aggregation/remotecore.js';
import { loadTokenMethods } from './tokenmethods.js';
import { buildAuthentication, requestheaderConfig, type GatewayAuthentication } from './authentication.js';
import { buildAuthorization, type GatewayAuthorization } from './authorization.js';
import { startApiServices, startCore, startCoreAdmission } from './backends.js';
import { loadProxyClientCert } from '../aggregation/clientcert.js';
import { buildDispatch, type GatewayServed } from './dispatch.js';
import { loadGatewayTls } from './serving.js';
import { startFrontDoor } from './frontdoor.js';
import { buildForwardAuth, withForwardAuth } from '../forwardauth/index.js';
import { routeTableOf } from '../routes/index.js';

export interface RunningServer {
  readonly server: Http2SecureServer;
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
  /** How often the serving certificate and client CA files are re-read without a change event (kube: 60 s). */
  tlsReloadIntervalMs?: number;
  tooLargeWaitMs?: number;
  tokenWebhookTimeoutMs?: number;
  /** How long finished spans wait to be exported together (the SDK's 5 s). */
  tracingBatchDelayMs?: number;
  /** How long shutdown waits for buffered spans to be sent (tracing's default: 2 s). */
  tracingShutdownMs?: number;
  /** How long one span export may take, retries included (the exporter's 10 s). */
  tracingExportTimeoutMs?: number;
}

/** Virtual types the gateway answers itself, with the same token methods and authorizers as the pipeline. */
function reviews(opts: ServeOptions, hooks: AppHooks, authn: GatewayAuthentication, authz: GatewayAuthorization, core: GatewayCore): GatewayServed {
  const bodyLimit = opts.maxRequestBodyBytes;
  // kube admits the create of every review it answers (an in-process core backend's plugins; a remote one's are its own).
  const admission = core.backend.admission;
  // kube serves CBOR for every resource, reviews included, with the gate on.
  const cbor = opts.featureGates.CBORServingAndStorage;
  return {
    'authentication.k8s.io/tokenreviews': (ctx) =>
      serveTokenReview(ctx, { tokens: authn.tokens, apiAudiences: authn.apiAudiences, bodyLimit, log: hooks.log, admission, cbor }),
    'authentication.k8s.io/selfsubjectreviews': (ctx) => serveSelfSubjectReview(ctx, bodyLimit, admission, cbor),
    ...accessReviewHandlers({ evaluate: (a) => authz.authorizer.evaluate(a), resolvers: () => authz.ruleResolvers(), bodyLimit, admission, cbor }),
    ...explanationHandlers({ explain: (a, o) => authz.explain(a, o), bodyLimit, cbor }),
    'access.gatehouse.dev/subjectsreviews': (ctx) => serveSubjectsReview(ctx, { whoCan: (a) => authz.whoCan(a), bodyLimit, cbor }),
  };
}

/** Health, version, discovery (merged with the APIServices'), OpenAPI, /metrics and the APF dumps (when APF is on). */
function localRoutes(
  registry: RegistrySource,
  health: HealthEndpoints,
  aggregation: Aggregation,
  dispatcher: Dispatcher | undefined,
  cbor: boolean,
): LocalRoutes {
  const discovery = aggregation.discovery;
  const version = (JSON.parse(discovery.version.body) as { gitVersion: string }).gitVersion;
  const debug = dispatcher && ((path: string, query: URLSearchParams) => (path.startsWith(DEBUG_PREFIX) ? serveDebug(dispatcher, path, query) : undefined));
  return { health, discovery, openapi: liveOpenApiV3(registry, version), metrics: metricsBody, ...(debug ? { debug } : {}), cbor };
}

export async function startServer(opts: ServeOptions, hooks: AppHooks): Promise<RunningServer> {
  const clock = hooks.clock ?? Date.now;
  const startedAt = clock();
  const log = hooks.log;
  // Forward auth: nginx, Traefik and Envoy ask the gateway's authentication and authorizers (routes name no upstreams
  // here). A table that cannot work stops the start before the development PKI or the store is written.
  const routes = await routeTableOf(opts, { upstreams: false, upstreamUrl: (u) => u });
  const tls = await loadGatewayTls(opts);
  // A policy that does not parse stops the start before anything listens.
  const auditor = await buildAuditor(opts, log);
  for (const w of featureGateWarnings(opts.featureGates)) log(`Warning: ${w}`);
  // Process-wide, as kube's SetShowHidden: the registry is the process's.
  if (opts.showHiddenMetricsForVersion !== undefined) metricsRegistry.showHidden();
  collectRuntimeMetrics();
  const tracing = await buildTracing(opts, {
    log,
    clock,
    ...(hooks.tracingBatchDelayMs !== undefined ? { batchDelayMs: hooks.tracingBatchDelayMs } : {}),
    ...(hooks.tracingShutdownMs !== undefined ? { shutdownMs: hooks.tracingShutdownMs } : {}),
    ...(hooks.tracingExportTimeoutMs !== undefined ? { exportTimeoutMs: hooks.tracingExportTimeoutMs } : {}),
  });
  // The registry in force (the built-ins as --runtime-config leaves them): the core backend swaps it when CustomResourceDefinitions change.
  const registry = new LiveRegistry(servedRegistry(opts.runtimeConfig));
  const tokenMethods = await loadTokenMethods(opts, log);
  const requestheader = requestheaderConfig(opts, tls);
  // One list of identity headers: stripped after authentication, and again from everything proxied.
  const identityHeaders = identityHeaderNames(requestheader);
  // Presented to the remote core backend and to aggregated backends alike: loaded once.
  const proxyClientCert = await loadProxyClientCert(opts, log);
  // LIST widths for priority and fairness: object counts learned from the core backend's cluster-wide lists.
  const listed = new ListedCounts();
  const onListed = (group: string, resource: string, total: number) => listed.observe(group, resource, total);
  const inputs = { registry, tokens: tokenMethods.serviceAccounts.issuing, clusterCaPem: tls.clusterCaPem, identityHeaders, proxyClientCert, clock, onListed };
  const core = await startCore(opts, hooks, inputs);

  const authn = await buildAuthentication(opts, hooks, { tls, requestheader, tokenMethods, objects: core.objects, clock });
  const authz = await buildAuthorization(opts, hooks, core, clock);
  startCoreAdmission(opts, core, authz);
  const postStart = core.hooks.map((h) => new PostStartHook(h.name, h.run));
  const aggregation = await startApiServices(opts, hooks, core, postStart, inputs);
  // Post-start hooks and autoregister-completion are boot-sequence checks.
  const health = buildHealth({
    checkStore: () => core.checkStore(),
    boot: [...postStart, aggregation.completion],
    live: leaderElectionCheck(core),
    livezGraceMs: opts.livezGracePeriodMs,
    startedAt,
    clock,
    log,
  });
  // Priority and fairness: the objects are followed from the store; kube's mandatory ones serve until the first list.
  const apf = opts.enablePriorityAndFairness ? new ClassifierSync(core.objects, new Classifier(), log) : undefined;
  apf?.start().catch((err: unknown) => log(`priority and fairness: ${err instanceof Error ? err.message : String(err)}`));
  const dispatcher = apf ? new Dispatcher(apf.classifier, opts.maxRequestsInflight + opts.maxMutatingRequestsInflight, { objectCounts: listed }) : undefined;
  const dispatch = buildDispatch({
    aggregation,
    local: localRoutes(registry, health.endpoints, aggregation, dispatcher, opts.featureGates.CBORServingAndStorage),
    registry,
    gatewayServed: reviews(opts, hooks, authn, authz, core),
    core,
  });
  const inFlight = new RequestWaitGroup();
  const chain = buildHandlerChain({
    authenticator: authn.authenticator,
    identityHeaders,
    impersonation: true,
    authorizer: authz.authorizer,
    inflight: new InflightLimiter(opts.maxRequestsInflight, opts.maxMutatingRequestsInflight),
    ...(dispatcher ? { flowControl: dispatcher } : {}),
    requestTimeoutMs: opts.requestTimeoutMs,
    goawayChance: opts.goawayChance,
    draining: () => health.shutdown.draining,
    inFlight,
    ...httpLogOption(opts.verbosity, log),
    dispatch,
    log,
    clock,
    ...(auditor ? { audit: auditor } : {}),
    ...(tracing ? { tracing: tracing.requests } : {}),
    cbor: opts.featureGates.CBORServingAndStorage,
    compression: opts.featureGates.APIResponseCompression,
  });
  const forwardAuth = buildForwardAuth(opts, {
    clientCa: tls.clientCa,
    tokens: authn.tokens,
    apiAudiences: authn.apiAudiences,
    authorizer: authz.authorizer,
    routes,
    log,
    clock,
  });
  const handler = withForwardAuth(forwardAuth, chain);
  const { server, url, shutdown } = await startFrontDoor({
    cert: tls.serving,
    clientCas: tls.requestheaderCa ? [tls.clientCa, tls.requestheaderCa] : [tls.clientCa],
    handler,
    upgrades: true,
    port: opts.securePort,
    bindAddress: opts.bindAddress,
    log,
    http2MaxStreams: opts.http2MaxStreamsPerConnection,
    maxConnectionsPerAddress: opts.maxConnectionsPerClientAddress,
    minVersion: opts.tlsMinVersion,
    ciphers: opts.tlsCipherSuites,
    ...(hooks.tlsReloadIntervalMs !== undefined ? { reloadIntervalMs: hooks.tlsReloadIntervalMs } : {}),
    shutdownCheck: health.shutdown,
    shutdownDelayMs: opts.shutdownDelayMs,
    shutdownSendRetryAfter: opts.shutdownSendRetryAfter,
    inFlight,
    closeLongRunning: () => core.backend.closeWatches(),
    close: async () => {
      apf?.stop();
      dispatcher?.stop();
      authn.close();
      authz.close();
      aggregation.stop();
      await core.close();
      await auditor?.shutdown();
      await tracing?.shutdown();
    },
  });

  startPostStartHooks(postStart, log);
  for (const note of tokenMethods.serviceAccounts.notes) log(note);
  // The controllers stop and the leader lease is released as shutdown begins, so another process takes over while this one drains.
  const stopping = (signal: string) => {
    void core.stopControllers?.();
    return shutdown(signal);
  };
  return { server, url, core, shutdown: stopping, ...(tls.kubeconfig ? { kubeconfig: tls.kubeconfig } : {}) };
}
