// Namespace lifecycle (the admission rule is admission/namespacelifecycle.ts):
// deleting a namespace marks it Terminating, a controller deletes every
// object in it, then drops the `kubernetes` finalizer so the namespace goes.
import { isPlainObject, rfc3339, type KObject } from '../../lib/api/meta.js';
import type { Registry } from '../../lib/registry/index.js';
import type { ResourceType } from '../../lib/registry/types.js';
import type { CoreEnv } from './env.js';
import { listPrefix, objectKey } from './keys.js';
import { guaranteedUpdate, StoreError, type Watcher } from './store/types.js';

export const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];
/** Namespaces that may never be deleted. */
export const PROTECTED_NAMESPACES = new Set(['default', 'kube-system', 'kube-public']);
const FINALIZER = 'kubernetes';

export function namespaceType(registry: Registry): ResourceType {
  const t = registry.lookup('', 'v1', 'namespaces');
  if (!t) throw new Error('the registry has no core/v1 namespaces type');
  return t;
}

/** What a new namespace gets from the server. */
export function markTerminating(ns: KObject, now: number): KObject {
  const status = isPlainObject(ns['status']) ? ns['status'] : {};
  return {
    ...ns,
    metadata: { ...ns.metadata, deletionTimestamp: ns.metadata.deletionTimestamp ?? rfc3339(now), deletionGracePeriodSeconds: 0 },
    status: { ...status, phase: 'Terminating' },
  };
}

export class NamespaceController {
  private watcher: Watcher | undefined;
  private readonly pending = new Set<string>();
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly env: CoreEnv,
    private readonly retryMs = 1000,
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
    const t = namespaceType(this.env.registry);
    const listed = await this.env.store.list(listPrefix(t, ''));
    for (const ns of listed.items) if (ns.metadata.deletionTimestamp) this.pending.add(ns.metadata.name!);
    this.watcher = this.env.store.watch(listPrefix(t, ''), listed.rev, {
      event: (ev) => {
        if (ev.type !== 'DELETED' && ev.object.metadata.deletionTimestamp) this.enqueue(ev.object.metadata.name!);
      },
      error: (err) => {
        this.env.log(`namespace controller: watch ended (${err.message}); restarting`);
        setTimeout(() => {
          if (!this.stopped) void this.start().catch((e) => this.env.log(`namespace controller: ${String(e)}`));
        }, this.retryMs).unref();
      },
    });
    this.kick();
  }

  /** Stops watching; a start later (leadership won again) lists the terminating namespaces afresh. */
  stop(): void {
    this.stopped = true;
    this.watcher?.stop();
    this.pending.clear();
    if (this.timer) clearTimeout(this.timer);
  }

  private enqueue(name: string): void {
    this.pending.add(name);
    this.kick();
  }

  private kick(): void {
    if (this.running || this.stopped || this.pending.size === 0) return;
    this.running = true;
    void this.drain().finally(() => {
      this.running = false;
    });
  }

  private async drain(): Promise<void> {
    const retry: string[] = [];
    while (this.pending.size > 0) {
      const name = this.pending.values().next().value as string;
      this.pending.delete(name);
      try {
        if (!(await this.finalize(name))) retry.push(name);
      } catch (err) {
        this.env.log(`namespace controller: deleting content of ${name}: ${err instanceof Error ? err.message : String(err)}`);
        retry.push(name);
      }
    }
    if (retry.length) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = setTimeout(() => {
        for (const n of retry) this.pending.add(n);
        this.kick();
      }, this.retryMs);
      this.timer.unref();
    }
  }

  /** Deletes the namespace's content; true when the namespace is gone or finalized. */
  private async finalize(name: string): Promise<boolean> {
    const { store, registry, clock } = this.env;
    const nsType = namespaceType(registry);
    const nsKey = objectKey(nsType, '', name);
    const ns = await store.get(nsKey);
    if (!ns || !ns.metadata.deletionTimestamp) return true;
    let remaining = 0;
    for (const t of registry.all()) {
      if (!t.namespaced) continue;
      const { items } = await store.list(listPrefix(t, name));
      for (const obj of items) {
        remaining++;
        await this.deleteOne(t, obj, clock());
      }
    }
    if (remaining > 0) {
      // Objects with finalizers stay until their controllers let go; check again later.
      const left = await this.countContent(name);
      if (left > 0) return false;
    }
    try {
      await guaranteedUpdate(store, nsKey, (cur) => {
        const spec = isPlainObject(cur['spec']) ? cur['spec'] : {};
        const had = Array.isArray(spec['finalizers']) ? spec['finalizers'] : [];
        const fins = had.filter((f) => f !== FINALIZER);
        if (fins.length === 0 && (cur.metadata.finalizers ?? []).length === 0) {
          throw new Finalized(Number(cur.metadata.resourceVersion));
        }
        // Ours is gone already and others' finalizers hold the namespace: writing it again
        // would wake this controller again, for ever (on the memory store without ever
        // yielding to the event loop: a namespace with a finalizer hung the process).
        if (fins.length === had.length) return null;
        return { ...cur, metadata: { ...cur.metadata }, spec: { ...spec, finalizers: fins } };
      });
    } catch (err) {
      if (!(err instanceof Finalized)) throw err;
      try {
        await store.delete(nsKey, err.rev);
      } catch (e) {
        if (e instanceof StoreError && (e.code === 'not-found' || e.code === 'conflict')) return e.code === 'not-found';
        throw e;
      }
    }
    return true;
  }

  private async countContent(name: string): Promise<number> {
    let n = 0;
    for (const t of this.env.registry.all()) {
      if (t.namespaced) n += (await this.env.store.list(listPrefix(t, name), { limit: 1 })).items.length;
    }
    return n;
  }

  private async deleteOne(t: ResourceType, obj: KObject, now: number): Promise<void> {
    const key = objectKey(t, obj.metadata.namespace ?? '', obj.metadata.name ?? '');
    try {
      if ((obj.metadata.finalizers ?? []).length > 0) {
        if (obj.metadata.deletionTimestamp) return;
        await guaranteedUpdate(this.env.store, key, (cur) =>
          cur.metadata.deletionTimestamp ? null : { ...cur, metadata: { ...cur.metadata, deletionTimestamp: rfc3339(now), deletionGracePeriodSeconds: 0 } },
        );
      } else {
        await this.env.store.delete(key, Number(obj.metadata.resourceVersion));
      }
    } catch (err) {
      // Changed or gone since the list: the next pass sees its new state.
      if (err instanceof StoreError && (err.code === 'not-found' || err.code === 'conflict')) return;
      throw err;
    }
  }
}

class Finalized extends Error {
  constructor(readonly rev: number) {
    super('finalized');
  }
}
