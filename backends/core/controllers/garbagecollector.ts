// The garbage collector (kube-controller-manager's `garbagecollector`):
// follows metadata.ownerReferences across every stored type.
//
// * Background: a dependent whose owners are all gone (missing, or another
//   uid under the name) is deleted; one that still has a live owner only
//   loses the references to the gone ones.
// * Foreground: an owner being deleted with the `foregroundDeletion`
//   finalizer gets its dependents deleted (in foreground themselves when
//   they have dependents, so chains unwind bottom-up); the finalizer is
//   removed once no dependent with `blockOwnerDeletion: true` is left.
// * Orphan: an owner being deleted with the `orphan` finalizer has its
//   references removed from every dependent, then the finalizer removed.
//
// References are resolved as kube does: a namespaced owner of a namespaced
// dependent is looked up in the dependent's namespace; a cluster-scoped
// dependent cannot have a namespaced owner; an owner kind no served type
// has cannot be resolved. Such references are ignored with a log line and
// keep the dependent (it cannot be collected through them).
import type { KObject, OwnerReference } from '../../../lib/api/meta.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import { deleteAsController } from '../handlers/delete.js';
import type { PropagationPolicy } from '../handlers/params.js';
import { objectKey, typePrefix } from '../keys.js';
import { isFinalized } from '../objects.js';
import { retryOnConflict, RETRY, StoreError, type ListResult, type StoreEvent } from '../store/types.js';
import { hasFinalizer, OwnershipGraph, refsOf, type GraphNode } from './garbagecollector-graph.js';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from './garbagecollector-policy.js';
import { WatchingController } from './loop.js';

/** Objects a page of the collector's lists (listType). */
const LIST_PAGE = 500;

/** One stored type per key prefix (several versions share a prefix). */
export function storedTypes(env: CoreEnv): Map<string, ResourceType> {
  const out = new Map<string, ResourceType>();
  for (const t of env.registry.all()) {
    if (t.servedBy === 'gateway' || t.computed || !t.verbs.includes('list')) continue;
    if (!out.has(typePrefix(t))) out.set(typePrefix(t), t);
  }
  return out;
}

/** The type prefix of a store key (typePrefix of its type): up to its second '/'. */
function prefixOfKey(key: string): string {
  const i = key.indexOf('/');
  return key.slice(0, key.indexOf('/', i + 1) + 1);
}

type OwnerState = 'absent' | 'solid' | 'waiting' | 'invalid';

/** Counts of the collector's store work in this process (tests check a CRD change lists only its own type). */
export const gcWork = { listed: 0 };

export class GarbageCollector extends WatchingController {
  private readonly graph = new OwnershipGraph();
  private types: Map<string, ResourceType>;
  private unsubscribe: (() => void) | undefined;
  private readonly queue = new Set<string>();
  private draining = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly retryLater = new Set<string>();
  /** Invalid references already logged (uid → reference uid). */
  private readonly logged = new Set<string>();

  constructor(
    env: CoreEnv,
    private readonly itemRetryMs = 1000,
  ) {
    const types = storedTypes(env);
    super(env, 'garbagecollector', [...types.keys()]);
    this.types = types;
  }

  /**
   * Custom resources come and go with their CRDs: their objects join the graph as they are served.
   * A start after a stop (leadership lost and won again) first catches up with the types served
   * meanwhile; its full pass lists them all.
   */
  override async start(): Promise<void> {
    if (!this.unsubscribe) {
      this.unsubscribe = this.env.live.onChange(() => this.typesChanged());
      this.typesChanged();
    }
    await super.start();
  }

  /**
   * The served types changed: only the added ones are listed and watched, the removed
   * ones unwatched and dropped from the graph; the others keep their watches and nodes
   * (a full resync per change cost every type's LIST with each CRD installed or deleted).
   */
  private typesChanged(): void {
    const types = storedTypes(this.env);
    const added = [...types.keys()].filter((p) => !this.types.has(p));
    const removed = new Set([...this.types.keys()].filter((p) => !types.has(p)));
    this.types = types;
    for (const prefix of removed) this.removeWatch(prefix);
    if (removed.size > 0) this.dropTypes(removed);
    if (added.length > 0) this.enqueue('listing new types', () => this.addTypes(added));
  }

  /** Drops the nodes of types no longer served; their dependents are looked at again (such owners no longer resolve). */
  private dropTypes(prefixes: ReadonlySet<string>): void {
    for (const key of this.graph.keys()) {
      if (!prefixes.has(prefixOfKey(key))) continue;
      const gone = this.graph.remove(key);
      if (gone) for (const dep of this.graph.dependentsOf(gone.uid)) this.schedule(dep.uid);
    }
  }

  /** Lists each added type still served into the graph, then watches it from the revision it was read at. */
  private async addTypes(prefixes: readonly string[]): Promise<void> {
    for (const prefix of prefixes) {
      const t = this.types.get(prefix);
      if (!t) continue;
      // Not watching (before start, or a broken watch): recorded only; the next start watches it and its full pass lists it.
      if (!this.watching) {
        this.addWatch(prefix, 0);
        continue;
      }
      const listed = await this.listType(prefix, t, undefined, (obj) => {
        if (this.hasWork(obj)) this.schedule(obj.metadata.uid ?? '');
      });
      if (!this.types.has(prefix)) continue; // gone while it was listed
      // Unlistable (a corrupt object): watched from now, as a full pass leaves it.
      this.addWatch(prefix, listed?.rev ?? (await this.env.store.currentRev()));
    }
  }

  /**
   * One type's objects into the graph (their keys into `seen`, each object to `each`), read by pages at one
   * revision, as an informer lists; the revision, or undefined when it cannot be listed. Pages: a store that
   * keeps bytes parses what it lists, and a page's objects then die with it instead of a whole type's being
   * promoted together and left to the next full GC.
   */
  private async listType(prefix: string, t: ResourceType, seen?: Set<string>, each?: (obj: KObject) => void): Promise<{ rev: number } | undefined> {
    let rev: number | undefined;
    let after: string | undefined;
    for (;;) {
      let page: ListResult;
      try {
        page = await this.env.store.list(prefix, { limit: LIST_PAGE, ...(after !== undefined ? { after } : {}), ...(rev !== undefined ? { rev } : {}) });
      } catch (err) {
        // A type that cannot be listed (a corrupt object in it) keeps its last known state.
        this.env.log(`garbagecollector: listing ${prefix}: ${err instanceof Error ? err.message : String(err)}`);
        return undefined;
      }
      if (rev === undefined) gcWork.listed++;
      if (!this.types.has(prefix)) return undefined; // no longer served: its objects stay out of the graph
      rev = page.rev;
      for (const obj of page.items) {
        const key = objectKey(t, obj.metadata.namespace ?? '', obj.metadata.name ?? '');
        seen?.add(key);
        this.graph.upsert(key, t, obj);
        each?.(obj);
      }
      if (page.continueAfter === undefined) return { rev };
      after = page.continueAfter;
    }
  }

  override stop(): void {
    super.stop();
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }

  /** Full resync (start, a broken watch): every type listed into the graph, every node with work queued. */
  protected async pass(): Promise<undefined> {
    const listedTypes = new Set<string>();
    const listed = new Set<string>();
    for (const [prefix, t] of [...this.types]) {
      if ((await this.listType(prefix, t, listed)) !== undefined) listedTypes.add(prefix);
    }
    // One walk over the graph's keys for every type listed (a walk per type cost types × keys).
    for (const key of this.graph.keys()) if (listedTypes.has(prefixOfKey(key)) && !listed.has(key)) this.graph.remove(key);
    for (const node of this.graph.all()) if (this.hasWork(node.obj)) this.schedule(node.uid);
    return undefined;
  }

  protected override onEvent(ev: StoreEvent): void {
    const t = this.typeOfKey(ev.key);
    if (!t) return;
    if (ev.type === 'DELETED') {
      const gone = this.graph.remove(ev.key);
      const uid = gone?.uid ?? ev.object.metadata.uid;
      if (!uid) return;
      // Its dependents may now be garbage; owners in foreground may be unblocked.
      for (const dep of this.graph.dependentsOf(uid)) this.schedule(dep.uid);
      // A known object without a node had no references.
      const refs = gone === undefined ? refsOf(ev.object) : gone.node ? refsOf(gone.node.obj) : [];
      for (const ref of refs) this.schedule(ref.uid);
      return;
    }
    const prevUid = this.graph.upsert(ev.key, t, ev.object);
    const uid = ev.object.metadata.uid ?? '';
    if (prevUid !== undefined && prevUid !== uid) for (const dep of this.graph.dependentsOf(prevUid)) this.schedule(dep.uid);
    if (this.hasWork(ev.object)) this.schedule(uid);
    // An owner entering foreground deletion: its dependents learn that it waits for them.
    if (ev.object.metadata.deletionTimestamp && hasFinalizer(ev.object, FOREGROUND_FINALIZER)) {
      for (const dep of this.graph.dependentsOf(uid)) this.schedule(dep.uid);
    }
  }

  private hasWork(obj: KObject): boolean {
    if (refsOf(obj).length > 0) return true;
    return obj.metadata.deletionTimestamp !== undefined && (hasFinalizer(obj, FOREGROUND_FINALIZER) || hasFinalizer(obj, ORPHAN_FINALIZER));
  }

  private typeOfKey(key: string): ResourceType | undefined {
    return this.types.get(prefixOfKey(key));
  }

  private schedule(uid: string): void {
    if (!uid) return;
    this.queue.add(uid);
    if (this.draining) return;
    this.draining = true;
    this.enqueue('sync', () => this.drain());
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.size > 0) {
        const uid = this.queue.values().next().value as string;
        this.queue.delete(uid);
        try {
          await this.sync(uid);
        } catch (err) {
          this.env.log(`garbagecollector: ${this.graph.get(uid)?.key ?? uid}: ${err instanceof Error ? err.message : String(err)}`);
          this.retryItem(uid);
        }
      }
    } finally {
      this.draining = false;
    }
  }

  private retryItem(uid: string): void {
    this.retryLater.add(uid);
    if (this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      const uids = [...this.retryLater];
      this.retryLater.clear();
      for (const u of uids) this.schedule(u);
    }, this.itemRetryMs);
    this.retryTimer.unref();
  }

  private async sync(uid: string): Promise<void> {
    const node = this.graph.get(uid);
    if (!node) return;
    const obj = node.obj;
    if (obj.metadata.deletionTimestamp) {
      if (hasFinalizer(obj, FOREGROUND_FINALIZER)) await this.processForeground(node);
      else if (hasFinalizer(obj, ORPHAN_FINALIZER)) await this.processOrphan(node);
      return;
    }
    if (refsOf(obj).length > 0) await this.attemptToDelete(node);
  }

  /** A dependent: delete it when every owner is gone or waits for it; drop references to gone owners otherwise. */
  private async attemptToDelete(node: GraphNode): Promise<void> {
    const solid: OwnerReference[] = [];
    const dangling: OwnerReference[] = [];
    const waiting: OwnerReference[] = [];
    for (const ref of refsOf(node.obj)) {
      const state = await this.ownerState(node, ref);
      if (state === 'invalid') return; // an unresolvable reference keeps the object (kube: not collectable)
      (state === 'solid' ? solid : state === 'waiting' ? waiting : dangling).push(ref);
    }
    if (solid.length > 0) {
      if (dangling.length + waiting.length === 0) return;
      const drop = new Set([...dangling, ...waiting].map((r) => r.uid));
      await this.removeReferences(node, drop);
      return;
    }
    let policy: PropagationPolicy = 'Background';
    if (hasFinalizer(node.obj, ORPHAN_FINALIZER)) policy = 'Orphan';
    if (hasFinalizer(node.obj, FOREGROUND_FINALIZER)) policy = 'Foreground';
    if (waiting.length > 0 && this.graph.dependentsOf(node.uid).length > 0) policy = 'Foreground';
    if (await deleteAsController(this.env, node.t, node.obj, { propagationPolicy: policy })) {
      this.env.log(`garbagecollector: deleting ${node.key} (${policy}): its owners are gone or being deleted`);
    }
  }

  private async ownerState(node: GraphNode, ref: OwnerReference): Promise<OwnerState> {
    const t = this.ownerType(ref);
    const nsDependent = node.t.namespaced;
    let why: string | undefined;
    if (!t) why = `no served type has kind ${ref.kind} in ${ref.apiVersion}`;
    else if (t.namespaced && !nsDependent) why = `a cluster-scoped object cannot have the namespaced owner ${ref.kind} ${ref.name}`;
    if (why !== undefined || !t) {
      const mark = `${node.uid}/${ref.uid}`;
      if (!this.logged.has(mark)) {
        this.logged.add(mark);
        this.env.log(`garbagecollector: ignoring an invalid ownerReference of ${node.key}: ${why ?? ''}`);
      }
      return 'invalid';
    }
    let owner: KObject | undefined;
    try {
      owner = await this.env.store.get(objectKey(t, t.namespaced ? (node.obj.metadata.namespace ?? '') : '', ref.name));
    } catch (err) {
      if (err instanceof StoreError && err.code === 'corrupt') return 'invalid';
      throw err;
    }
    if (!owner || owner.metadata.uid !== ref.uid) return 'absent';
    if (owner.metadata.deletionTimestamp && hasFinalizer(owner, FOREGROUND_FINALIZER)) return 'waiting';
    return 'solid';
  }

  private ownerType(ref: OwnerReference): ResourceType | undefined {
    if (typeof ref.apiVersion !== 'string' || typeof ref.kind !== 'string') return undefined;
    const slash = ref.apiVersion.indexOf('/');
    const group = slash < 0 ? '' : ref.apiVersion.slice(0, slash);
    for (const t of this.types.values()) if (t.group === group && t.kind === ref.kind) return t;
    return undefined;
  }

  /** Foreground: delete the dependents, then let the owner go once no blocking dependent is left. */
  private async processForeground(owner: GraphNode): Promise<void> {
    const deps = this.graph.dependentsOf(owner.uid);
    for (const dep of deps) {
      if (!dep.obj.metadata.deletionTimestamp) await this.attemptToDelete(dep);
    }
    const blocking = this.graph.dependentsOf(owner.uid).filter((d) => refsOf(d.obj).some((r) => r.uid === owner.uid && r.blockOwnerDeletion === true));
    if (blocking.length > 0) return; // their DELETED events bring the owner back here
    await this.removeFinalizer(owner, FOREGROUND_FINALIZER);
  }

  /** Orphan: every dependent loses its reference to the owner, then the owner goes. */
  private async processOrphan(owner: GraphNode): Promise<void> {
    for (const dep of this.graph.dependentsOf(owner.uid)) await this.removeReferences(dep, new Set([owner.uid]));
    await this.removeFinalizer(owner, ORPHAN_FINALIZER);
  }

  private async removeReferences(node: GraphNode, uids: ReadonlySet<string>): Promise<void> {
    await this.rewrite(node, (cur) => {
      const refs = refsOf(cur);
      const kept = refs.filter((r) => !uids.has(r.uid));
      if (kept.length === refs.length) return null;
      const { ownerReferences: _old, ...rest } = cur.metadata;
      return { ...cur, metadata: kept.length > 0 ? { ...rest, ownerReferences: kept } : rest };
    });
  }

  private async removeFinalizer(node: GraphNode, finalizer: string): Promise<void> {
    await this.rewrite(node, (cur) => {
      if (!hasFinalizer(cur, finalizer)) return null;
      const finalizers = (cur.metadata.finalizers ?? []).filter((f) => f !== finalizer);
      const { finalizers: _old, ...rest } = cur.metadata;
      return { ...cur, metadata: finalizers.length > 0 ? { ...rest, finalizers } : rest };
    });
  }

  /**
   * Read-modify-write of the node's object (same uid), retried on conflicts;
   * a deleting object whose last finalizer goes is removed, as the API does.
   */
  private async rewrite(node: GraphNode, change: (cur: KObject) => KObject | null): Promise<void> {
    await retryOnConflict(
      async () => {
        const cur = await this.env.store.get(node.key);
        if (!cur || cur.metadata.uid !== node.uid) return;
        const next = change(cur);
        if (next === null) return;
        const rev = Number(cur.metadata.resourceVersion);
        try {
          if (next.metadata.deletionTimestamp && isFinalized(next)) await this.env.store.delete(node.key, rev);
          else await this.env.store.update(node.key, next, rev);
          return;
        } catch (err) {
          if (err instanceof StoreError && err.code === 'conflict') return RETRY;
          if (err instanceof StoreError && err.code === 'not-found') return;
          throw err;
        }
      },
      () => new Error(`too many conflicts updating ${node.key}`),
    );
  }
}
