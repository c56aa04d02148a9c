// Keeps an RbacPolicy current from the four RBAC types through an
// ObjectSource: list, then watch from the list's revision; when a watch
// ends, re-list that type after a short pause and replace its part of the
// policy. `start()` resolves once every type has been listed once.
import type { KObject } from '../../../lib/api/meta.js';
import type { ObjectEvent, ObjectSource, ObjectWatch } from '../../../lib/api/objectsource.js';
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
  { resource: 'clusterroles', clear: (p) => p.clearRoles('ClusterRole'), apply: (p, o) => p.setClusterRole(nm(o), rulesOf(o)), remove: (p, o) => p.deleteClusterRole(nm(o)) },
  {
    resource: 'rolebindings', clear: (p) => p.clearBindings('RoleBinding'),
    apply: (p, o) => { const b = bindingOf(o, 'RoleBinding'); if (b) p.setBinding(b); else p.deleteBinding('RoleBinding', ns(o), nm(o)); },
    remove: (p, o) => p.deleteBinding('RoleBinding', ns(o), nm(o)),
  },
  {
    resource: 'clusterrolebindings', clear: (p) => p.clearBindings('ClusterRoleBinding'),
    apply: (p, o) => { const b = bindingOf(o, 'ClusterRoleBinding'); if (b) p.setBinding(b); else p.deleteBinding('ClusterRoleBinding', '', nm(o)); },
    remove: (p, o) => p.deleteBinding('ClusterRoleBinding', '', nm(o)),
  },
];

export interface RbacSyncOptions {
  log(msg: string): void;
  /** Pause before a re-list after a broken watch. */
  retryMs?: number;
}

export class RbacSync {
  private readonly watches = new Map<string, ObjectWatch>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(private readonly source: ObjectSource, private readonly policy: RbacPolicy, private readonly opts: RbacSyncOptions) {}

  async start(): Promise<void> {
    this.stopped = false;
    await Promise.all(KINDS.map((k) => this.listAndWatch(k)));
  }

  stop(): void {
    this.stopped = true;
    for (const w of this.watches.values()) w.stop();
    this.watches.clear();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private async listAndWatch(k: Kind): Promise<void> {
    const { items, resourceVersion } = await this.source.list(RBAC_GROUP, k.resource);
    if (this.stopped) return;
    k.clear(this.policy);
    for (const o of items) k.apply(this.policy, o);
    this.watches.get(k.resource)?.stop();
    this.watches.set(k.resource, this.source.watch(RBAC_GROUP, k.resource, resourceVersion,
      (ev: ObjectEvent) => { if (ev.type === 'DELETED') k.remove(this.policy, ev.object); else k.apply(this.policy, ev.object); },
      (err: Error) => this.relist(k, err)));
  }

  private relist(k: Kind, err: Error): void {
    if (this.stopped) return;
    this.watches.get(k.resource)?.stop();
    this.watches.delete(k.resource);
    this.opts.log(`RBAC: watch of ${k.resource} ended (${err.message}); re-listing`);
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (this.stopped) return;
      this.listAndWatch(k).catch((e: unknown) => this.relist(k, e instanceof Error ? e : new Error(String(e))));
    }, this.opts.retryMs ?? 1000);
    t.unref();
    this.timers.add(t);
  }
}
