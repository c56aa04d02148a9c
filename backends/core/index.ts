// The core backend's public entry: opens its store, builds the handlers and
// controllers, and reports health. The gateway composes it through this
// file only; stores stay private to the backend.
import { join } from 'node:path';
import type { Registry } from '../../lib/registry/index.js';
import { LiveRegistry } from '../../lib/registry/live.js';
import type { ObjectSource } from '../../lib/api/objectsource.js';
import { CoreBackend } from './backend.js';
import { storeObjectSource } from './objectsource.js';
import { conversionWebhooks } from './conversion.js';
import type { ConversionWebhooks } from '../../lib/crd/conversionwebhook.js';
import type { CoreEnv } from './env.js';
import { DEFAULT_NAMESPACES, NamespaceController, namespaceType } from './namespaces.js';
import { objectKey } from './keys.js';
import { prepareCreate } from './objects.js';
import { FileStore, openStore, sizedStore } from './store/index.js';
import { keyOrderedStore } from './keyorder.js';
import { countFileSyncs, countStorageSize, countStoredObjects, instrumentedStore } from './metrics.js';
import { StoreError, type Store } from './store/types.js';
import type { TokenIssuing } from './handlers/tokenrequest.js';
import { ServiceAccountTokenController } from './controllers/satokens.js';
import { TokenCleaner } from './controllers/tokencleaner.js';
import { CsrSigningController, type CsrSigningConfig } from './controllers/csrsigning.js';
import { CsrApprovingController } from './controllers/csrapproving.js';
import { CsrCleaner } from './controllers/csrcleaner.js';
import { ResourceQuotaController } from './controllers/resourcequota.js';
import { BootstrapSigner, type ClusterInfoSource } from './controllers/bootstrapsigner.js';
import type { WatchingController } from './controllers/loop.js';
import { bootstrapRbac } from './controllers/rbacbootstrap.js';
import { ensureSystemPriorityClasses } from './controllers/priorityclasses.js';
import { ApfBootstrap } from './controllers/apfbootstrap.js';
import { FlowSchemaStatusController } from './controllers/flowschemastatus.js';
import { PolicyStatusController } from './controllers/policystatus.js';
import { ClusterRoleAggregationController } from './controllers/aggregation.js';
import { GarbageCollector } from './controllers/garbagecollector.js';
import { autoregister, type LocalGroupVersion } from './controllers/autoregister.js';
import { prepareUpdate } from './objects.js';
import { guaranteedUpdate } from './store/types.js';
import type { KObject } from '../../lib/api/meta.js';
import { DefaultServiceAccountController, RootCaPublisher } from './controllers/namespacedefaults.js';
import { CrdController } from './controllers/crd.js';
import { CrdRegistrySync } from '../../lib/crd/registrysync.js';
import { BUILTIN_ADMISSION } from './admission/build.js';
import { leases } from '../../lib/registry/builtins/coordination.js';
import { LeaderElector, type ElectionConfig } from './controllers/leaderelection/elector.js';
import { fencedStore } from './controllers/leaderelection/fence.js';
import { holderIdentity } from './controllers/leaderelection/holder.js';
import { LeaderOnlyControllers, type LeaderOnlyController } from './controllers/leaderelection/runner.js';
import { IdentityLease, type IdentityLeaseConfig } from './controllers/identitylease.js';
import { IdentityLeaseCollector } from './controllers/identityleasegc.js';
import { WebhookConfigurations } from './admission/webhooks/cache.js';
import { PolicyCache } from './admission/policies/cache.js';
import { NamespacePolicies } from './quota/cache.js';
import type { Admission } from './admission/types.js';

export type { TokenIssuing } from './handlers/tokenrequest.js';
export type { ClusterInfoSource } from './controllers/bootstrapsigner.js';
export type { CsrSigningConfig } from './controllers/csrsigning.js';
export type { LocalGroupVersion } from './controllers/autoregister.js';
export { AUTOMANAGED_LABEL } from './controllers/autoregister.js';
export { buildAdmission, type AdmissionInputs } from './admission/build.js';
export type { Admission } from './admission/types.js';

export interface CoreBackendOptions {
  storageBackend: 'file' | 'memory' | 'redis';
  dataDir: string;
  /** For `redis`: the server URL and the key prefix. */
  redisUrl?: string;
  storagePrefix?: string;
  /** The file store's directory; default `<dataDir>/store`. */
  storeDir?: string;
  /**
   * false = a generic backend over `registry` alone (a sample backend): no default
   * namespaces, RBAC bootstrap or built-in controllers. Default true.
   */
  builtins?: boolean;
  /** Group versions served locally by the front door: kept as local APIServices at start (hook `start-kube-apiserver-autoregistration`). */
  autoregister?: readonly LocalGroupVersion[];
  historyWindowMs: number;
  /** A fixed registry, or the caller's live one (the gateway's), which the CRD sync then swaps. */
  registry: Registry | LiveRegistry;
  /** The AllowUnsafeMalformedObjectDeletion feature gate (default false). */
  allowUnsafeMalformedObjectDeletion?: boolean;
  /** The CBORServingAndStorage feature gate (default false). */
  cbor?: boolean;
  /** Store calls made for a traced request become spans (--tracing-config-file). */
  traceStore?: boolean;
  bodyLimit: number;
  log: (msg: string) => void;
  clock?: () => number;
  tooLargeWaitMs?: number;
  bookmarkIntervalMs?: number;
  /** Told the object count a cluster-wide list without selectors saw (CoreEnv.onListed). */
  onListed?: (group: string, resource: string, total: number) => void;
  /** --min-request-timeout (default 1800 s). */
  minRequestTimeoutS?: number;
  /** Service-account token signing: serves serviceaccounts/token; absent = not served. */
  tokens?: TokenIssuing;
  /**
   * Leader election for kube-controller-manager's controllers (leaderelection/): absent or
   * disabled, they run in this process unconditionally.
   */
  leaderElection?: LeaderElectionOptions;
  /** The server identity lease (kube's APIServerIdentity); absent = none is kept. */
  identityLease?: IdentityLeaseConfig;
  /** Controllers to run as post-start hooks (kube-controller-manager names). */
  controllers?: {
    /** `serviceaccount-token`: fills legacy token secrets (needs `tokens`); the CA bundle goes into `ca.crt`. */
    serviceAccountToken?: { caPem: string };
    /** `serviceaccount`: the ServiceAccount `default` in every namespace. */
    defaultServiceAccount?: boolean;
    /** `root-ca-cert-publisher`: the ConfigMap `kube-root-ca.crt` (the cluster CA) in every namespace. */
    rootCaPublisher?: { caPem: string };
    /** `tokencleaner`: deletes expired bootstrap token secrets. */
    tokenCleaner?: boolean;
    /** `bootstrapsigner`: keeps kube-public/cluster-info and its JWS signatures. */
    bootstrapSigner?: ClusterInfoSource;
    /** `csrsigning`: issues approved CertificateSigningRequests of the kubernetes.io signers with their CAs. */
    csrSigning?: CsrSigningConfig;
    /** `csrapproving`: approves node client certificate requests their requester may make (SubjectAccessReview). */
    csrApproving?: boolean;
    /** `csrcleaner`: removes decided, issued and stale CertificateSigningRequests. */
    csrCleaner?: boolean;
    /** `resourcequota`: fills each ResourceQuota's status.hard and status.used, counting again every `syncPeriodMs` (--resource-quota-sync-period). */
    resourceQuota?: { syncPeriodMs: number };
  };
}

export interface LeaderElectionOptions extends Omit<ElectionConfig, 'identity' | 'exclusive'> {
  readonly enabled: boolean;
  /** Default `<hostname>_<uuid>`. */
  readonly identity?: string;
}

/** What the serving side sees of the election. */
export interface LeaderElectionStatus {
  readonly identity: string;
  isLeading(): boolean;
  /** kube's `leaderElection` health check (in /livez and /healthz): fails only while the elector is stuck. */
  check(): void;
}

/** kube's NewLeaderHealthzAdaptor(20 s): how long past the lease duration a leader may go without renewing. */
const LEADER_HEALTH_TOLERANCE_MS = 20_000;

export interface RunningCoreBackend {
  readonly backend: CoreBackend;
  /** The registry in force (CustomResourceDefinitions included). */
  readonly registry: LiveRegistry;
  /** Read access for gateway components in the same process. */
  readonly objects: ObjectSource;
  /** Health of the backing store. */
  checkStore(): Promise<void>;
  /**
   * The controller-facing status write (the aggregation availability controller):
   * `mutate` gets the current status and returns the new one, or null for no change.
   * Retries on conflicts; undefined when the object does not exist.
   */
  updateStatus(
    group: string,
    resource: string,
    namespace: string,
    name: string,
    mutate: (status: Record<string, unknown> | undefined) => Record<string, unknown> | null,
  ): Promise<KObject | undefined>;
  /**
   * Makes writes run these admission plugins (kube's plugin initializers: the
   * front door's authorizers exist only once the backend serves their objects).
   * Until then, writes run the built-in plugins alone.
   */
  useAdmission(admission: Admission): void;
  /** Post-start tasks, by name. */
  readonly hooks: ReadonlyArray<{ name: string; run: () => Promise<void> }>;
  /** Present while leader election is on. */
  readonly leaderElection?: LeaderElectionStatus;
  /**
   * Shutdown has begun: the leader-only controllers stop and a held lease is released
   * (client-go's ReleaseOnCancel), so another process takes over while this one drains.
   */
  stopControllers(): Promise<void>;
  close(): Promise<void>;
}

export async function startCoreBackend(opts: CoreBackendOptions): Promise<RunningCoreBackend> {
  const clock = opts.clock ?? Date.now;
  const raw = await openStore({
    backend: opts.storageBackend,
    dir: opts.storeDir ?? join(opts.dataDir, 'store'),
    historyWindowMs: opts.historyWindowMs,
    clock,
    ...(opts.storageBackend === 'redis' ? { redisUrl: opts.redisUrl, prefix: opts.storagePrefix, log: opts.log, traceCommands: opts.traceStore === true } : {}),
  });
  const stopSyncFigures = raw instanceof FileStore ? countFileSyncs(() => raw.syncStats()) : () => undefined;
  const sized = sizedStore(raw);
  const stopSizeFigures = sized ? countStorageSize(sized.clusterId, () => sized.sizeBytes()) : () => undefined;
  const live = opts.registry instanceof LiveRegistry ? opts.registry : new LiveRegistry(opts.registry);
  // Every write in kube's key order (keyorder.ts), whoever makes it: handlers, controllers, the gateway's status writes.
  const store: Store = keyOrderedStore(instrumentedStore(raw), () => live.current);
  let webhooks: ConversionWebhooks | undefined;
  let admission = BUILTIN_ADMISSION;
  const env: CoreEnv = {
    store,
    live,
    get registry() {
      return live.current;
    },
    clock,
    log: opts.log,
    tooLargeWaitMs: opts.tooLargeWaitMs ?? 3000,
    bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 60_000,
    minRequestTimeoutS: opts.minRequestTimeoutS ?? 1800,
    bodyLimit: opts.bodyLimit,
    watches: new Set(),
    get conversion() {
      return (webhooks ??= conversionWebhooks(env));
    },
    get admission() {
      return admission;
    },
    get admissionWebhooks() {
      return admissionWebhooks;
    },
    get admissionPolicies() {
      return admissionPolicies;
    },
    get namespacePolicies() {
      return namespacePolicies;
    },
    cbor: opts.cbor === true,
    ...(opts.tokens ? { tokens: opts.tokens } : {}),
    ...(opts.onListed ? { onListed: opts.onListed } : {}),
    ...(opts.allowUnsafeMalformedObjectDeletion ? { allowUnsafeMalformedObjectDeletion: true } : {}),
  };
  // Admission webhook configurations: read before the first request, then kept by a watch.
  const admissionWebhooks = opts.builtins !== false ? new WebhookConfigurations(env) : undefined;
  await admissionWebhooks?.start();
  // ValidatingAdmissionPolicies and their bindings: the same, read before the first request.
  const admissionPolicies = opts.builtins !== false ? new PolicyCache(storeObjectSource(env), opts.log) : undefined;
  await admissionPolicies?.ready;
  // LimitRanges and ResourceQuotas by namespace: the same, read before the first request.
  const namespacePolicies = opts.builtins !== false ? new NamespacePolicies(storeObjectSource(env), opts.log) : undefined;
  await namespacePolicies?.ready;
  const backend = new CoreBackend(env, opts.traceStore ? opts.storageBackend : undefined);
  const stopCounting = countStoredObjects(store, () => env.registry);
  const builtinTypes = live.current;
  // Custom resources: every process serves the Established CRDs of the store from the first request on.
  const crdSync = opts.builtins !== false ? new CrdRegistrySync({ source: storeObjectSource(env), live, base: builtinTypes, log: opts.log }) : undefined;
  await crdSync?.start();
  const builtins = opts.builtins !== false;
  const le = opts.leaderElection;
  // Leader-only controllers write through a fenced store: refused unless this process still leads.
  let leaderOnly: LeaderOnlyControllers | undefined;
  const elector =
    builtins && le?.enabled
      ? new LeaderElector(
          { ...le, identity: le.identity ?? holderIdentity(), exclusive: opts.storageBackend !== 'redis' },
          { store, leases, clock, log: opts.log },
          { onStartedLeading: () => leaderOnly?.startAll(), onStoppedLeading: () => leaderOnly?.stopAll() },
        )
      : undefined;
  leaderOnly = new LeaderOnlyControllers(elector, opts.log);
  const lenv: CoreEnv = elector ? (Object.create(env, { store: { value: fencedStore(store, () => elector.isLeading()), enumerable: true } }) as CoreEnv) : env;
  // kube-controller-manager's controllers: on the leader only.
  const namespaces = new NamespaceController(lenv);
  const controllers: WatchingController[] = [];
  const c = opts.controllers ?? {};
  if (c.serviceAccountToken && opts.tokens) controllers.push(new ServiceAccountTokenController(lenv, opts.tokens.signer, c.serviceAccountToken.caPem));
  if (c.defaultServiceAccount) controllers.push(new DefaultServiceAccountController(lenv));
  if (c.rootCaPublisher) controllers.push(new RootCaPublisher(lenv, c.rootCaPublisher.caPem));
  if (c.tokenCleaner) controllers.push(new TokenCleaner(lenv));
  if (c.bootstrapSigner) controllers.push(new BootstrapSigner(lenv, c.bootstrapSigner));
  if (c.csrSigning) controllers.push(new CsrSigningController(lenv, c.csrSigning));
  if (c.csrApproving) controllers.push(new CsrApprovingController(lenv));
  if (c.csrCleaner) controllers.push(new CsrCleaner(lenv));
  if (builtins && c.resourceQuota) controllers.push(new ResourceQuotaController(lenv, c.resourceQuota.syncPeriodMs));
  // kube-controller-manager's `garbagecollector`: ownerReferences across every stored type.
  if (builtins) controllers.push(new GarbageCollector(lenv));
  // apiextensions-apiserver's naming, establishing and finalizing controllers, and kube-aggregator's crdregistration.
  if (builtins) controllers.push(new CrdController(lenv, builtinTypes));
  // Each FlowSchema's Dangling condition: one writer for the fleet.
  if (builtins) controllers.push(new FlowSchemaStatusController(lenv));
  // kube-controller-manager's validatingadmissionpolicy-status: each policy's status.typeChecking.
  if (builtins) controllers.push(new PolicyStatusController(lenv));
  // The server identity leases left expired are collected by the leader.
  if (builtins && opts.identityLease) controllers.push(new IdentityLeaseCollector(lenv));
  // The default RBAC policy (every server), then aggregation over it (the leader; its hook waits for the defaults, so readiness sees filled roles).
  let rbacDefaults: Promise<void> | undefined;
  const reconcileRbac = () => (rbacDefaults ??= bootstrapRbac(env));
  // A generic backend (no built-in types) has no RBAC roles to aggregate.
  const aggregation = builtins ? new ClusterRoleAggregationController(lenv) : undefined;
  const apf = builtins ? new ApfBootstrap(env) : undefined;
  const identity = builtins && opts.identityLease ? new IdentityLease(env, opts.identityLease) : undefined;
  const leaderHooks: Array<{ name: string; run: () => Promise<void> }> = [];
  const leaderOnlyHook = (hookName: string, ctl: LeaderOnlyController) => {
    leaderOnly.add(ctl);
    leaderHooks.push({ name: hookName, run: leaderOnly.hook(ctl.name) });
  };
  if (builtins) {
    leaderOnlyHook('start-namespace-controller', { name: 'namespace', start: () => namespaces.start(), stop: () => namespaces.stop() });
    if (aggregation)
      leaderOnlyHook('start-clusterrole-aggregation-controller', {
        name: 'clusterrole-aggregation',
        start: async () => {
          await reconcileRbac().catch(() => undefined);
          await aggregation.start();
        },
        stop: () => aggregation.stop(),
      });
    for (const ctl of controllers) leaderOnlyHook(`start-${ctl.name}-controller`, ctl);
  }
  const stopControllers = async () => {
    await elector?.stop(true);
    leaderOnly.stopAll();
  };
  const local = opts.autoregister;
  return {
    backend,
    registry: live,
    objects: storeObjectSource(env),
    checkStore: () => store.check(),
    useAdmission: (a) => {
      admission = a;
    },
    updateStatus: (group, resource, namespace, name, mutate) => {
      const version = env.registry.group(group)?.preferredVersion ?? 'v1';
      const t = env.registry.lookup(group, version, resource);
      if (!t) return Promise.reject(new Error(`no served type ${resource}${group ? `.${group}` : ''}`));
      return guaranteedUpdate(store, objectKey(t, namespace, name), (cur) => {
        const status = mutate(cur['status'] as Record<string, unknown> | undefined);
        return status === null ? null : (prepareUpdate(t, { ...structuredClone(cur), status }, cur, 'status') ?? null);
      });
    },
    hooks: builtins
      ? [
          { name: 'bootstrap-namespaces', run: () => ensureDefaultNamespaces(env) },
          { name: 'rbac/bootstrap-roles', run: reconcileRbac },
          { name: 'scheduling/bootstrap-system-priority-classes', run: () => ensureSystemPriorityClasses(env) },
          ...(apf ? [{ name: 'priority-and-fairness-config-producer', run: () => apf.start() }] : []),
          ...(identity ? [{ name: 'start-kube-apiserver-identity-lease-controller', run: () => identity.start() }] : []),
          ...(elector
            ? [
                {
                  name: 'start-controller-leader-election',
                  run: async () => {
                    elector.start();
                    await elector.firstAttempt;
                  },
                },
              ]
            : []),
          ...leaderHooks,
          ...(local ? [{ name: 'start-kube-apiserver-autoregistration', run: () => autoregister(env, local) }] : []),
        ]
      : [],
    ...(elector
      ? {
          leaderElection: {
            identity: elector.identity,
            isLeading: () => elector.isLeading(),
            check: () => elector.check(LEADER_HEALTH_TOLERANCE_MS),
          },
        }
      : {}),
    stopControllers,
    async close() {
      await stopControllers();
      identity?.stop();
      crdSync?.stop();
      admissionWebhooks?.stop();
      admissionPolicies?.stop();
      namespacePolicies?.stop();
      apf?.stop();
      backend.closeWatches();
      webhooks?.close();
      stopCounting();
      stopSyncFigures();
      stopSizeFigures();
      await store.close();
    },
  };
}

async function ensureDefaultNamespaces(env: CoreEnv): Promise<void> {
  const t = namespaceType(env.registry);
  for (const name of DEFAULT_NAMESPACES) {
    const key = objectKey(t, '', name);
    if (await env.store.get(key)) continue;
    const obj = prepareCreate(t, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, env.clock());
    try {
      await env.store.create(key, obj);
    } catch (err) {
      if (!(err instanceof StoreError && err.code === 'exists')) throw err;
    }
  }
}
