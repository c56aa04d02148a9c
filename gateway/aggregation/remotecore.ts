// `gatehouse serve --core-backend-url=https://… --core-backend-ca-file=…`:
// the built-in groups are served by a remote `gatehouse core-backend` instead
// of in-process. This builds what the composition root otherwise gets from
// startCoreBackend, over HTTPS:
//   - `backend`: resource requests for built-in groups proxied like a remote
//     APIService (forward.ts, identity.ts's stripping and
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
import { Agent, request } from 'node:https';
import type { OutgoingHttpHeaders } from 'node:http';
import type { ApiBackend, BackendRequest } from '../../lib/api/backend.js';
import type { KObject } from '../../lib/api/meta.js';
import { serviceUnavailable, StatusError } from '../../lib/api/status.js';
import { retryOnConflict, RETRY } from '../../lib/api/retry.js';
import type { LiveRegistry } from '../../lib/registry/live.js';
import { CrdRegistrySync } from '../../lib/crd/registrysync.js';
import { HttpError, HttpObjectSource } from '../../lib/client/objectsource.js';
import type { RunningCoreBackend } from '../../backends/core/index.js';
import { identityHeaders, stripForwarded } from './identity.js';
import type { IdentityHeaders } from '../pipeline/identityheaders.js';
import { forward } from './forward.js';
import { backendAgent, type ProxyClientCert } from './transport.js';

/** What the composition root needs of the core backend, in-process or remote (which admits its own writes: no useAdmission). */
export type GatewayCore = Omit<RunningCoreBackend, 'backend' | 'useAdmission'> & {
  readonly backend: ApiBackend & { closeWatches(): void };
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
  readonly agent: Agent;
  /** The gateway's own identity headers (GATEWAY_IDENTITY). */
  readonly headers: OutgoingHttpHeaders;
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/** Built-in resource requests, proxied; watches are long-running and closed at shutdown. */
function remoteBackend(o: RemoteCoreOptions, c: Connection): GatewayCore['backend'] {
  const timeoutMs = o.timeoutMs ?? 60_000;
  const watches = new Set<{ destroy(): void }>();
  const serves = (group: string, version: string): boolean =>
    group === '' ? o.registry.current.coreVersions().includes(version) : (o.registry.current.group(group)?.versions.includes(version) ?? false);
  const serve = (r: BackendRequest): Promise<void> => {
    stripForwarded(r.req, o.identityHeaders);
    const longRunning = r.info.verb === 'watch';
    if (longRunning) watches.add(r.res);
    r.res.once('close', () => watches.delete(r.res));
    return forward(
      r.req,
      r.res,
      { protocol: 'https:', host: hostOf(c.url), port: c.url.port || 443, agent: c.agent },
      {
        headers: identityHeaders(r.user),
        ...(r.body ? { body: r.body } : {}),
        ...(longRunning ? { flushHeaders: true } : { timeoutMs }),
        ...(r.initialized ? { onHeaders: r.initialized } : {}),
        rejectRedirects: true,
        purpose: 'core backend',
      },
    ).catch((err: Error) => {
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
  return () =>
    new Promise((resolve, reject) => {
      const req = request({ host: hostOf(c.url), port: c.url.port || 443, path: '/readyz', agent: c.agent, headers: c.headers, timeout: 5000 }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`core backend ${o.url}/readyz: HTTP ${res.statusCode}`))));
      });
      req.on('timeout', () => req.destroy(new Error(`core backend ${o.url}/readyz: no answer within 5s`)));
      req.on('error', (err) => reject(new Error(`core backend ${o.url}: ${err.message}`)));
      req.end();
    });
}

/** GET, then PUT …/status, again on a conflict (at most 5 times). */
function remoteStatusUpdate(objects: HttpObjectSource): GatewayCore['updateStatus'] {
  return async (group, resource, namespace, name, mutate) => {
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
  const headers: OutgoingHttpHeaders = identityHeaders(GATEWAY_IDENTITY);
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
  const c: Connection = { url: new URL(o.url), agent: backendAgent({ caPem: o.caPem, clientCert: o.clientCert }), headers };
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
      c.agent.destroy();
    },
  };
}
