// Service → endpoint resolution for APIServices over the informers' caches
// (lib/api/servicetargets.ts computes it, as kube-aggregator's
// ResolveEndpoint does). Successive calls spread over the ready addresses
// (round robin). Address lists are recomputed only when one of the
// informers changed.
import { serviceTargets, type Resolution, type ResolveFailure, type ServiceRef, type Target } from '../../lib/api/servicetargets.js';
import type { Informer } from './informer.js';

export type { Resolution, ResolveFailure, Target } from '../../lib/api/servicetargets.js';

interface Entry {
  /** The informers' generations `r` was computed at. */
  services: number;
  slices: number;
  endpoints: number;
  r: Resolution;
  next: number;
}

export class ServiceResolver {
  readonly #memo = new Map<string, Entry>();
  /**
   * The entry of each (frozen) ServiceRef an APIService snapshot holds: no key string built, flattened and hashed,
   * nor a generation string, per proxied request (~2.7k instructions of ~400k: proxied-get-cuts.md).
   */
  readonly #byRef = new WeakMap<ServiceRef, Entry>();

  constructor(
    private readonly services: Informer,
    private readonly slices: Informer,
    private readonly endpoints: Informer,
  ) {}

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

  #entry(ref: ServiceRef): Entry {
    const { services, slices, endpoints } = this;
    let m = this.#byRef.get(ref);
    if (m === undefined) {
      // Refs equal by value share one entry (and its rotation): an APIService's update hands out a new ref.
      const key = `${ref.namespace}/${ref.name}:${ref.port}`;
      m = this.#memo.get(key);
      if (m === undefined) {
        m = { services: services.generation, slices: slices.generation, endpoints: endpoints.generation, r: this.#compute(ref), next: 0 };
        this.#memo.set(key, m);
      }
      // Only a ref that cannot change afterwards (ApiServiceInfo's are frozen) is remembered by identity.
      if (Object.isFrozen(ref)) this.#byRef.set(ref, m);
    }
    if (m.services !== services.generation || m.slices !== slices.generation || m.endpoints !== endpoints.generation) {
      m.services = services.generation;
      m.slices = slices.generation;
      m.endpoints = endpoints.generation;
      m.r = this.#compute(ref);
    }
    return m;
  }

  #compute(ref: ServiceRef): Resolution {
    return serviceTargets(ref, {
      service: this.services.get(ref.namespace, ref.name),
      slices: this.slices.list(ref.namespace),
      endpoints: this.endpoints.get(ref.namespace, ref.name),
    });
  }
}
