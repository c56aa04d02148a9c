// A Store whose calls are spans under the request that made them, as
// kube-apiserver's etcd3 store makes "Get etcd3", "Create etcd3", … spans
// (here named for the store: "Get redis", "List file"). One per recorded
// request (backends/core/tracedenv.ts), around the shared store; calls outside
// a recorded request (controllers, watch caches, unrecorded requests) make no
// span. The commands a call sends to Redis before its first await are its
// children (redis-traced.ts).
import type { KObject } from '../../../lib/api/meta.js';
import { inSpan, withCommandParent, type Attributes, type Trace } from '../../../lib/tracing/span.js';
import type { ListOptions, ListResult, Store, WatchSink, Watcher } from './types.js';

export class TracedStore implements Store {
  constructor(
    private readonly inner: Store,
    private readonly kind: string,
    private readonly trace: Trace,
  ) {}

  create(key: string, obj: KObject): Promise<KObject> {
    return this.call('Create', { key }, () => this.inner.create(key, obj));
  }

  update(key: string, obj: KObject, expectedRev?: number): Promise<KObject> {
    return this.call('Update', { key, ...(expectedRev !== undefined ? { 'expected-revision': expectedRev } : {}) }, () =>
      this.inner.update(key, obj, expectedRev),
    );
  }

  delete(key: string, expectedRev?: number): Promise<KObject> {
    return this.call('Delete', { key, ...(expectedRev !== undefined ? { 'expected-revision': expectedRev } : {}) }, () => this.inner.delete(key, expectedRev));
  }

  deleteCorrupt(key: string): Promise<void> {
    return this.call('DeleteCorrupt', { key }, () => this.inner.deleteCorrupt(key));
  }

  get(key: string, minRev?: number): Promise<KObject | undefined> {
    return this.call('Get', { key, ...(minRev !== undefined ? { 'min-revision': minRev } : {}) }, () => this.inner.get(key, minRev));
  }

  list(prefix: string, opts?: ListOptions): Promise<ListResult> {
    return inSpan(this.trace, `List ${this.kind}`, { key: prefix, ...(opts?.limit !== undefined ? { limit: opts.limit } : {}) }, async (span, t) => {
      const r = await withCommandParent(t, () => this.inner.list(prefix, opts));
      span?.setAttribute('count', r.items.length);
      return r;
    });
  }

  /** One store call in a span `<op> <store>` under the request, its Redis commands sent before its first await under the span. */
  private call<T>(op: string, attributes: Attributes, run: () => Promise<T>): Promise<T> {
    return inSpan(this.trace, `${op} ${this.kind}`, attributes, (_, t) => withCommandParent(t, run));
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
