// The garbage collector's view of ownership: every stored object of every
// type, indexed by uid, with the reverse index owner uid → dependents,
// kept from list + watch of the store.
import type { KObject, OwnerReference } from '../../../lib/api/meta.js';
import type { ResourceType } from '../../../lib/registry/types.js';

export interface GraphNode {
  readonly uid: string;
  readonly key: string;
  readonly t: ResourceType;
  readonly obj: KObject;
}

export class OwnershipGraph {
  private readonly nodes = new Map<string, GraphNode>();
  private readonly uidByKey = new Map<string, string>();
  private readonly dependents = new Map<string, Set<string>>();

  get(uid: string): GraphNode | undefined {
    return this.nodes.get(uid);
  }

  /** Adds or replaces the object stored under key; returns the node it replaced. */
  upsert(key: string, t: ResourceType, obj: KObject): GraphNode | undefined {
    const uid = obj.metadata.uid;
    if (!uid) return undefined;
    const prevUid = this.uidByKey.get(key);
    const prev = prevUid === undefined ? undefined : this.nodes.get(prevUid);
    if (prev) this.unlink(prev);
    const node: GraphNode = { uid, key, t, obj };
    this.nodes.set(uid, node);
    this.uidByKey.set(key, uid);
    for (const ref of refsOf(obj)) {
      let set = this.dependents.get(ref.uid);
      if (!set) this.dependents.set(ref.uid, (set = new Set()));
      set.add(uid);
    }
    return prev;
  }

  /** Removes the object under key; returns its node. */
  remove(key: string): GraphNode | undefined {
    const uid = this.uidByKey.get(key);
    const node = uid === undefined ? undefined : this.nodes.get(uid);
    if (node) this.unlink(node);
    return node;
  }

  /** Every key, copied (a full resync drops those no longer listed while walking them). */
  keys(): string[] {
    return [...this.uidByKey.keys()];
  }

  /** Live dependents of an owner uid. */
  dependentsOf(ownerUid: string): GraphNode[] {
    return [...(this.dependents.get(ownerUid) ?? [])].map((u) => this.nodes.get(u)).filter((n): n is GraphNode => n !== undefined);
  }

  all(): IterableIterator<GraphNode> {
    return this.nodes.values();
  }

  private unlink(node: GraphNode): void {
    this.nodes.delete(node.uid);
    if (this.uidByKey.get(node.key) === node.uid) this.uidByKey.delete(node.key);
    for (const ref of refsOf(node.obj)) {
      const set = this.dependents.get(ref.uid);
      set?.delete(node.uid);
      if (set?.size === 0) this.dependents.delete(ref.uid);
    }
  }
}

export function refsOf(obj: KObject): OwnerReference[] {
  const refs = obj.metadata.ownerReferences;
  return Array.isArray(refs) ? refs.filter((r) => r && typeof r.uid === 'string' && r.uid !== '') : [];
}

export function hasFinalizer(obj: KObject, f: string): boolean {
  return (obj.metadata.finalizers ?? []).includes(f);
}
