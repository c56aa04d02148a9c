// The aggregation layer, composed once per start: informers over the
// APIServices, Services, EndpointSlices and Endpoints (through an
// ObjectSource: the in-process store or a remote core backend), one
// ApiServiceProxy per remote APIService, the availability controller and the
// merged discovery. The gateway asks `route(group, version)` in dispatch.
import type { ObjectSource } from '../../lib/api/objectsource.js';
import type { KObject } from '../../lib/api/meta.js';
import type { RegistrySource } from '../../lib/registry/live.js';
import type { HealthCheck } from '../health/checks.js';
import type { DiscoverySource } from '../local/router.js';
import { readApiService } from './apiservice.js';
import { AvailabilityController, type StatusWriter } from './availability.js';
import { localGroupVersions, MergedDiscovery } from './discovery.js';
import type { IdentityHeaders } from '../pipeline/identityheaders.js';
import { Informer } from './informer.js';
import type { ApiServiceProxy, ProxyEnv } from './proxy.js';
import { ApiServiceRoutes } from './routes.js';
import { ServiceResolver } from './resolver.js';
import type { ProxyClientCert } from './transport.js';

export type { LocalGroupVersion } from './discovery.js';
export { localGroupVersions } from './discovery.js';
export type { ProxyClientCert } from './transport.js';
export type { StatusWriter } from './availability.js';
export { withAvailableCondition } from './availability.js';
export { ApiServiceProxy } from './proxy.js';

export interface AggregationOptions {
  readonly objects: ObjectSource;
  /** The registry in force: its group versions are the local ones (custom resources come and go). */
  readonly registry: RegistrySource;
  readonly localDiscovery: DiscoverySource;
  /** The front-proxy client certificate presented to backends. */
  readonly clientCert: ProxyClientCert | undefined;
  /** The identity headers the chain strips after authentication; stripped again before forwarding. */
  readonly identityHeaders: IdentityHeaders;
  readonly writeStatus: StatusWriter;
  /** Whether autoregister finished (the core backend's post-start hook). */
  readonly autoregisterDone: () => boolean;
  readonly log: (msg: string) => void;
  readonly clock?: () => number;
  readonly timeoutMs?: number;
  readonly probeIntervalMs?: number;
}

export interface Aggregation {
  readonly discovery: MergedDiscovery;
  /** The proxy of a remote group version; undefined when it is served locally (or not at all). */
  route(group: string, version: string): ApiServiceProxy | undefined;
  /** /readyz `autoregister-completion`: every local group version has its APIService. */
  readonly completion: HealthCheck;
  stop(): void;
}

export function startAggregation(o: AggregationOptions): Aggregation {
  const log = o.log;
  const routes = new ApiServiceRoutes();
  // The group versions served at start: autoregister-completion waits for their APIServices.
  const local = localGroupVersions(o.registry.current);

  // Built first, so the informer callbacks below find everything they use, whatever order changes arrive in.
  const informer = (group: string, resource: string) => new Informer({ objects: o.objects, group, resource, log });
  const apiservices = informer('apiregistration.k8s.io', 'apiservices');
  const services = informer('', 'services');
  const slices = informer('discovery.k8s.io', 'endpointslices');
  const endpoints = informer('', 'endpoints');
  const resolver = new ServiceResolver(services, slices, endpoints);
  const availability = new AvailabilityController({
    proxy: (n) => routes.get(n),
    names: () => routes.names(),
    resolver,
    write: o.writeStatus,
    log,
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.probeIntervalMs !== undefined ? { intervalMs: o.probeIntervalMs } : {}),
  });
  const env: ProxyEnv = {
    resolver,
    clientCert: o.clientCert,
    identityHeaders: o.identityHeaders,
    timeoutMs: o.timeoutMs ?? 60_000,
    log,
    onBackendFailure: (name) => availability.enqueue(name),
  };
  const discovery = new MergedDiscovery({ local: o.localDiscovery, registry: o.registry, proxies: () => routes.proxies(), resolver, log });

  // Local APIServices not yet seen. As kube's autoregister-completion check, a
  // latch: once each was seen, later deletes (a user's, or a store that lost
  // its data) do not fail readiness, since the group versions are still served.
  const pending = new Set(local.map((l) => `${l.version}.${l.group}`));
  const onApiService = (obj: KObject, type: string) => {
    if (type !== 'DELETED') pending.delete(obj.metadata.name ?? '');
    const change = routes.apply(readApiService(obj), type === 'DELETED', env);
    if (change.probe) availability.enqueue(change.probe);
    if (change.discovery) discovery.changed(change.proxy);
  };
  // A Service or its endpoints changed: any APIService may point at it.
  const enqueueAll = () => {
    for (const n of routes.names()) availability.enqueue(n);
  };
  for (const i of [services, slices, endpoints]) i.start(enqueueAll);
  apiservices.start(onApiService);
  availability.start();
  discovery.start();

  const completion: HealthCheck = {
    name: 'autoregister-completion',
    check: () => {
      if (!o.autoregisterDone()) throw new Error('autoregister has not finished');
      if (pending.size > 0) throw new Error(`missing APIService: ${[...pending].sort().join(', ')}`);
    },
  };

  return {
    discovery,
    route: (group, version) => routes.route(group, version),
    completion,
    stop() {
      availability.stop();
      discovery.stop();
      for (const i of [services, slices, endpoints, apiservices]) i.stop();
      routes.close();
    },
  };
}
