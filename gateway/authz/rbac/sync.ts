// Keeps an RbacPolicy current from the four RBAC types through an
// ObjectSource (lib/api/reflector.ts): each (re-)list replaces that type's
// part of the policy, watch events patch it. `start()` resolves once every
// type has been listed once.
import type { KObject } from '../../../lib/api/meta.js';
import type { ObjectSource } from '../../../lib/api/objectsource.js';
import { Reflector, type ReflectedType } from '../../../lib/api/reflector.js';
import type { RbacPolicy } from './policy.js';
import { bindingOf, RBAC_GROUP, rulesOf } from './types.js';

interface Kind {
  readonly resource: 'roles' | 'clusterroles' | 'rolebindings' | 'clusterrolebindings';
  clear(p: RbacPolicy): void;
  apply(p: RbacPolicy, obj: KObject): void;
  remove(p: RbacPolicy, obj: KObject): void;
}

const ns = (o: KObject) => o.metadata.namespace ?? '';
const nm = (o: KObject) => o.metadata.name ?? '';

const KINDS: readonly Kind[] = [
  { resource: 'roles', clear: (p) => p.clearRoles('Role'), apply: (p, o) => p.setRole(ns(o), nm(o), rulesOf(o)), remove: (p, o) => p.deleteRole(ns(o), nm(o)) },
  {
    resource: 'clusterroles',
    clear: (p) => p.clearRoles('ClusterRole'),
    apply: (p, o) => p.setClusterRole(nm(o), rulesOf(o)),
    remove: (p, o) => p.deleteClusterRole(nm(o)),
  },
  {
    resource: 'rolebindings',
    clear: (p) => p.clearBindings('RoleBinding'),
    apply: (p, o) => {
      const b = bindingOf(o, 'RoleBinding');
      if (b) p.setBinding(b);
      else p.deleteBinding('RoleBinding', ns(o), nm(o));
    },
    remove: (p, o) => p.deleteBinding('RoleBinding', ns(o), nm(o)),
  },
  {
    resource: 'clusterrolebindings',
    clear: (p) => p.clearBindings('ClusterRoleBinding'),
    apply: (p, o) => {
      const b = bindingOf(o, 'ClusterRoleBinding');
      if (b) p.setBinding(b);
      else p.deleteBinding('ClusterRoleBinding', '', nm(o));
    },
    remove: (p, o) => p.deleteBinding('ClusterRoleBinding', '', nm(o)),
  },
];

export interface RbacSyncOptions {
  log(msg: string): void;
}

export class RbacSync {
  private readonly reflector: Reflector;

  constructor(source: ObjectSource, policy: RbacPolicy, opts: RbacSyncOptions) {
    this.reflector = new Reflector(
      source,
      KINDS.map((k): ReflectedType => ({
        group: RBAC_GROUP,
        resource: k.resource,
        reset: (items) => {
          k.clear(policy);
          for (const o of items) k.apply(policy, o);
        },
        set: (o) => k.apply(policy, o),
        remove: (o) => k.remove(policy, o),
      })),
      { who: 'RBAC', log: opts.log },
    );
  }

  /** Resolves once every type has been listed. */
  start(): Promise<void> {
    return this.reflector.start();
  }

  stop(): void {
    this.reflector.stop();
  }
}
