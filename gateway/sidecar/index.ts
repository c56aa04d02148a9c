// Sidecar mode (`gatehouse serve --upstream=<url>`), after kube-rbac-proxy:
// Gatehouse stands in front of one HTTP(S) service. Every request runs
// through the gateway's own chain (gateway/pipeline/chain.ts) — request
// info, timeout, authentication, audit, in-flight limit, authorization —
// with the sidecar's pieces: the cluster decides who asks and what they may
// do (delegation.ts), the paths and attributes are kube-rbac-proxy's
// (access.ts), and dispatch proxies to the upstream (upstream.ts).
// Impersonate-* headers are not acted on; they are stripped like the
// client's identity headers and credentials.
import { buildAuditor } from '../audit/index.js';
import { buildTracing } from '../tracing/index.js';
import type { Http2SecureServer } from 'node:http2';
import type { ServeOptions } from '../config/flags.js';
import { identityHeaderNames } from '../authn/requestheader.js';
import { buildHandlerChain } from '../pipeline/chain.js';
import { InflightLimiter } from '../pipeline/inflight.js';
import { RequestWaitGroup } from '../pipeline/waitgroup.js';
import { httpLogOption } from '../pipeline/httplog.js';
import { ShutdownCheck } from '../health/checks.js';
import { loadCaBundle, loadServingCertOrDevPki, readPemFiles } from '../server/serving.js';
import { startFrontDoor } from '../server/frontdoor.js';
import { followProxyConfig } from './proxyconfigfile.js';
import { serveProxyEndpoints } from './endpoints.js';
import { serveInsecure } from './insecure.js';
import { sidecarAttributes, sidecarAuthorizer } from './proxyauthz.js';
import { flagRoutes, routeGatedAuthenticator, sidecarForbidden } from './access.js';
import { delegatedAuthentication, delegatedAuthorization, delegatedTokens, type DelegationContext } from './delegation.js';
import { buildForwardAuth, withForwardAuth } from '../forwardauth/index.js';
import { upstreamIdentity, upstreamOf, type Upstream } from './upstream.js';
import { h2cUpstream } from './h2c.js';
import { notForwarded } from '../aggregation/identity.js';
import { upstreamUrl } from '../config/options/sidecar.js';
import { loadRouteTable } from '../routes/load.js';
import type { RouteTable } from '../routes/table.js';
import { pathNotFound } from '../../lib/api/status.js';
import type { RequestContext } from '../pipeline/context.js';

export interface SidecarHooks {
  readonly log: (msg: string) => void;
  readonly clock?: () => number;
  /** Environment read for InClusterConfig (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
  /** Test knobs over --request-timeout, --max-requests-inflight and --max-mutating-requests-inflight. */
  readonly requestTimeoutMs?: number;
  readonly maxRequestsInflight?: number;
  readonly maxMutatingRequestsInflight?: number;
}

export interface RunningSidecar {
  readonly server: Http2SecureServer;
  readonly url: string;
  readonly upstream: string;
  shutdown(signal: string): Promise<void>;
}

/** Each request to the upstream of its route (or --upstream), with identity headers when the route sends them. */
function routedDispatch(routes: RouteTable, upstreams: ReadonlyMap<string, Upstream>, fallback: string): (ctx: RequestContext) => Promise<void> {
  const def = upstreams.get(fallback)!;
  return (ctx) => {
    const m = routes.match(ctx.info.path);
    if (!m) throw pathNotFound();
    const up = m.route.upstream === undefined ? def : upstreams.get(m.route.upstream)!;
    return up.dispatch(ctx, m.route.identityHeaders);
  };
}

export async function startSidecar(opts: ServeOptions, hooks: SidecarHooks): Promise<RunningSidecar> {
  const defaultUpstream = opts.upstream;
  if (!defaultUpstream) throw new Error('sidecar mode needs --upstream');
  const { log } = hooks;
  const clock = hooks.clock ?? Date.now;
  // The route table: --routes, or kube-rbac-proxy's flags for the one upstream; one that cannot work stops the
  // start before the development PKI is written.
  const routes = opts.routesFile ? await loadRouteTable(opts.routesFile, { upstreams: true, upstreamUrl }) : flagRoutes(opts.allowPaths, opts.ignorePaths);
  const { serving } = await loadServingCertOrDevPki(opts);
  const clientCa = await loadCaBundle('--client-ca-file', opts.clientCaFiles);
  const upstreamCa = opts.upstreamCaFile ? (await readPemFiles([opts.upstreamCaFile]))[0] : undefined;
  const upstreamCert =
    opts.upstreamClientCertFile && opts.upstreamClientKeyFile
      ? await readPemFiles([opts.upstreamClientCertFile, opts.upstreamClientKeyFile]).then(([certPem, keyPem]) => ({ certPem: certPem!, keyPem: keyPem! }))
      : undefined;
  // kube-rbac-proxy's configuration file (attributes, rewrites, static rules), followed on change.
  const proxyConfig = await followProxyConfig(opts.resourceAttributesFile, '--resource-attributes', { log, clock });
  const delegation: DelegationContext = { env: hooks.env ?? process.env, log, clock, closers: [] };
  const tokens = await delegatedTokens(opts, delegation);
  const authenticator = delegatedAuthentication(opts, clientCa, tokens, delegation);
  const authorizer = await delegatedAuthorization(opts, delegation);
  // No authenticating proxy is trusted here: the X-Remote-* defaults and
  // kube-rbac-proxy's field names (enabled or not) are what the upstream may
  // read, so a client's own copies go right after authentication.
  const base = identityHeaderNames(undefined);
  const identityHeaders = Object.freeze({
    names: Object.freeze([...new Set([...base.names, opts.authHeaderUserFieldName, opts.authHeaderGroupsFieldName])]),
    prefixes: base.prefixes,
  });
  const authHeaders = opts.authHeaderFieldsEnabled
    ? { user: opts.authHeaderUserFieldName, groups: opts.authHeaderGroupsFieldName, separator: opts.authHeaderGroupsFieldSeparator }
    : undefined;
  const upstreams = new Map<string, Upstream>();
  for (const url of [defaultUpstream, ...routes.upstreams()]) {
    if (upstreams.has(url)) continue;
    upstreams.set(
      url,
      opts.upstreamForceH2c
        ? h2cUpstream(url, notForwarded(identityHeaders), (ctx) => upstreamIdentity(ctx.user, authHeaders), log)
        : upstreamOf(url, upstreamCa, upstreamCert, identityHeaders, log, authHeaders),
    );
  }

  const auditor = await buildAuditor(opts, log);
  const tracing = await buildTracing(opts, { log, clock });
  // The sidecar serves no /readyz of its own; the check only carries the drain to the chain.
  const shutdownCheck = new ShutdownCheck();
  const inFlight = new RequestWaitGroup();
  const chain = buildHandlerChain({
    authenticator: routeGatedAuthenticator(routes, authenticator),
    identityHeaders,
    impersonation: false,
    authorizer: sidecarAuthorizer(routes, proxyConfig, authorizer),
    attributes: sidecarAttributes(routes, proxyConfig),
    forbidden: sidecarForbidden(log),
    inflight: new InflightLimiter(hooks.maxRequestsInflight ?? opts.maxRequestsInflight, hooks.maxMutatingRequestsInflight ?? opts.maxMutatingRequestsInflight),
    requestTimeoutMs: hooks.requestTimeoutMs ?? opts.requestTimeoutMs,
    goawayChance: opts.goawayChance,
    draining: () => shutdownCheck.draining,
    inFlight,
    ...httpLogOption(opts.verbosity, log),
    dispatch: routedDispatch(routes, upstreams, defaultUpstream),
    log,
    clock,
    ...(auditor ? { audit: auditor } : {}),
    ...(tracing ? { tracing: tracing.requests } : {}),
  });
  // Forward auth: the same TokenReview and SubjectAccessReview (and their caches) answer nginx, Traefik and Envoy.
  const handler = withForwardAuth(buildForwardAuth(opts, { clientCa, tokens, apiAudiences: opts.apiAudiences, authorizer, routes, log, clock }), chain);
  const { server, url, shutdown } = await startFrontDoor({
    cert: serving,
    clientCas: [clientCa],
    handler,
    upgrades: true,
    port: opts.securePort,
    bindAddress: opts.bindAddress,
    log,
    http2MaxStreams: opts.http2MaxStreamsPerConnection,
    maxConnectionsPerAddress: opts.maxConnectionsPerClientAddress,
    minVersion: opts.tlsMinVersion,
    ciphers: opts.tlsCipherSuites,
    shutdownCheck,
    shutdownDelayMs: opts.shutdownDelayMs,
    shutdownSendRetryAfter: opts.shutdownSendRetryAfter,
    inFlight,
    closeLongRunning: () => {
      for (const u of upstreams.values()) u.closeLongRunning();
    },
    close: async () => {
      for (const u of upstreams.values()) u.close();
      proxyConfig.close();
      endpoints?.close();
      insecure?.closeAllConnections();
      insecure?.close();
      for (const c of delegation.closers) c();
      await auditor?.shutdown();
      await tracing?.shutdown();
    },
  });
  // kube-rbac-proxy's plain HTTP listener, on loopback only (the flag's parser refuses any other address).
  const insecure = opts.insecureListen ? await serveInsecure(opts.insecureListen.host, opts.insecureListen.port, handler) : undefined;
  // kube-rbac-proxy's own /healthz on a port of its own.
  const endpoints = opts.proxyEndpointsPort > 0 ? await serveProxyEndpoints(opts.proxyEndpointsPort, opts.bindAddress, serving, shutdownCheck) : undefined;
  log(
    `sidecar: proxying authorized requests to ${[...upstreams.keys()].join(', ')} (${routes.routes.length} route${routes.routes.length === 1 ? '' : 's'}${opts.routesFile ? ' from --routes' : ''}${opts.resourceAttributesFile ? `, ${opts.resourceAttributesFile} followed` : ''})`,
  );
  return {
    server,
    url,
    upstream: defaultUpstream,
    shutdown,
  };
}
