// Service → endpoint resolution for APIServices over the informers' caches
// (lib/api/servicetargets.ts computes it, as kube-aggregator's
// ResolveEndpoint does). Successive calls spread over the ready addresses
// (round robin). Address lists are recomputed only when one of the
// informers changed.
import { serviceTargets, type Resolution, type ResolveFailure, type ServiceRef, type Target } from '../../lib/api/servicetargets.js';
import type { Informer } from './informer.js';

export type { Resolution, ResolveFailure, Target } from '../../lib/api/servicetargets.js';

export class ServiceResolver {
  readonly #memo = new Map<string, { gen: string; r: Resolution; next: number }>();

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
    return serviceTargets(ref, {
      service: this.services.get(ref.namespace, ref.name),
      slices: this.slices.list(ref.namespace),
      endpoints: this.endpoints.get(ref.namespace, ref.name),
    });
  }
}
