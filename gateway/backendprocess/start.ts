// `gatehouse sample-backend` and `gatehouse core-backend`: a backend as its
// own process behind the gateway, on the gateway's front door (server.ts).
// Flags are `gatehouse serve`'s (one table); the ones a backend reads are
// listed in flags.ts and every other one is refused at start. Besides
// serving, storage and request-header authentication: delegated
// authorization (--authorization-webhook-*), the in-flight limits, the
// request timeout, --tracing-config-file (spans of the backend's own request
// handling and store calls, parented by the traceparent the gateway sends;
// service.name is the command's name) and the --audit-* flags (the backend's
// own audit log or webhook, as kube's aggregated apiservers have; events
// carry the Audit-ID the gateway forwards).
import { fixedRegistry, LiveRegistry } from '../../lib/registry/live.js';
import { startCoreBackend } from '../../backends/core/index.js';
import { sampleRegistry, startSampleBackend } from '../../backends/sample/index.js';
import type { ServeOptions } from '../config/flags.js';
import { startBackendServer, type RunningBackendServer } from './server.js';
import { localGroupVersions } from '../aggregation/index.js';
import { readFile } from 'node:fs/promises';
import { controllerEnabled } from '../config/flags.js';
import { servedRegistry } from '../config/runtimeconfig.js';
import { loadServiceAccountSetup } from '../server/tokenmethods.js';
import { csrControllers, electionOptions, startOwnAdmission } from '../server/backends.js';
import { buildTracing } from '../tracing/index.js';
import { buildAuditor } from '../audit/index.js';
import type { BackendKind } from './flags.js';

export async function startBackendProcess(kind: BackendKind, opts: ServeOptions, log: (msg: string) => void): Promise<RunningBackendServer> {
  // A tracing file that does not parse stops the start before the store opens.
  const tracing = await buildTracing(opts, { log, clock: Date.now, serviceName: kind });
  const auditor = await buildAuditor(opts, log);
  const traceStore = tracing !== undefined;
  if (kind === 'sample-backend') {
    const backend = await startSampleBackend({
      storageBackend: opts.storageBackend,
      dataDir: opts.dataDir,
      historyWindowMs: opts.watchHistoryMs,
      bodyLimit: opts.maxRequestBodyBytes,
      log,
      traceStore,
      ...(opts.storageBackend === 'redis' && opts.redisUrl ? { redisUrl: opts.redisUrl, storagePrefix: opts.storagePrefix } : {}),
    });
    return startBackendServer({ opts, registry: fixedRegistry(sampleRegistry()), backend, name: kind, log, tracing, auditor });
  }
  // The registry in force (as --runtime-config leaves the built-ins): the core backend swaps it as CustomResourceDefinitions change.
  const registry = new LiveRegistry(servedRegistry(opts.runtimeConfig));
  // TokenRequest and the token controllers run here (the writing side); the gateway verifies the tokens,
  // so both must be given the same --service-account-* keys and issuer (dev mode: the same data directory's sa.key).
  const serviceAccounts = await loadServiceAccountSetup(opts);
  for (const note of serviceAccounts.notes) log(note);
  const caPem = opts.clientCaFiles[0] ? await readFile(opts.clientCaFiles[0], 'utf8') : opts.tlsCertFile ? await readFile(opts.tlsCertFile, 'utf8') : '';
  const backend = await startCoreBackend({
    registry,
    storageBackend: opts.storageBackend,
    dataDir: opts.dataDir,
    historyWindowMs: opts.watchHistoryMs,
    bodyLimit: opts.maxRequestBodyBytes,
    log,
    ...(opts.storageBackend === 'redis' ? { redisUrl: opts.redisUrl, storagePrefix: opts.storagePrefix } : {}),
    autoregister: localGroupVersions(registry.current),
    minRequestTimeoutS: opts.minRequestTimeoutS,
    tokens: serviceAccounts.issuing,
    cbor: opts.featureGates.CBORServingAndStorage,
    traceStore,
    controllers: {
      ...(controllerEnabled(opts, 'serviceaccount-token') ? { serviceAccountToken: { caPem } } : {}),
      tokenCleaner: controllerEnabled(opts, 'tokencleaner'),
      ...csrControllers(opts, log),
    },
    ...electionOptions(opts),
  });
  return startBackendServer({
    opts,
    registry,
    backend,
    name: kind,
    log,
    tracing,
    auditor,
    admission: (authorizer) => startOwnAdmission(opts, backend, authorizer, log),
  });
}
