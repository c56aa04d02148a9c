// The core backend's metrics, with kube-apiserver's names: store request
// latency per operation and type (kube's `etcd_request_duration_seconds`,
// whatever the store: dashboards built for kube read it), the objects stored
// per resource (`apiserver_storage_objects`, counted when /metrics is
// scraped, at most every 10 s, from the watch cache), and the watchers
// registered per kind (`apiserver_registered_watchers`).
import { Counter, Gauge } from 'prom-client';
import { LeanCounter, LeanHistogram, type CounterHandle, type HistogramHandle } from '../../lib/metrics/lean.js';
import { registry } from '../../lib/metrics/registry.js';
import type { Registry } from '../../lib/registry/index.js';
import { typePrefix } from './keys.js';
import type { KObject } from '../../lib/api/meta.js';
import type { Store } from './store/types.js';
import type { SyncStats } from './store/index.js';

const storeDuration = new LeanHistogram(
  'etcd_request_duration_seconds',
  'Etcd request latency in seconds for each operation and object type.',
  { stabilityLevel: 'ALPHA' },
  [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60],
  registry,
);

/** `<group|core>/<plural>/…` → kube's type label (`configmaps`, `leases.coordination.k8s.io`). */
function typeOfKey(key: string): string {
  const a = key.indexOf('/');
  const b = key.indexOf('/', a + 1);
  const group = key.slice(0, a);
  const plural = b < 0 ? key.slice(a + 1) : key.slice(a + 1, b);
  return group === 'core' ? plural : `${plural}.${group}`;
}

/**
 * One operation's series by the key's `<group>/<plural>`: a write or read whose key starts with the
 * last key's `<group>/<plural>/` takes the last series (no slice, no label key built and hashed per
 * call, ~2k instructions a create; docs/decisions/2026-11-30-create-cpu-cuts-4.md).
 */
class OperationSeries {
  private readonly byPart = new Map<string, HistogramHandle>();
  private lastPrefix = '';
  private lastSeries: HistogramHandle | undefined;

  constructor(private readonly operation: string) {}

  of(key: string): HistogramHandle {
    if (this.lastSeries !== undefined && key.startsWith(this.lastPrefix)) return this.lastSeries;
    const b = key.indexOf('/', key.indexOf('/') + 1);
    const part = b < 0 ? key : key.slice(0, b);
    let h = this.byPart.get(part);
    if (h === undefined) {
      const type = typeOfKey(key);
      h = storeDuration.handleFor(`${this.operation}\0${type}`, { operation: this.operation, type });
      this.byPart.set(part, h);
    }
    if (b >= 0) {
      this.lastPrefix = key.slice(0, b + 1);
      this.lastSeries = h;
    }
    return h;
  }
}

const SERIES = {
  get: new OperationSeries('get'),
  create: new OperationSeries('create'),
  update: new OperationSeries('update'),
  delete: new OperationSeries('delete'),
  list: new OperationSeries('list'),
};

/** `p` (a store call started at t0) observed on `series` when it settles; `p` itself is returned. */
function timed<T>(series: HistogramHandle, t0: number, p: Promise<T>): Promise<T> {
  const done = (): void => series.observe((performance.now() - t0) / 1000);
  p.then(done, done);
  return p;
}

/** A get answered at once (Store.getNow), timed as timed() does, without its promise and closures. */
function timedGetNow(key: string, getNow: (key: string) => KObject | undefined): KObject | undefined {
  const t0 = performance.now();
  try {
    return getNow(key);
  } finally {
    SERIES.get.of(key).observe((performance.now() - t0) / 1000);
  }
}

/** A create answered at once (Store.createNow), timed as timed() does (a failure observed too), without its promise and closures. */
function timedCreateNow(key: string, obj: KObject, createNow: (key: string, obj: KObject) => KObject): KObject {
  const series = SERIES.create.of(key);
  const t0 = performance.now();
  try {
    return createNow(key, obj);
  } finally {
    series.observe((performance.now() - t0) / 1000);
  }
}

/** The store with each request timed (watch, revision and health calls pass through). */
export function instrumentedStore(s: Store): Store {
  const getNow = s.getNow?.bind(s);
  const createNow = s.createNow?.bind(s);
  return {
    getNow: getNow && ((key) => timedGetNow(key, getNow)),
    createNow: createNow && ((key, obj) => timedCreateNow(key, obj, createNow)),
    // The series and the start are taken before the call, as the timing of each starts there.
    create: (key, obj) => timed(SERIES.create.of(key), performance.now(), s.create(key, obj)),
    update: (key, obj, rev) => timed(SERIES.update.of(key), performance.now(), s.update(key, obj, rev)),
    delete: (key, rev) => timed(SERIES.delete.of(key), performance.now(), s.delete(key, rev)),
    deleteCorrupt: (key) => timed(SERIES.delete.of(key), performance.now(), s.deleteCorrupt(key)),
    get: (key, minRev) => timed(SERIES.get.of(key), performance.now(), s.get(key, minRev)),
    list: (prefix, opts) => timed(SERIES.list.of(prefix), performance.now(), s.list(prefix, opts)),
    watch: (prefix, fromRev, sink) => s.watch(prefix, fromRev, sink),
    currentRev: () => s.currentRev(),
    waitForRev: (rev, ms) => s.waitForRev(rev, ms),
    check: () => s.check(),
    close: () => s.close(),
  };
}

interface CountedStore {
  store: Store;
  registry: () => Registry;
}
const counted = new Set<CountedStore>();
let lastCount = 0;
let lastCounts = new Map<string, number>();

new Gauge(
  registry.declared({
    name: 'apiserver_storage_objects',
    help: 'Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.',
    stabilityLevel: 'STABLE',
    labelNames: ['resource'] as const,
    async collect(this: Gauge<'resource'>) {
      if (Date.now() - lastCount >= 10_000) {
        lastCount = Date.now();
        const counts = new Map<string, number>();
        for (const c of counted) {
          // Versions of one kind share their keys (HorizontalPodAutoscalers, custom resources): counted once.
          const prefixes = new Set<string>();
          for (const t of c.registry().all()) {
            if (t.servedBy === 'gateway' || t.computed || prefixes.has(typePrefix(t))) continue;
            prefixes.add(typePrefix(t));
            const name = t.group ? `${t.plural}.${t.group}` : t.plural;
            let n: number;
            try {
              const r = await c.store.list(typePrefix(t), { minRev: 0, limit: 1 });
              n = r.items.length + (r.remaining ?? 0);
            } catch {
              n = -1;
            }
            counts.set(name, (counts.get(name) ?? 0) + n);
          }
        }
        lastCounts = counts;
      }
      this.reset();
      for (const [resource, n] of lastCounts) this.set({ resource }, n);
    },
  }),
);

/** Counts the objects of every type of `registry()` in `store` on scrapes; the returned function stops it. */
export function countStoredObjects(store: Store, registry: () => Registry): () => void {
  const c = { store, registry };
  counted.add(c);
  lastCount = 0;
  return () => {
    counted.delete(c);
  };
}

/** One kind's count of registered watchers. */
export interface WatcherCount {
  readonly labels: { group: string; version: string; kind: string };
  n: number;
}

const watcherCounts = new Map<string, WatcherCount>();
new Gauge(
  registry.declared({
    name: 'apiserver_registered_watchers',
    help: 'Number of currently registered watchers for a given resources',
    stabilityLevel: 'ALPHA',
    labelNames: ['group', 'version', 'kind'] as const,
    collect(this: Gauge<'group' | 'version' | 'kind'>) {
      this.reset();
      for (const w of watcherCounts.values()) this.set(w.labels, w.n);
    },
  }),
);

/**
 * A watch of a kind opened: its kind's count, which the watch hands to `watcherUnregistered` once when it
 * ends (the count itself, not a closure: an open watch holds it for its life).
 */
export function watcherRegistered(group: string, version: string, kind: string): WatcherCount {
  const key = `${group}/${version}/${kind}`;
  let w = watcherCounts.get(key);
  if (!w) {
    w = { labels: { group, version, kind }, n: 0 };
    watcherCounts.set(key, w);
  }
  w.n++;
  return w;
}

export function watcherUnregistered(w: WatcherCount): void {
  w.n--;
}

// The file store's group commit: log syncs and the writes they made durable
// (writes ÷ syncs is the mean batch). Read from the open stores on scrape.
const syncSources = new Set<() => SyncStats>();
const sum = (pick: (s: SyncStats) => number): number => {
  let n = 0;
  for (const f of syncSources) n += pick(f());
  return n;
};
new Counter(
  registry.declared({
    name: 'gatehouse_file_store_syncs_total',
    help: "Durable appends (write + data sync) of the file store's log.",
    stabilityLevel: 'ALPHA',
    collect(this: Counter) {
      this.reset();
      this.inc(sum((s) => s.syncs));
    },
  }),
);
new Counter(
  registry.declared({
    name: 'gatehouse_file_store_writes_total',
    help: "Writes the file store's log syncs made durable; several share one sync under concurrent load.",
    stabilityLevel: 'ALPHA',
    collect(this: Counter) {
      this.reset();
      this.inc(sum((s) => s.records));
    },
  }),
);

/** Reports a file store's sync figures on scrapes; the returned function stops it. */
export function countFileSyncs(stats: () => SyncStats): () => void {
  syncSources.add(stats);
  return () => {
    syncSources.delete(stats);
  };
}

// Events written to watchers and their encoded sizes, per group, version and
// resource (kube's labels since it dropped `kind`): a watch takes its two
// handles once, so an event costs a field update and a bucket search.
const watchEvents = new LeanCounter('apiserver_watch_events_total', 'Number of events sent in watch clients', { stabilityLevel: 'ALPHA' }, registry);
const watchEventSizes = new LeanHistogram(
  'apiserver_watch_events_sizes',
  'Watch event size distribution in bytes',
  { stabilityLevel: 'ALPHA' },
  Array.from({ length: 8 }, (_, i) => 1024 * 2 ** i),
  registry,
);

export interface WatchEventCounts {
  readonly events: CounterHandle;
  readonly sizes: HistogramHandle;
}

/** The handles a watch of (group, version, resource) counts its events on. */
export function watchEventCounts(group: string, version: string, resource: string): WatchEventCounts {
  const key = `${group}/${version}/${resource}`;
  const labels = { group, version, resource };
  return { events: watchEvents.handleFor(key, labels), sizes: watchEventSizes.handleFor(key, labels) };
}

// The store's size on disk, where the store can tell (the file store: its
// snapshot and log as allocated); read from the open stores on scrape.
const sizeSources = new Map<string, () => Promise<number>>();
new Gauge(
  registry.declared({
    name: 'apiserver_storage_size_bytes',
    help: 'Size of the storage database file physically allocated in bytes.',
    stabilityLevel: 'ALPHA',
    labelNames: ['storage_cluster_id'] as const,
    async collect(this: Gauge<'storage_cluster_id'>) {
      this.reset();
      for (const [storage_cluster_id, size] of sizeSources) {
        try {
          this.set({ storage_cluster_id }, await size());
        } catch {
          // A store that cannot tell now is left out of this scrape.
        }
      }
    },
  }),
);

/** Reports a store's size on scrapes under `clusterId`; the returned function stops it. */
export function countStorageSize(clusterId: string, size: () => Promise<number>): () => void {
  sizeSources.set(clusterId, size);
  return () => {
    sizeSources.delete(clusterId);
  };
}
