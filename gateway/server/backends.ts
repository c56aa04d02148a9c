// Where resources come from, built once per start: the core backend
// (in-process, or a remote `gatehouse core-backend` with --core-backend-url)
// with its admission plugins, and the aggregated APIServices
// (gateway/aggregation).
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { buildAdmission, startCoreBackend, type Admission, type CoreBackendOptions, type RunningCoreBackend } from '../../backends/core/index.js';
import type { RequestAuthorizer } from '../../lib/api/authorization.js';
import type { RbacRuleResolver } from '../../lib/rbac/rules.js';
import { startRbac } from '../authz/rbac/index.js';
import { AuthorizerChain } from '../authz/chain.js';
import { privilegedGroups } from '../authz/always.js';
import { PRIVILEGED_GROUPS, rbacRulesOf, type GatewayAuthorization } from './authorization.js';
import { serverUrl } from '../../certs/kubeconfig.js';
import type { LiveRegistry } from '../../lib/registry/live.js';
import { controllerEnabled, type ServeOptions } from '../config/flags.js';
import { admissionPluginsOf } from '../config/options/admission.js';
import type { IdentityHeaders } from '../pipeline/identityheaders.js';
import { localGroupVersions, startAggregation, withAvailableCondition, type Aggregation } from '../aggregation/index.js';
import type { ProxyClientCert } from '../aggregation/transport.js';
import { startRemoteCore, type GatewayCore } from '../aggregation/remotecore.js';
import { registryDiscovery } from '../local/discovery.js';
import type { TokenIssuing } from '../../backends/core/index.js';
import type { PostStartHook } from '../health/checks.js';
import type { AppHooks } from './app.js';
import { connectHost } from './serving.js';
import { csrSigningConfig } from './signers.js';

export interface CoreInputs {
  /** The registry in force; the in-process core backend swaps it as CustomResourceDefinitions change. */
  readonly registry: LiveRegistry;
  readonly tokens: TokenIssuing;
  /** The CA the token controllers put in cluster-info and legacy token secrets. */
  readonly clusterCaPem: string;
  /** Stripped from requests forwarded to a remote core backend. */
  readonly identityHeaders: IdentityHeaders;
  /** --proxy-client-cert-file/key (or the dev PKI's front-proxy client), shown to remote backends. */
  readonly proxyClientCert: ProxyClientCert | undefined;
  readonly clock: () => number;
  /** Told each resource's object count by the in-process core backend's cluster-wide lists (LIST widths). */
  readonly onListed?: (group: string, resource: string, total: number) => void;
}

export async function startCore(opts: ServeOptions, hooks: AppHooks, i: CoreInputs): Promise<GatewayCore> {
  if (opts.coreBackendUrl) {
    return startRemoteCore({
      url: opts.coreBackendUrl,
      caPem: await readFile(opts.coreBackendCaFile!, 'utf8'),
      clientCert: i.proxyClientCert,
      registry: i.registry,
      identityHeaders: i.identityHeaders,
      log: hooks.log,
    });
  }
  const host = connectHost(opts.bindAddress);
  return startCoreBackend({
    tokens: i.tokens,
    controllers: {
      ...(controllerEnabled(opts, 'serviceaccount-token') ? { serviceAccountToken: { caPem: i.clusterCaPem } } : {}),
      defaultServiceAccount: controllerEnabled(opts, 'serviceaccount'),
      ...(controllerEnabled(opts, 'root-ca-cert-publisher') ? { rootCaPublisher: { caPem: i.clusterCaPem } } : {}),
      tokenCleaner: controllerEnabled(opts, 'tokencleaner'),
      ...(controllerEnabled(opts, 'bootstrapsigner') ? { bootstrapSigner: { server: serverUrl(host, opts.securePort), caPem: i.clusterCaPem } } : {}),
      ...csrControllers(opts, hooks.log),
    },
    ...electionOptions(opts),
    storageBackend: opts.storageBackend,
    ...(opts.storageBackend === 'redis' ? { redisUrl: opts.redisUrl, storagePrefix: opts.storagePrefix } : {}),
    dataDir: opts.dataDir,
    historyWindowMs: opts.watchHistoryMs,
    registry: i.registry,
    allowUnsafeMalformedObjectDeletion: opts.featureGates.AllowUnsafeMalformedObjectDeletion,
    cbor: opts.featureGates.CBORServingAndStorage,
    traceStore: opts.tracingConfigFile !== undefined,
    autoregister: localGroupVersions(i.registry.current),
    bodyLimit: opts.maxRequestBodyBytes,
    minRequestTimeoutS: opts.minRequestTimeoutS,
    log: hooks.log,
    clock: i.clock,
    ...(i.onListed ? { onListed: i.onListed } : {}),
    ...(hooks.bookmarkIntervalMs !== undefined ? { bookmarkIntervalMs: hooks.bookmarkIntervalMs } : {}),
    ...(hooks.tooLargeWaitMs !== undefined ? { tooLargeWaitMs: hooks.tooLargeWaitMs } : {}),
  });
}

/**
 * Leader election (--leader-elect-*) and the server identity lease (--identity-lease-*), in-process
 * and in `gatehouse core-backend`. The identity is hashed from the hostname, as kube's, and the port,
 * so several processes on one host keep one lease each, the same one across restarts.
 */
export function electionOptions(opts: ServeOptions): Pick<CoreBackendOptions, 'leaderElection' | 'identityLease'> {
  return {
    leaderElection: {
      enabled: opts.leaderElect,
      namespace: opts.leaderElectResourceNamespace,
      name: opts.leaderElectResourceName,
      leaseDurationMs: opts.leaderElectLeaseDurationMs,
      renewDeadlineMs: opts.leaderElectRenewDeadlineMs,
      retryPeriodMs: opts.leaderElectRetryPeriodMs,
    },
    identityLease: {
      seed: `${hostname()}:${opts.securePort}`,
      leaseDurationSeconds: opts.identityLeaseDurationSeconds,
      renewIntervalMs: opts.identityLeaseRenewIntervalSeconds * 1000,
    },
  };
}

/** csrsigning, csrapproving, csrcleaner and resourcequota as --controllers leaves them (in-process and in `gatehouse core-backend`). */
export function csrControllers(opts: ServeOptions, log: (msg: string) => void) {
  const signing = controllerEnabled(opts, 'csrsigning') ? csrSigningConfig(opts, log) : undefined;
  return {
    ...(signing ? { csrSigning: signing } : {}),
    csrApproving: controllerEnabled(opts, 'csrapproving'),
    csrCleaner: controllerEnabled(opts, 'csrcleaner'),
    ...(controllerEnabled(opts, 'resourcequota') ? { resourceQuota: { syncPeriodMs: opts.resourceQuotaSyncPeriodMs } } : {}),
  };
}

/** The core backend's admission chain from the flags: the one builder, in-process and in `gatehouse core-backend`. */
function coreAdmission(opts: ServeOptions, authorizer: RequestAuthorizer, rbac: RbacRuleResolver): Admission {
  return buildAdmission({ enabled: admissionPluginsOf(opts), authorizer, rbac, privilegedGroups: PRIVILEGED_GROUPS });
}

/** The in-process core backend admits with the gateway's authorizers and RBAC policy; a remote one admits its own writes. */
export function startCoreAdmission(opts: ServeOptions, core: GatewayCore, authz: GatewayAuthorization): void {
  core.useAdmission?.(coreAdmission(opts, authz.authorizer, authz.rbacRules));
}

/**
 * `gatehouse core-backend`: admission with the process's delegated authorizer
 * (SubjectAccessReview to the gateway) and an RBAC policy kept from its own
 * store, as kube's aggregated servers admit their writes. Returns its stop.
 */
export async function startOwnAdmission(
  opts: ServeOptions,
  core: RunningCoreBackend,
  authorizer: RequestAuthorizer,
  log: (msg: string) => void,
): Promise<() => void> {
  const rbac = await startRbac(core.objects, log);
  // Without a webhook the process's own chain lets every authenticated user through (the gateway authorized the
  // request itself), but admission asks about other verbs (escalate, bind, create for an apply): those are judged by
  // system:masters and the RBAC policy of this store, so no check is waved through.
  const judge = opts.authorizationWebhookConfigFile ? authorizer : new AuthorizerChain([privilegedGroups(PRIVILEGED_GROUPS), rbac.authorizer]);
  core.useAdmission(coreAdmission(opts, judge, rbacRulesOf(rbac)));
  return () => rbac.stop();
}

/** APIService routing, availability and merged discovery over the core backend's objects. */
export async function startApiServices(
  opts: ServeOptions,
  hooks: AppHooks,
  core: GatewayCore,
  postStart: readonly PostStartHook[],
  i: CoreInputs,
): Promise<Aggregation> {
  // In-process, autoregister is a post-start hook of the core backend; a remote core backend runs it itself.
  const autoregister = postStart.find((h) => h.name === 'poststarthook/start-kube-apiserver-autoregistration');
  return startAggregation({
    objects: core.objects,
    registry: i.registry,
    localDiscovery: registryDiscovery(i.registry, `${connectHost(opts.bindAddress)}:${opts.securePort}`),
    clientCert: i.proxyClientCert,
    identityHeaders: i.identityHeaders,
    // A proxied request whose backend has not answered by --request-timeout is a 504 (also a watch, which has no deadline of its own).
    timeoutMs: opts.requestTimeoutMs,
    writeStatus: async (name, cond, now) => {
      await core.updateStatus('apiregistration.k8s.io', 'apiservices', '', name, (st) => withAvailableCondition(st, cond, now));
    },
    autoregisterDone: () => autoregister?.finished ?? opts.coreBackendUrl !== undefined,
    log: hooks.log,
    clock: i.clock,
  });
}
