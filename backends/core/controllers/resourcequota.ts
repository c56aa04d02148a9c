// kube-controller-manager's `resourcequota` controller: each ResourceQuota's
// status.hard is its spec.hard and status.used a full count of what the
// namespace's objects charge (the evaluators the admission plugin uses,
// quota/evaluators.ts). A quota is counted when it is created, when its
// spec.hard changes, when an object it tracks is deleted or changes what it
// charges (kube's replenishment: deletion itself is never charged, the count
// is made again), and every --resource-quota-sync-period (kube's default 5
// minutes), which also catches charges of writes the store then refused. The
// status write is a compare-and-swap on the quota read before the count: a
// charge the admission plugin made meanwhile conflicts, and the count is made
// again. Watches every stored type; a change outside a namespace with quotas
// costs one map lookup.
import type { KObject } from '../../../lib/api/meta.js';
import { ZERO_QUANTITY } from '../../../lib/registry/builtins/quantities.js';
import { record, sameJson } from '../../../lib/registry/fields.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import { listPrefix, objectKey } from '../keys.js';
import { prepareUpdate } from '../objects.js';
import { evaluatorFor, evaluatorsFor, scopeSelectorsOf } from '../quota/evaluators.js';
import { addLists, listsEqual, mask, resourceListJson, resourceListOf, type ResourceList } from '../quota/resources.js';
import { retryOnConflict, RETRY, StoreError, type StoreEvent } from '../store/types.js';
import { storedTypes } from './garbagecollector.js';
import { coreType, WatchingController } from './loop.js';

/** kube-controller-manager's --resource-quota-sync-period default. */
export const DEFAULT_QUOTA_SYNC_PERIOD_MS = 5 * 60_000;

const QUOTA_PREFIX = 'core/resourcequotas/';

/** The group and plural of a store key (`<group|core>/<plural>/…`). */
function groupResourceOfKey(key: string): { group: string; resource: string } {
  const [g = '', r = ''] = key.split('/', 2);
  return { group: g === 'core' ? '' : g, resource: r };
}

export class ResourceQuotaController extends WatchingController {
  /** The quotas of each namespace (name → spec.hard names), from passes and quota events. */
  private readonly quotas = new Map<string, Map<string, string[]>>();
  /** Quotas to count again, `namespace/name`. */
  private readonly pending = new Set<string>();
  private draining = false;

  constructor(
    env: CoreEnv,
    private readonly syncPeriodMs = DEFAULT_QUOTA_SYNC_PERIOD_MS,
    retryMs?: number,
  ) {
    // The types served at start; objects of custom resources defined later are counted by the periodic resync.
    super(env, 'resourcequota', [...storedTypes(env).keys()], retryMs);
  }

  protected override onEvent(ev: StoreEvent): void {
    const obj = ev.object;
    const ns = obj.metadata.namespace ?? '';
    if (ev.key.startsWith(QUOTA_PREFIX)) {
      if (ev.type === 'DELETED') {
        this.quotas.get(ns)?.delete(obj.metadata.name ?? '');
        return;
      }
      this.remember(obj);
      if (ev.type === 'ADDED' || needsSync(obj) || !sameJson(record(ev.prev, 'spec')['hard'], record(obj, 'spec')['hard']))
        this.schedule(ns, obj.metadata.name ?? '');
      // A quota is itself counted (`resourcequotas`): its own creation and deletion change the others.
      if (ev.type === 'ADDED') this.replenish(ns, '', 'resourcequotas');
      return;
    }
    if (!ns || !this.quotas.has(ns)) return;
    const { group, resource } = groupResourceOfKey(ev.key);
    if (ev.type === 'DELETED') return this.replenish(ns, group, resource);
    if (ev.type === 'MODIFIED' && ev.prev) {
      // An update that changes what the object charges (a pod reaching a terminal phase, a Service's type, a claim's size).
      const e = evaluatorFor(group, resource);
      const now = this.env.clock();
      if (!listsEqual(e.usage(ev.prev, now), e.usage(obj, now))) this.replenish(ns, group, resource);
    }
  }

  private remember(q: KObject): void {
    const ns = q.metadata.namespace ?? '';
    let m = this.quotas.get(ns);
    if (!m) this.quotas.set(ns, (m = new Map()));
    m.set(q.metadata.name ?? '', Object.keys(record(q, 'spec', 'hard')));
  }

  /** Every quota of the namespace that tracks a resource of this kind is counted again. */
  private replenish(namespace: string, group: string, resource: string): void {
    const e = evaluatorFor(group, resource);
    for (const [name, hard] of this.quotas.get(namespace) ?? []) if (e.matchingResources(hard).length > 0) this.schedule(namespace, name);
  }

  private schedule(namespace: string, name: string): void {
    this.pending.add(`${namespace}/${name}`);
    if (this.draining) return;
    this.draining = true;
    this.enqueue('counting usage', async () => {
      try {
        while (this.pending.size > 0 && this.watching) {
          const next = this.pending.values().next().value!;
          this.pending.delete(next);
          const slash = next.indexOf('/');
          await this.sync(next.slice(0, slash), next.slice(slash + 1));
        }
      } finally {
        this.draining = false;
      }
    });
  }

  /** The full resync: every quota counted. */
  protected async pass(): Promise<number | undefined> {
    const t = coreType(this.env, 'resourcequotas');
    const { items } = await this.env.store.list(listPrefix(t, ''));
    this.quotas.clear();
    for (const q of items) this.remember(q);
    for (const q of items) await this.sync(q.metadata.namespace ?? '', q.metadata.name ?? '');
    return this.env.clock() + this.syncPeriodMs;
  }

  /** syncResourceQuota: count, and write status when it differs. */
  private async sync(namespace: string, name: string): Promise<void> {
    const t = coreType(this.env, 'resourcequotas');
    const key = objectKey(t, namespace, name);
    await retryOnConflict(
      async () => {
        // The quota first, then the objects: a charge made after this read conflicts with the write.
        const cur = await this.env.store.get(key);
        if (!cur || cur.metadata.deletionTimestamp) return undefined;
        const hard = resourceListOf(record(cur, 'spec')['hard']);
        const status = record(cur, 'status');
        const before = resourceListOf(status['used']);
        // The count replaces what was recorded; names no longer hard are dropped.
        const used = mask(new Map([...before, ...(await this.usage(namespace, cur, hard))]), hard.keys());
        const dirty =
          status['hard'] === undefined || status['used'] === undefined || !sameHard(hard, resourceListOf(status['hard'])) || !listsEqual(used, before);
        if (!dirty) return undefined;
        const next = prepareUpdate(
          t,
          { ...cur, status: { hard: resourceListJson(hard), used: resourceListJson(used) } },
          cur,
          'status',
          undefined,
          this.env.clock(),
        );
        if (!next) return undefined;
        try {
          await this.env.store.update(key, next, Number(cur.metadata.resourceVersion));
        } catch (err) {
          if (err instanceof StoreError && err.code === 'conflict') return RETRY;
          if (err instanceof StoreError && err.code === 'not-found') return undefined;
          throw err;
        }
        return undefined;
      },
      () => new StoreError('conflict', `${key}: still conflicting after counting its usage again`),
    );
  }

  /** quota.CalculateUsage: each evaluator the hard names need, over the namespace's objects its scopes select. */
  private async usage(namespace: string, quota: KObject, hard: ResourceList): Promise<ResourceList> {
    const hardNames = [...hard.keys()];
    const scopes = scopeSelectorsOf(quota);
    const now = this.env.clock();
    let out: ResourceList = new Map();
    for (const e of evaluatorsFor(hardNames, (g, r) => this.typeOf(g, r) !== undefined)) {
      const t = this.typeOf(e.group, e.resource);
      if (!t) continue;
      const matched = e.matchingResources(hardNames);
      let sum: ResourceList = new Map(matched.map((n) => [n, ZERO_QUANTITY]));
      const { items } = await this.env.store.list(listPrefix(t, namespace));
      for (const obj of items) if (scopes.every((s) => e.matchesScope(s, obj))) sum = addLists(sum, mask(e.usage(obj, now), matched));
      out = new Map([...out, ...sum]);
    }
    return out;
  }

  /** The stored, namespaced, listable type of a group resource. */
  private typeOf(group: string, resource: string): ResourceType | undefined {
    for (const t of this.env.registry.all())
      if (t.group === group && t.plural === resource && t.namespaced && !t.computed && t.servedBy !== 'gateway' && t.verbs.includes('list')) return t;
    return undefined;
  }
}

function needsSync(q: KObject): boolean {
  const status = record(q, 'status');
  return status['hard'] === undefined || status['used'] === undefined || !sameHard(resourceListOf(record(q, 'spec')['hard']), resourceListOf(status['hard']));
}

function sameHard(a: ResourceList, b: ResourceList): boolean {
  return listsEqual(a, b);
}
