// The composition root of `gatehouse serve`: reads the TLS material and
// token files, starts the backends, then builds each part by its named
// builder — authentication, authorization, health, dispatch, serving — and
// listens. Expensive things are built once, in those builders.
import type { Http2SecureServer } from 'node:http2';
import { builtinRegistry, type Registry } from '../../lib/registry/index.js';
import { buildOpenApiV3 } from '../../lib/openapi/v3.js';
import type { ServeOptions } from '../config/flags.js';
import { identityHeaderNames } from '../authn/requestheader.js';
import { metricsText } from '../metrics/registry.js';
import { serveTokenReview } from '../reviews/tokenreview.js';
import { serveSelfSubjectReview } from '../reviews/selfsubjectreview.js';
import { accessReviewHandlers } from '../reviews/accessreviews.js';
import { PostStartHook } from '../health/checks.js';
import { buildHealth, startPostStartHooks, type HealthEndpoints } from '../health/build.js';
import { buildHandlerChain } from '../pipeline/chain.js';
import { DROP_AUDIT } from '../pipeline/audit.js';
import { InflightLimiter } from '../pipeline/inflight.js';
import { Classifier, ClassifierSync } from '../flowcontrol/classifier.js';
import { Dispatcher } from '../flowcontrol/dispatcher.js';
import type { LocalRoutes } from '../local/router.js';
import type { Aggregation } from '../aggregation/index.js';
import type { GatewayCore } from '../aggregation/remotecore.js';
import { loadTokenMethods } from './tokenmethods.js';
import { buildAuthentication, requestheaderConfig, type GatewayAuthentication } from './authentication.js';
import { buildAuthorization, type GatewayAuthorization } from './authorization.js';
import { startApiServices, startCore } from './backends.js';
import { loadProxyClientCert } from '../aggregation/clientcert.js';
import { buildDispatch, type GatewayServed } from './dispatch.js';
import { loadGatewayTls, serveHttps } from './serving.js';
import { installShutdown } from './shutdown.js';

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
}

/** Virtual types the gateway answers itself, with the same token methods and authorizers as the pipeline. */
function reviews(opts: ServeOptions, hooks: AppHooks, authn: GatewayAuthentication, authz: GatewayAuthorization): GatewayServed {
  const bodyLimit = opts.maxRequestBodyBytes;
  return {
    'authentication.k8s.io/tokenreviews': (ctx) => serveTokenReview(ctx, { tokens: authn.tokens, apiAudiences: authn.apiAudiences, bodyLimit, log: hooks.log }),
    'authentication.k8s.io/selfsubjectreviews': (ctx) => serveSelfSubjectReview(ctx, bodyLimit),
    ...accessReviewHandlers({ evaluate: (a) => authz.authorizer.evaluate(a), resolvers: () => authz.ruleResolvers(), bodyLimit }),
  };
}

/** Health, version, discovery (merged with the APIServices'), OpenAPI and /metrics. */
function localRoutes(registry: Registry, health: HealthEndpoints, aggregation: Aggregation): LocalRoutes {
  const discovery = aggregation.discovery;
  const version = (JSON.parse(discovery.version.body) as { gitVersion: string }).gitVersion;
  return { health, discovery, openapi: buildOpenApiV3(registry, version), metrics: metricsText };
}

export async function startServer(opts: ServeOptions, hooks: AppHooks): Promise<RunningServer> {
  const clock = hooks.clock ?? Date.now;
  const startedAt = clock();
  const log = hooks.log;
  const tls = await loadGatewayTls(opts);
  const registry = builtinRegistry();
  const tokenMethods = await loadTokenMethods(opts, log);
  const requestheader = requestheaderConfig(opts, tls);
  // One list of identity headers: stripped after authentication, and again from everything proxied.
  const identityHeaders = identityHeaderNames(requestheader);
  // Presented to the remote core backend and to aggregated backends alike: loaded once.
  const proxyClientCert = await loadProxyClientCert(opts, log);
  const inputs = { registry, tokens: tokenMethods.serviceAccounts.issuing, clusterCaPem: tls.clusterCaPem, identityHeaders, proxyClientCert, clock };
  const core = await startCore(opts, hooks, inputs);

  const authn = await buildAuthentication(opts, hooks, { tls, requestheader, tokenMethods, objects: core.objects, clock });
  const authz = await buildAuthorization(opts, hooks, core, registry, clock);
  const postStart = core.hooks.map((h) => new PostStartHook(h.name, h.run));
  const aggregation = await startApiServices(opts, hooks, core, postStart, inputs);
  // Post-start hooks and autoregister-completion are boot-sequence checks.
  const health = buildHealth({ checkStore: () => core.checkStore(), boot: [...postStart, aggregation.completion], livezGraceMs: opts.livezGracePeriodMs, startedAt, clock, log });
  const dispatch = buildDispatch({ aggregation, local: localRoutes(registry, health.endpoints, aggregation), registry, gatewayServed: reviews(opts, hooks, authn, authz), core });
  // Priority and fairness: the objects are followed from the store; kube's mandatory ones serve until the first list.
  const apf = opts.enablePriorityAndFairness ? new ClassifierSync(core.objects, new Classifier(), log) : undefined;
  apf?.start().catch((err: unknown) => log(`priority and fairness: ${err instanceof Error ? err.message : String(err)}`));
  const handler = buildHandlerChain({
    authenticator: authn.authenticator, identityHeaders, impersonation: true, authorizer: authz.authorizer, admission: authz.admission,
    inflight: new InflightLimiter(opts.maxRequestsInflight, opts.maxMutatingRequestsInflight),
    ...(apf ? { flowControl: new Dispatcher(apf.classifier, opts.maxRequestsInflight + opts.maxMutatingRequestsInflight) } : {}),
    requestTimeoutMs: opts.requestTimeoutMs, goawayChance: opts.goawayChance, draining: () => health.shutdown.draining, audit: DROP_AUDIT, dispatch, log, clock,
    cbor: opts.featureGates.CBORServingAndStorage,
  });
  const { server, connections, url } = await serveHttps({
    cert: tls.serving, clientCas: tls.requestheaderCa ? [tls.clientCa, tls.requestheaderCa] : [tls.clientCa], handler, upgrades: true,
    port: opts.securePort, bindAddress: opts.bindAddress, log, http2MaxStreams: opts.http2MaxStreamsPerConnection,
    maxConnectionsPerAddress: opts.maxConnectionsPerClientAddress,
    ...(hooks.tlsReloadIntervalMs !== undefined ? { reloadIntervalMs: hooks.tlsReloadIntervalMs } : {}),
  });

  startPostStartHooks(postStart, log);
  for (const note of tokenMethods.serviceAccounts.notes) log(note);
  const shutdown = installShutdown({
    server, connections, check: health.shutdown, delayMs: opts.shutdownDelayMs, log,
    closeLongRunning: () => core.backend.closeWatches(),
    closeBackends: () => { apf?.stop(); authn.close(); authz.close(); aggregation.stop(); return core.close(); },
  });
  return { server, url, core, shutdown, ...(tls.kubeconfig ? { kubeconfig: tls.kubeconfig } : {}) };
}
