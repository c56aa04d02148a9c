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
import { ShutdownCheck } from '../health/checks.js';
import { loadCaBundle, loadServingCertOrDevPki, readPemFiles } from '../server/serving.js';
import { startFrontDoor } from '../server/frontdoor.js';
import { loadResourceAttributes } from './config.js';
import { pathGatedAuthenticator, pathGatedAuthorizer, SidecarPaths, sidecarAttributes, sidecarForbidden } from './access.js';
import { delegatedAuthentication, delegatedAuthorization, delegatedTokens, type DelegationContext } from './delegation.js';
import { buildForwardAuth, withForwardAuth } from '../forwardauth/index.js';
import { routeTableOf } from '../routes/index.js';
import { upstreamOf } from './upstream.js';

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

export async function startSidecar(opts: ServeOptions, hooks: SidecarHooks): Promise<RunningSidecar> {
  const upstreamUrl = opts.upstream;
  if (!upstreamUrl) throw new Error('sidecar mode needs --upstream');
  const { log } = hooks;
  const clock = hooks.clock ?? Date.now;
  const { serving } = await loadServingCertOrDevPki(opts);
  const clientCa = await loadCaBundle('--client-ca-file', opts.clientCaFiles);
  const upstreamCa = opts.upstreamCaFile ? (await readPemFiles([opts.upstreamCaFile]))[0] : undefined;
  const resourceAttributes = opts.resourceAttributesFile ? await loadResourceAttributes(opts.resourceAttributesFile) : undefined;
  const paths = new SidecarPaths(opts.allowPaths, opts.ignorePaths);
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
  const upstream = upstreamOf(upstreamUrl, upstreamCa, paths, identityHeaders, log, authHeaders);

  const auditor = await buildAuditor(opts, log);
  const tracing = await buildTracing(opts, { log, clock });
  // The sidecar serves no /readyz of its own; the check only carries the drain to the chain.
  const shutdownCheck = new ShutdownCheck();
  const chain = buildHandlerChain({
    authenticator: pathGatedAuthenticator(paths, authenticator),
    identityHeaders,
    impersonation: false,
    authorizer: pathGatedAuthorizer(paths, authorizer),
    attributes: sidecarAttributes(resourceAttributes),
    forbidden: sidecarForbidden(log),
    inflight: new InflightLimiter(hooks.maxRequestsInflight ?? opts.maxRequestsInflight, hooks.maxMutatingRequestsInflight ?? opts.maxMutatingRequestsInflight),
    requestTimeoutMs: hooks.requestTimeoutMs ?? opts.requestTimeoutMs,
    goawayChance: opts.goawayChance,
    draining: () => shutdownCheck.draining,
    dispatch: upstream.dispatch,
    log,
    clock,
    ...(auditor ? { audit: auditor } : {}),
    ...(tracing ? { tracing: tracing.requests } : {}),
  });
  // Forward auth: the same TokenReview and SubjectAccessReview (and their caches) answer nginx, Traefik and Envoy.
  const routes = await routeTableOf(opts, { upstreams: false, checkUpstream: () => undefined });
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
    shutdownCheck,
    shutdownDelayMs: opts.shutdownDelayMs,
    closeLongRunning: () => upstream.closeLongRunning(),
    close: async () => {
      upstream.close();
      for (const c of delegation.closers) c();
      await auditor?.shutdown();
      await tracing?.shutdown();
    },
  });
  log(
    `sidecar: proxying authorized requests to ${upstreamUrl}${resourceAttributes ? ' (resource attributes from --resource-attributes)' : ' (non-resource attributes from the path)'}`,
  );
  return {
    server,
    url,
    upstream: upstreamUrl,
    shutdown,
  };
}
