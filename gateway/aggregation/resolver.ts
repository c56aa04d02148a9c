// Service → endpoint resolution, as kube-aggregator's endpoint routing does
// (ResolveEndpoint): the Service must exist and listen on the APIService's
// port; ExternalName services resolve to their name; otherwise a ready
// address of the Service's EndpointSlices (label kubernetes.io/service-name),
// or of its Endpoints when it has no slices, carrying the port of the same
// name. Successive calls spread over the ready addresses (round robin).
// Address lists are derived from the informers' caches and rebuilt only
// when one of them changed.
import type { KObject } from '../../lib/api/meta.js';
import type { Informer } from './informer.js';
import type { ServiceRef } from './apiservice.js';

export type ResolveFailure = { readonly reason: 'ServiceNotFound' | 'ServicePortError' | 'MissingEndpoints'; readonly message: string };
export interface Target { readonly host: string; readonly port: number }
export type Resolution = { readonly targets: readonly Target[] } | ResolveFailure;

const obj = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? v as Record<string, unknown> : {});
const arr = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.map(obj) : []);
const str = (v: unknown) => (typeof v === 'string' ? v : '');

export class ServiceResolver {
  readonly #memo = new Map<string, { gen: string; r: Resolution; next: number }>();

  constructor(private readonly services: Informer, private readonly slices: Informer, private readonly endpoints: Informer) {}

  /** One target (rotating), or why there is none. */
  pick(ref: ServiceRef): Target | ResolveFailure {
    const m = this.#entry(ref);
    if (!('targets' in m.r)) return m.r;
    const t = m.r.targets[m.next % m.r.targets.length]!;
    m.next = (m.next + 1) % m.r.targets.length;
    return t;
  }

  resolve(ref: ServiceRef): Resolution {
    return this.#entry(ref).r;
  }

  #entry(ref: ServiceRef): { gen: string; r: Resolution; next: number } {
    const key = `${ref.namespace}/${ref.name}:${ref.port}`;
    const gen = `${this.services.generation}.${this.slices.generation}.${this.endpoints.generation}`;
    let m = this.#memo.get(key);
    if (!m || m.gen !== gen) {
      m = { gen, r: this.#compute(ref), next: m?.next ?? 0 };
      this.#memo.set(key, m);
    }
    return m;
  }

  #compute(ref: ServiceRef): Resolution {
    const svc = this.services.get(ref.namespace, ref.name);
    if (!svc) return { reason: 'ServiceNotFound', message: `service/${ref.name} in "${ref.namespace}" is not present` };
    const spec = obj(svc['spec']);
    if (spec['type'] === 'ExternalName') {
      const host = str(spec['externalName']);
      return host ? { targets: [{ host, port: ref.port }] } : { reason: 'ServiceNotFound', message: `service/${ref.name} in "${ref.namespace}" has no externalName` };
    }
    const port = arr(spec['ports']).find((p) => p['port'] === ref.port);
    if (!port) return { reason: 'ServicePortError', message: `service/${ref.name} in "${ref.namespace}" is not listening on port ${ref.port}` };
    const portName = str(port['name']);
    const targets = this.#fromSlices(ref, portName) ?? this.#fromEndpoints(ref, portName);
    if (targets.length === 0) return { reason: 'MissingEndpoints', message: `endpoints for service/${ref.name} in "${ref.namespace}" have no addresses with port name "${portName}"` };
    return { targets };
  }

  /** Undefined when the service has no slices at all (then Endpoints decide). */
  #fromSlices(ref: ServiceRef, portName: string): Target[] | undefined {
    const mine = this.slices.list(ref.namespace).filter((s: KObject) => s.metadata.labels?.['kubernetes.io/service-name'] === ref.name);
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

  #fromEndpoints(ref: ServiceRef, portName: string): Target[] {
    const ep = this.endpoints.get(ref.namespace, ref.name);
    const out: Target[] = [];
    for (const subset of arr(ep?.['subsets'])) {
      const p = arr(subset['ports']).find((x) => str(x['name']) === portName);
      if (!p || typeof p['port'] !== 'number') continue;
      for (const a of arr(subset['addresses'])) if (str(a['ip'])) out.push({ host: str(a['ip']), port: p['port'] });
    }
    return out;
  }
}
