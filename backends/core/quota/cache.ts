// The LimitRanges and ResourceQuotas of every namespace, kept by a watch
// (kube's listers for the LimitRanger and ResourceQuota plugins): a create in
// a namespace that has none of them is judged without a store read.
import type { KObject } from '../../../lib/api/meta.js';
import type { ObjectSource } from '../../../lib/api/objectsource.js';
import { Reflector, type ReflectedType } from '../../../lib/api/reflector.js';

const NONE: readonly KObject[] = Object.freeze([]);

/** One type's objects by namespace, then name. */
class ByNamespace implements ReflectedType {
  readonly group = '';
  private readonly byNs = new Map<string, Map<string, KObject>>();
  constructor(readonly resource: string) {}

  reset(items: readonly KObject[]): void {
    this.byNs.clear();
    for (const o of items) this.set(o);
  }
  set(obj: KObject): void {
    const ns = obj.metadata.namespace ?? '';
    let m = this.byNs.get(ns);
    if (!m) this.byNs.set(ns, (m = new Map()));
    m.set(obj.metadata.name ?? '', obj);
  }
  remove(obj: KObject): void {
    const ns = obj.metadata.namespace ?? '';
    const m = this.byNs.get(ns);
    m?.delete(obj.metadata.name ?? '');
    if (m?.size === 0) this.byNs.delete(ns);
  }
  in(namespace: string): readonly KObject[] {
    const m = this.byNs.get(namespace);
    return m ? [...m.values()] : NONE;
  }
  has(namespace: string): boolean {
    return this.byNs.has(namespace);
  }
}

export class NamespacePolicies {
  private readonly limits = new ByNamespace('limitranges');
  private readonly quotas = new ByNamespace('resourcequotas');
  private readonly reflector: Reflector;
  /** Resolves once both types were listed (a failed list is retried). */
  readonly ready: Promise<void>;

  constructor(source: ObjectSource, log: (msg: string) => void) {
    this.reflector = new Reflector(source, [this.limits, this.quotas], { who: 'quota admission', log, retryMs: 200, maxRetryMs: 5000, retryFirstList: true });
    this.ready = this.reflector.start();
  }

  limitRanges(namespace: string): readonly KObject[] {
    return this.limits.in(namespace);
  }

  hasQuotas(namespace: string): boolean {
    return this.quotas.has(namespace);
  }

  /** The namespace's ResourceQuotas as the watch last delivered them. */
  resourceQuotas(namespace: string): readonly KObject[] {
    return this.quotas.in(namespace);
  }

  stop(): void {
    this.reflector.stop();
  }
}
