// The garbage collector's view of ownership: every stored object of every
// type by key, with nodes for those it may act on, indexed by uid, and the
// reverse index owner uid → dependents, kept from list + watch of the store.
import type { KObject, OwnerReference } from '../../../lib/api/meta.js';
import type { ResourceType } from '../../../lib/registry/types.js';

export interface GraphNode {
  readonly uid: string;
  readonly key: string;
  readonly t: ResourceType;
  readonly obj: KObject;
}

/** What remove took out: the object's uid, and its node when it had one. */
export interface Removed {
  readonly uid: string;
  readonly node: GraphNode | undefined;
}

export class OwnershipGraph {
  /**
   * Nodes only of objects the collector may act on: those with owner references (dependents) or being
   * deleted (an owner's foreground or orphan finalizer). Any other object is only its key's uid below:
   * most objects own nothing and are owned by nothing, and a node and its entry for each were ~65 B of
   * heap per stored object (docs/decisions/2026-11-30-heap-per-object.md).
   */
  private readonly nodes = new Map<string, GraphNode>();
  private readonly uidByKey = new Map<string, string>();
  private readonly dependents = new Map<string, Set<string>>();

  get(uid: string): GraphNode | undefined {
    return this.nodes.get(uid);
  }

  /** Adds or replaces the object stored under key; returns the uid it had before (undefined when new). */
  upsert(key: string, t: ResourceType, obj: KObject): string | undefined {
    const uid = obj.metadata.uid;
    if (!uid) return undefined;
    const prevUid = this.uidByKey.get(key);
    if (prevUid !== undefined) this.unlink(key, prevUid);
    this.uidByKey.set(key, uid);
    const refs = refsOf(obj);
    if (refs.length === 0 && obj.metadata.deletionTimestamp === undefined) return prevUid;
    this.nodes.set(uid, { uid, key, t, obj });
    for (const ref of refs) {
      let set = this.dependents.get(ref.uid);
      if (!set) this.dependents.set(ref.uid, (set = new Set()));
      set.add(uid);
    }
    return prevUid;
  }

  /** Removes the object under key; returns its uid and node (undefined when it was not there). */
  remove(key: string): Removed | undefined {
    const uid = this.uidByKey.get(key);
    return uid === undefined ? undefined : { uid, node: this.unlink(key, uid) };
  }

  /** Every key, copied (a full resync drops those no longer listed while walking them). */
  keys(): string[] {
    return [...this.uidByKey.keys()];
  }

  /** Live dependents of an owner uid. */
  dependentsOf(ownerUid: string): GraphNode[] {
    return [...(this.dependents.get(ownerUid) ?? [])].map((u) => this.nodes.get(u)).filter((n): n is GraphNode => n !== undefined);
  }

  /** The nodes (objects with references or being deleted; the others have nothing to collect). */
  all(): IterableIterator<GraphNode> {
    return this.nodes.values();
  }

  /** Drops key's uid and that uid's node; returns the node. */
  private unlink(key: string, uid: string): GraphNode | undefined {
    this.uidByKey.delete(key);
    const node = this.nodes.get(uid);
    if (!node) return undefined;
    this.nodes.delete(uid);
    for (const ref of refsOf(node.obj)) {
      const set = this.dependents.get(ref.uid);
      set?.delete(uid);
      if (set?.size === 0) this.dependents.delete(ref.uid);
    }
    return node;
  }
}

export function refsOf(obj: KObject): OwnerReference[] {
  const refs = obj.metadata.ownerReferences;
  return Array.isArray(refs) ? refs.filter((r) => r && typeof r.uid === 'string' && r.uid !== '') : [];
}

export function hasFinalizer(obj: KObject, f: string): boolean {
  return (obj.metadata.finalizers ?? []).includes(f);
}
