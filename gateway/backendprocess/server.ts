// A backend as its own HTTPS process (`gatehouse sample-backend`,
// `gatehouse core-backend`), the way kube's sample-apiserver runs behind
// kube-apiserver: it trusts the gateway through request-header
// authentication (the front-proxy client certificate must chain to
// --requestheader-client-ca-file, and its CN be in
// --requestheader-allowed-names when set; X-Remote-* by default) and
// delegates authorization to the gateway with SubjectAccessReview
// (--authorization-mode=Webhook --authorization-webhook-config-file=<a
// kubeconfig for the gateway>). Without a webhook, every authenticated user
// may act (the gateway has authorized the request before proxying it), which
// the start log says. Health and discovery paths are open to any
// authenticated caller. The request pipeline is the gateway's own chain,
// with the limits the flags give (--max-requests-inflight,
// --max-mutating-requests-inflight, --request-timeout, --goaway-chance), and
// the front door is the gateway's (server/frontdoor.ts): the same serving
// and the same shutdown, 429 with Retry-After while it drains.
import type { Http2SecureServer } from 'node:http2';
import type { RunningCoreBackend } from '../../backends/core/index.js';
import type { RegistrySource } from '../../lib/registry/live.js';
import { pathNotFound } from '../../lib/api/status.js';
import { liveOpenApiV3 } from '../../lib/openapi/live.js';
import type { ServeOptions } from '../config/flags.js';
import { RequestHeaderAuthenticator, identityHeaderNames, type RequestHeaderConfig } from '../authn/requestheader.js';
import { X509Authenticator } from '../authn/x509.js';
import { UnionAuthenticator } from '../authn/union.js';
import type { Authenticator } from '../authn/types.js';
import { privilegedGroups } from '../authz/always.js';
import { AuthorizerChain } from '../authz/chain.js';
import type { Authorizer, Decision } from '../authz/types.js';
import { NO_OPINION } from '../authz/types.js';
import { WebhookAuthorizer, webhookClient } from '../authz/webhook.js';
import { PostStartHook } from '../health/checks.js';
import { buildHealth, leaderElectionCheck, startPostStartHooks } from '../health/build.js';
import { buildHandlerChain } from '../pipeline/chain.js';
import { InflightLimiter } from '../pipeline/inflight.js';
import { RequestWaitGroup } from '../pipeline/waitgroup.js';
import { httpLogOption } from '../pipeline/httplog.js';
import type { RequestContext } from '../pipeline/context.js';
import { serveLocal } from '../local/router.js';
import { registryDiscovery } from '../local/discovery.js';
import { loadCaBundle, loadServingCert } from '../server/serving.js';
import { startFrontDoor } from '../server/frontdoor.js';
import type { Tracing } from '../tracing/index.js';
import type { Auditor } from '../audit/index.js';

export interface BackendServerOptions {
  readonly opts: ServeOptions;
  readonly registry: RegistrySource;
  readonly backend: RunningCoreBackend;
  readonly name: string;
  readonly log: (msg: string) => void;
  /** --tracing-config-file: the chain's server span and its children, as the gateway's. */
  readonly tracing?: Tracing | undefined;
  /** --audit-policy-file with a log or webhook: the backend's own audit events. */
  readonly auditor?: Auditor | undefined;
  /** Starts the backend's admission plugins over the process's authorizer (the core backend); returns their stop. */
  readonly admission?: (authorizer: Authorizer) => Promise<() => void>;
}

export interface RunningBackendServer {
  readonly server: Http2SecureServer;
  readonly url: string;
  shutdown(signal: string): Promise<void>;
}

const ALLOW: Decision = Object.freeze({ kind: 'allow', reason: '' });
const OPEN_PATHS = ['/healthz', '/livez', '/readyz', '/version', '/openapi', '/api', '/apis'];

/** Non-resource discovery and health paths: any authenticated user (system:discovery / system:public-info-viewer). */
const openPaths: Authorizer = {
  name: 'open-paths',
  authorize: (a) =>
    !a.isResourceRequest && a.user.groups.includes('system:authenticated') && OPEN_PATHS.some((p) => a.path === p || a.path.startsWith(`${p}/`))
      ? ALLOW
      : NO_OPINION,
};

/** Without a webhook: the gateway authorized the request already; authenticated users pass. */
const authenticatedUsers: Authorizer = {
  name: 'gateway-authorized',
  authorize: (a) => (a.user.groups.includes('system:authenticated') ? ALLOW : NO_OPINION),
};

export const DEFAULT_REQUESTHEADER: Omit<RequestHeaderConfig, 'allowedNames'> = Object.freeze({
  usernameHeaders: ['X-Remote-User'],
  uidHeaders: ['X-Remote-Uid'],
  groupHeaders: ['X-Remote-Group'],
  extraHeaderPrefixes: ['X-Remote-Extra-'],
});

/** --requestheader-* with the X-Remote-* defaults for names left unset. */
function requestheaderOf(opts: ServeOptions): RequestHeaderConfig {
  return {
    usernameHeaders: opts.requestheaderUsernameHeaders.length ? opts.requestheaderUsernameHeaders : DEFAULT_REQUESTHEADER.usernameHeaders,
    uidHeaders: opts.requestheaderUidHeaders.length ? opts.requestheaderUidHeaders : DEFAULT_REQUESTHEADER.uidHeaders,
    groupHeaders: opts.requestheaderGroupHeaders.length ? opts.requestheaderGroupHeaders : DEFAULT_REQUESTHEADER.groupHeaders,
    extraHeaderPrefixes: opts.requestheaderExtraHeadersPrefix.length ? opts.requestheaderExtraHeadersPrefix : DEFAULT_REQUESTHEADER.extraHeaderPrefixes,
    allowedNames: opts.requestheaderAllowedNames,
  };
}

/** system:masters, open discovery and health paths, then the gateway's SubjectAccessReview (or: authenticated users pass). */
async function delegatedAuthorizer(opts: ServeOptions, name: string, log: (msg: string) => void): Promise<{ authorizer: Authorizer; close(): void }> {
  const modes: Authorizer[] = [privilegedGroups(['system:masters']), openPaths];
  if (!opts.authorizationWebhookConfigFile) {
    log(`${name}: no --authorization-webhook-config-file: requests authenticated through the gateway are allowed (the gateway authorized them)`);
    return { authorizer: new AuthorizerChain([...modes, authenticatedUsers]), close: () => undefined };
  }
  const client = await webhookClient(opts.authorizationWebhookConfigFile, '--authorization-webhook-config-file', { timeoutMs: 10_000, log });
  modes.push(
    new WebhookAuthorizer(client, {
      name: 'webhook',
      version: opts.authorizationWebhookVersion,
      authorizedTtlMs: opts.authorizationWebhookCacheAuthorizedTtlMs,
      unauthorizedTtlMs: opts.authorizationWebhookCacheUnauthorizedTtlMs,
      failurePolicy: 'Deny',
      withSelectors: false,
      log,
    }),
  );
  return { authorizer: new AuthorizerChain(modes), close: () => client.close() };
}

export async function startBackendServer(b: BackendServerOptions): Promise<RunningBackendServer> {
  const { opts, log } = b;
  if (!opts.tlsCertFile || !opts.tlsPrivateKeyFile)
    throw new Error(`${b.name} needs --tls-cert-file and --tls-private-key-file (a serving certificate for <service>.<namespace>.svc)`);
  if (!opts.requestheaderClientCaFile)
    throw new Error(`${b.name} needs --requestheader-client-ca-file (the CA of the gateway's front-proxy client certificate)`);
  const cert = await loadServingCert(opts.tlsCertFile, opts.tlsPrivateKeyFile);
  const proxyCa = await loadCaBundle('--requestheader-client-ca-file', [opts.requestheaderClientCaFile]);
  const clientCa = await loadCaBundle('--client-ca-file', opts.clientCaFiles);
  const rh = requestheaderOf(opts);
  const authenticators: Authenticator[] = [new RequestHeaderAuthenticator(proxyCa, rh)];
  if (clientCa.paths.length > 0) authenticators.push(new X509Authenticator({ cas: clientCa }));
  const authenticator = new UnionAuthenticator(authenticators, { anonymous: opts.anonymousAuth, log });
  const authz = await delegatedAuthorizer(opts, b.name, log);
  const stopAdmission = await b.admission?.(authz.authorizer);

  const postStart = b.backend.hooks.map((h) => new PostStartHook(h.name, h.run));
  const health = buildHealth({
    checkStore: () => b.backend.checkStore(),
    boot: postStart,
    live: leaderElectionCheck(b.backend),
    livezGraceMs: opts.livezGracePeriodMs,
    startedAt: Date.now(),
    clock: Date.now,
    log,
  });
  const discovery = registryDiscovery(b.registry, `${opts.bindAddress}:${opts.securePort}`);
  const version = (JSON.parse(discovery.version.body) as { gitVersion: string }).gitVersion;
  const routes = { health: health.endpoints, discovery, openapi: liveOpenApiV3(b.registry, version) };
  const api = b.backend.backend;
  const dispatch = async (ctx: RequestContext): Promise<void> => {
    const { info } = ctx;
    if (!info.isResourceRequest) return serveLocal(routes, ctx, info.path, ctx.query);
    if (!api.serves(info.apiGroup, info.apiVersion)) throw pathNotFound();
    return api.serve(ctx);
  };
  const inFlight = new RequestWaitGroup();
  const handler = buildHandlerChain({
    authenticator,
    identityHeaders: identityHeaderNames(rh),
    impersonation: true,
    authorizer: authz.authorizer,
    inflight: new InflightLimiter(opts.maxRequestsInflight, opts.maxMutatingRequestsInflight),
    requestTimeoutMs: opts.requestTimeoutMs,
    goawayChance: opts.goawayChance,
    draining: () => health.shutdown.draining,
    inFlight,
    ...httpLogOption(opts.verbosity, log),
    dispatch,
    log,
    clock: Date.now,
    cbor: opts.featureGates.CBORServingAndStorage,
    compression: opts.featureGates.APIResponseCompression,
    ...(b.tracing ? { tracing: b.tracing.requests } : {}),
    ...(b.auditor ? { audit: b.auditor } : {}),
  });
  const { server, url, shutdown } = await startFrontDoor({
    cert,
    clientCas: [proxyCa, clientCa],
    handler,
    upgrades: false,
    port: opts.securePort,
    bindAddress: opts.bindAddress,
    log,
    http2MaxStreams: opts.http2MaxStreamsPerConnection,
    maxConnectionsPerAddress: opts.maxConnectionsPerClientAddress,
    shutdownCheck: health.shutdown,
    shutdownDelayMs: opts.shutdownDelayMs,
    shutdownSendRetryAfter: opts.shutdownSendRetryAfter,
    inFlight,
    closeLongRunning: () => api.closeWatches(),
    close: async () => {
      stopAdmission?.();
      authz.close();
      await b.backend.close();
      await b.auditor?.shutdown();
      await b.tracing?.shutdown();
    },
  });
  startPostStartHooks(postStart, log);
  // As the gateway: the controllers stop and the leader lease is released as shutdown begins.
  return {
    server,
    url,
    shutdown: (signal) => {
      void b.backend.stopControllers();
      return shutdown(signal);
    },
  };
}
