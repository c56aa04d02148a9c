// Service → endpoint addresses, as kube-aggregator's endpoint routing
// (ResolveEndpoint) computes them: the Service must exist and listen on the
// asked port; ExternalName services resolve to their name; otherwise the
// ready addresses of the Service's EndpointSlices (label
// kubernetes.io/service-name), or of its Endpoints when it has no slices,
// carrying the port of the same name. A pure function of the objects, so the
// gateway (over its informers) and the core backend (over its store: CRD
// conversion webhooks) resolve the same way.
import type { KObject } from './meta.js';

export interface ServiceRef {
  readonly namespace: string;
  readonly name: string;
  /** The Service port (default 443 in every kube API that names one). */
  readonly port: number;
}

export type ResolveFailure = { readonly reason: 'ServiceNotFound' | 'ServicePortError' | 'MissingEndpoints'; readonly message: string };
export interface Target {
  readonly host: string;
  readonly port: number;
}
export type Resolution = { readonly targets: readonly Target[] } | ResolveFailure;

/** What resolution reads: the Service, the EndpointSlices of its namespace, its Endpoints. */
export interface ServiceObjects {
  readonly service: KObject | undefined;
  readonly slices: readonly KObject[];
  readonly endpoints: KObject | undefined;
}

const obj = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const arr = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.map(obj) : []);
const str = (v: unknown) => (typeof v === 'string' ? v : '');

export function serviceTargets(ref: ServiceRef, o: ServiceObjects): Resolution {
  const svc = o.service;
  if (!svc) return { reason: 'ServiceNotFound', message: `service/${ref.name} in "${ref.namespace}" is not present` };
  const spec = obj(svc['spec']);
  if (spec['type'] === 'ExternalName') {
    const host = str(spec['externalName']);
    return host
      ? { targets: [{ host, port: ref.port }] }
      : { reason: 'ServiceNotFound', message: `service/${ref.name} in "${ref.namespace}" has no externalName` };
  }
  const port = arr(spec['ports']).find((p) => p['port'] === ref.port);
  if (!port) return { reason: 'ServicePortError', message: `service/${ref.name} in "${ref.namespace}" is not listening on port ${ref.port}` };
  const portName = str(port['name']);
  const targets = fromSlices(ref, o.slices, portName) ?? fromEndpoints(o.endpoints, portName);
  if (targets.length === 0)
    return { reason: 'MissingEndpoints', message: `endpoints for service/${ref.name} in "${ref.namespace}" have no addresses with port name "${portName}"` };
  return { targets };
}

/** Undefined when the service has no slices at all (then Endpoints decide). */
function fromSlices(ref: ServiceRef, slices: readonly KObject[], portName: string): Target[] | undefined {
  const mine = slices.filter((s) => s.metadata.namespace === ref.namespace && s.metadata.labels?.['kubernetes.io/service-name'] === ref.name);
  if (mine.length === 0) return undefined;
  const out: Target[] = [];
  for (const s of mine) {
    const p = arr(s['ports']).find((x) => str(x['name']) === portName);
    if (!p || typeof p['port'] !== 'number') continue;
    for (const e of arr(s['endpoints'])) {
      if (obj(e['conditions'])['ready'] === false) continue;
      const addr = Array.isArray(e['addresses']) ? str(e['addresses'][0]) : '';
      if (addr) out.push({ host: addr, port: p['port'] });
    }
  }
  return out;
}

function fromEndpoints(ep: KObject | undefined, portName: string): Target[] {
  const out: Target[] = [];
  for (const subset of arr(ep?.['subsets'])) {
    const p = arr(subset['ports']).find((x) => str(x['name']) === portName);
    if (!p || typeof p['port'] !== 'number') continue;
    for (const a of arr(subset['addresses'])) if (str(a['ip'])) out.push({ host: str(a['ip']), port: p['port'] });
  }
  return out;
}
