// The policies, bindings and params admission reads, kept from the store by
// watches (lib/api/reflector.ts) so that a change applies within moments on
// every process sharing the store. Policies are compiled when they change;
// the lookup index of policies that have bindings is rebuilt on each change
// of either, never per request. Param types are followed from the first
// policy that names them. The backend starts it before its first request
// and keeps it on its env (`admissionPolicies`).
import type { KObject } from '../../../../lib/api/meta.js';
import type { ObjectSource } from '../../../../lib/api/objectsource.js';
import { Reflector, type ReflectedType } from '../../../../lib/api/reflector.js';
import { RuleIndex, type Matchable } from '../matching/index.js';
import { compileBinding, compilePolicy, type CompiledBinding, type CompiledPolicy } from './compiled.js';

const GROUP = 'admissionregistration.k8s.io';

/** A policy with the bindings that name it (kube's PolicyHook), indexed by its matchConstraints' rules. */
export interface PolicyHook extends Matchable {
  readonly policy: CompiledPolicy;
  readonly bindings: readonly CompiledBinding[];
}

const keyOf = (o: KObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

/** The objects of one type by namespace/name, from a reflector. */
export class ObjectMap implements ReflectedType {
  readonly items = new Map<string, KObject>();
  constructor(
    readonly group: string,
    readonly resource: string,
    private readonly changed: () => void = () => undefined,
  ) {}
  reset(items: readonly KObject[]): void {
    this.items.clear();
    for (const o of items) this.items.set(keyOf(o), o);
    this.changed();
  }
  set(obj: KObject): void {
    this.items.set(keyOf(obj), obj);
    this.changed();
  }
  remove(obj: KObject): void {
    this.items.delete(keyOf(obj));
    this.changed();
  }
}

export class PolicyCache {
  private readonly compiledPolicies = new Map<string, { rv: string | undefined; policy: CompiledPolicy }>();
  private readonly policies = new ObjectMap(GROUP, 'validatingadmissionpolicies', () => this.rebuild());
  private readonly bindings = new ObjectMap(GROUP, 'validatingadmissionpolicybindings', () => this.rebuild());
  private readonly reflector: Reflector;
  private readonly params = new Map<string, { map: ObjectMap; ready: Promise<void>; reflector: Reflector }>();
  index: RuleIndex<PolicyHook> = new RuleIndex([]);
  /** Resolves once policies and bindings were listed (a failed list is retried). */
  readonly ready: Promise<void>;

  constructor(
    private readonly source: ObjectSource,
    private readonly log: (msg: string) => void,
  ) {
    this.reflector = new Reflector(source, [this.policies, this.bindings], {
      who: 'ValidatingAdmissionPolicy',
      log,
      retryMs: 200,
      maxRetryMs: 5000,
      retryFirstList: true,
    });
    this.ready = this.reflector.start();
  }

  private rebuild(): void {
    const byPolicy = new Map<string, CompiledBinding[]>();
    for (const b of this.bindings.items.values()) {
      const c = compileBinding(b);
      const list = byPolicy.get(c.policyName);
      if (list) list.push(c);
      else byPolicy.set(c.policyName, [c]);
    }
    const hooks: PolicyHook[] = [];
    const seen = new Set<string>();
    for (const p of this.policies.items.values()) {
      const name = p.metadata.name ?? '';
      seen.add(name);
      const bindings = byPolicy.get(name);
      if (!bindings) continue;
      let c = this.compiledPolicies.get(name);
      if (!c || c.rv !== p.metadata.resourceVersion) {
        c = { rv: p.metadata.resourceVersion, policy: compilePolicy(p) };
        this.compiledPolicies.set(name, c);
      }
      const policy = c.policy;
      hooks.push({ policy, bindings, rules: policy.match.rules.map((r) => r.rule), equivalent: policy.match.equivalent });
    }
    for (const name of this.compiledPolicies.keys()) if (!seen.has(name)) this.compiledPolicies.delete(name);
    // kube evaluates policies in name order.
    hooks.sort((a, b) => (a.policy.name < b.policy.name ? -1 : a.policy.name > b.policy.name ? 1 : 0));
    this.index = new RuleIndex(hooks);
  }

  /** The objects of a param type, followed from the first call (resolves once listed). */
  async paramObjects(group: string, resource: string): Promise<ObjectMap> {
    const k = `${group}/${resource}`;
    let p = this.params.get(k);
    if (!p) {
      const map = new ObjectMap(group, resource);
      const reflector = new Reflector(this.source, [map], { who: 'ValidatingAdmissionPolicy params', log: this.log, retryMs: 200, maxRetryMs: 5000 });
      p = { map, reflector, ready: reflector.start() };
      this.params.set(k, p);
      p.ready.catch(() => this.params.delete(k));
    }
    await p.ready;
    return p.map;
  }

  stop(): void {
    this.reflector.stop();
    for (const p of this.params.values()) p.reflector.stop();
  }
}
