// `gatehouse serve --core-backend-url=https://… --core-backend-ca-file=…`:
// the built-in groups are served by a remote `gatehouse core-backend` instead
// of in-process. This builds what the composition root otherwise gets from
// startCoreBackend, over HTTPS:
//   - `backend`: resource requests for built-in groups proxied like a remote
//     APIService (the pooled forwarder poolforward.ts, identity.ts's
//     X-Remote-* headers, the front-proxy client certificate); a failure
//     before the backend answered is a 503 Status;
//   - `objects`: lib/client/objectsource.ts (list+watch over HTTPS) for RBAC,
//     the Node graph, token lookups and the aggregation informers;
//   - `updateStatus`: GET + PUT …/status with conflict retries (APIService
//     availability);
//   - `checkStore`: the backend's /readyz.
// The gateway speaks to the backend as `system:kube-aggregator` in
// `system:masters` (the availability prober's identity): the backend's
// delegated SubjectAccessReview comes back to this gateway, whose
// system:masters bypass allows it without consulting RBAC — which itself is
// being read from that backend, so no start-up cycle can form. Writing
// controllers (namespace lifecycle, tokens, RBAC bootstrap, GC, autoregister)
// run in the core-backend process.
import type { OutgoingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import type { Pool } from 'undici';
import type { ApiBackend, BackendRequest, CreateAdmission } from '../../lib/api/backend.js';
import type { KObject } from '../../lib/api/meta.js';
import { serviceUnavailable, StatusError } from '../../lib/api/status.js';
import { retryOnConflict, RETRY } from '../../lib/api/retry.js';
import type { LiveRegistry } from '../../lib/registry/live.js';
import { CrdRegistrySync } from '../../lib/crd/registrysync.js';
import { HttpError, HttpObjectSource } from '../../lib/client/objectsource.js';
import type { RunningCoreBackend } from '../../backends/core/index.js';
import { identityPairs, notForwarded } from './identity.js';
import type { IdentityHeaders } from '../pipeline/identityheaders.js';
import { forwardPooled } from './poolforward.js';
import { backendPool, type ProxyClientCert } from './transport.js';

/** What the composition root needs of the core backend, in-process or remote (which admits its own writes: no useAdmission). */
export type GatewayCore = Omit<RunningCoreBackend, 'backend' | 'useAdmission' | 'stopControllers'> & {
  /** In-process only: a remote core backend runs (and stops) its own controllers. */
  readonly stopControllers?: RunningCoreBackend['stopControllers'];
  /** `admission`: in-process, the backend's admission for the creates the gateway answers itself (a remote one has its own). */
  readonly backend: ApiBackend & { closeWatches(): void; readonly admission?: CreateAdmission };
  readonly useAdmission?: RunningCoreBackend['useAdmission'];
};

export const GATEWAY_IDENTITY = Object.freeze({
  username: 'system:kube-aggregator',
  groups: Object.freeze(['system:masters', 'system:authenticated']) as string[],
});

export interface RemoteCoreOptions {
  readonly url: string;
  readonly caPem: string;
  readonly clientCert: ProxyClientCert | undefined;
  /** The gateway's registry in force: kept current from the remote backend's CustomResourceDefinitions. */
  readonly registry: LiveRegistry;
  /** The identity headers the chain strips after authentication; stripped again before forwarding. */
  readonly identityHeaders: IdentityHeaders;
  readonly log: (msg: string) => void;
  readonly timeoutMs?: number;
}

interface Connection {
  readonly url: URL;
  readonly pool: Pool;
  /** The gateway's own identity headers (GATEWAY_IDENTITY), flat pairs. */
  readonly pairs: readonly string[];
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/** Flat name/value pairs as a header object (repeated names become arrays). */
function headerObject(pairs: readonly string[]): OutgoingHttpHeaders {
  // Null prototype: a header name is data, `__proto__` included.
  const h: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const k = pairs[i]!;
    const had = h[k];
    h[k] = had === undefined ? pairs[i + 1]! : [...(Array.isArray(had) ? had : [had]), pairs[i + 1]!];
  }
  return h;
}

/** Built-in resource requests, proxied; watches are long-running and closed at shutdown. */
function remoteBackend(o: RemoteCoreOptions, c: Connection): GatewayCore['backend'] {
  const timeoutMs = o.timeoutMs ?? 60_000;
  const watches = new Set<{ destroy(): void }>();
  const drop = notForwarded(o.identityHeaders);
  const host = hostOf(c.url);
  const port = Number(c.url.port || 443);
  const target = { dispatcher: c.pool, origin: c.url.origin, host, port, servername: isIP(host) ? undefined : host };
  const serves = (group: string, version: string): boolean =>
    group === '' ? o.registry.current.coreVersions().includes(version) : (o.registry.current.group(group)?.versions.includes(version) ?? false);
  const serve = (r: BackendRequest): Promise<void> => {
    const longRunning = r.info.verb === 'watch';
    if (longRunning) watches.add(r.res);
    r.res.once('close', () => watches.delete(r.res));
    // Every key in PoolForwardOptions' order, no spreads: each key after a spread is a V8 runtime call (proxied-get-cuts.md).
    return forwardPooled(r, target, {
      set: identityPairs(r.user),
      setNames: undefined,
      drop,
      body: r.body,
      // A watch waits for events as long as it lasts; other requests fail after a silence of timeoutMs.
      headersTimeoutMs: longRunning ? 0 : timeoutMs,
      bodyTimeoutMs: longRunning ? 0 : timeoutMs,
      flushHeaders: longRunning,
      cancel: undefined,
      rejectRedirects: true,
      onHeaders: r.watchInitialized,
      onCut: undefined,
      purpose: 'core backend',
      trace: r.trace,
    }).catch((err: Error) => {
      if (err instanceof StatusError) throw err;
      o.log(`core backend: proxy to ${o.url} failed: ${err.message}`);
      throw serviceUnavailable(
        `the server is currently unable to handle the request: core backend ${o.url}: error trying to reach the core backend: ${err.message}`,
      );
    });
  };
  return {
    serves,
    serve,
    closeWatches: () => {
      for (const w of watches) w.destroy();
      watches.clear();
    },
  };
}

/** The store check of /readyz: the backend's own /readyz. */
function remoteReadyz(o: RemoteCoreOptions, c: Connection): () => Promise<void> {
  return async () => {
    const res = await c.pool
      .request({ origin: c.url.origin, path: '/readyz', method: 'GET', headers: c.pairs as string[], headersTimeout: 5000, bodyTimeout: 5000 })
      .catch((err: Error & { code?: string }) => {
        throw new Error(err.code === 'UND_ERR_HEADERS_TIMEOUT' ? `core backend ${o.url}/readyz: no answer within 5s` : `core backend ${o.url}: ${err.message}`);
      });
    await res.body.dump();
    if (res.statusCode !== 200) throw new Error(`core backend ${o.url}/readyz: HTTP ${res.statusCode}`);
  };
}

/** GET, then PUT …/status, again on a conflict (retryOnConflict's limit). */
function remoteStatusUpdate(objects: HttpObjectSource): GatewayCore['updateStatus'] {
  return (group, resource, namespace, name, mutate) => {
    const path = objects.objectPath(group, resource, namespace, name);
    return retryOnConflict<KObject | undefined>(
      async () => {
        const cur = await objects.get(group, resource, namespace, name);
        if (!cur) return undefined;
        const next = mutate((cur as { status?: Record<string, unknown> }).status);
        if (next === null) return cur;
        try {
          return (await objects.json('PUT', `${path}/status`, { ...cur, status: next })) as unknown as KObject;
        } catch (err) {
          if (err instanceof HttpError && err.status === 409) return RETRY;
          if (err instanceof HttpError && err.status === 404) return undefined;
          throw err;
        }
      },
      () => new Error(`status of ${resource} ${name}: conflicts on every attempt`),
      5,
    );
  };
}

export function startRemoteCore(o: RemoteCoreOptions): GatewayCore {
  if (!o.clientCert)
    throw new Error('--core-backend-url needs a front-proxy client certificate (--proxy-client-cert-file/--proxy-client-key-file, or the dev PKI)');
  const pairs = identityPairs(GATEWAY_IDENTITY);
  const headers = headerObject(pairs);
  const objects = new HttpObjectSource({
    server: o.url,
    caPem: o.caPem,
    clientCertPem: o.clientCert.certPem,
    clientKeyPem: o.clientCert.keyPem,
    headers,
    registry: o.registry,
    log: o.log,
  });
  // The remote backend's CustomResourceDefinitions extend this gateway's registry too (routing, discovery, OpenAPI).
  const crds = new CrdRegistrySync({ source: objects, live: o.registry, base: o.registry.current, log: o.log });
  void crds.start();
  const url = new URL(o.url);
  const c: Connection = { url, pool: backendPool(url.origin, { caPem: o.caPem, clientCert: o.clientCert }), pairs };
  return {
    objects,
    registry: o.registry,
    backend: remoteBackend(o, c),
    checkStore: remoteReadyz(o, c),
    updateStatus: remoteStatusUpdate(objects),
    hooks: [],
    async close() {
      crds.stop();
      objects.close();
      await c.pool.destroy().catch(() => undefined);
    },
  };
}
