// A Store whose calls are spans under the request that made them, as
// kube-apiserver's etcd3 store makes "Get etcd3", "Create etcd3", … spans
// (here named for the store: "Get redis", "List file"). Wrapped around the
// store only when tracing is on; calls outside a recorded request (controllers,
// watch caches) make no span.
import type { KObject } from '../../../lib/api/meta.js';
import { inSpan } from '../../../lib/tracing/span.js';
import type { ListOptions, ListResult, Store, WatchSink, Watcher } from './types.js';

export class TracedStore implements Store {
  constructor(private readonly inner: Store, private readonly kind: string) {}

  create(key: string, obj: KObject): Promise<KObject> {
    return inSpan(`Create ${this.kind}`, { key }, () => this.inner.create(key, obj));
  }

  update(key: string, obj: KObject, expectedRev?: number): Promise<KObject> {
    return inSpan(`Update ${this.kind}`, { key, ...(expectedRev !== undefined ? { 'expected-revision': expectedRev } : {}) }, () => this.inner.update(key, obj, expectedRev));
  }

  delete(key: string, expectedRev?: number): Promise<KObject> {
    return inSpan(`Delete ${this.kind}`, { key, ...(expectedRev !== undefined ? { 'expected-revision': expectedRev } : {}) }, () => this.inner.delete(key, expectedRev));
  }

  deleteCorrupt(key: string): Promise<void> {
    return inSpan(`DeleteCorrupt ${this.kind}`, { key }, () => this.inner.deleteCorrupt(key));
  }

  get(key: string, minRev?: number): Promise<KObject | undefined> {
    return inSpan(`Get ${this.kind}`, { key, ...(minRev !== undefined ? { 'min-revision': minRev } : {}) }, () => this.inner.get(key, minRev));
  }

  list(prefix: string, opts?: ListOptions): Promise<ListResult> {
    return inSpan(`List ${this.kind}`, { key: prefix, ...(opts?.limit !== undefined ? { limit: opts.limit } : {}) }, async (span) => {
      const r = await this.inner.list(prefix, opts);
      span?.setAttribute('count', r.items.length);
      return r;
    });
  }

  watch(prefix: string, fromRev: number, sink: WatchSink): Watcher {
    return this.inner.watch(prefix, fromRev, sink);
  }

  currentRev(): Promise<number> {
    return this.inner.currentRev();
  }

  waitForRev(rev: number, timeoutMs: number): Promise<void> {
    return this.inner.waitForRev(rev, timeoutMs);
  }

  check(): Promise<void> {
    return this.inner.check();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
