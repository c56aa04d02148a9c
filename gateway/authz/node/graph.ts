// The node authorizer's graph, kept as reverse indexes instead of a general
// graph: which nodes run a pod that references a given secret, config map,
// claim or service account (counted, so a second pod keeps the edge when the
// first goes), and which claim a persistent volume is bound to. A question
// "may node n read secret s" is then a few map lookups, never a scan.
import type { KObject } from '../../../lib/api/meta.js';
import { podRefs, pvRefs, type PvRefs } from '../../../lib/node/refs.js';

export type VertexKind = 'pod' | 'secret' | 'configmap' | 'pvc' | 'pv' | 'serviceaccount';
type RefKind = 'secret' | 'configmap' | 'pvc' | 'serviceaccount';

interface PodEntry {
  readonly node: string;
  /** [kind, namespace/name] pairs this pod contributes. */
  readonly edges: ReadonlyArray<readonly [RefKind, string]>;
}

export class NodeGraph {
  private readonly pods = new Map<string, PodEntry>();
  /** kind → namespace/name → node → number of pods on that node referencing it. */
  private readonly refs = new Map<RefKind, Map<string, Map<string, number>>>(
    (['secret', 'configmap', 'pvc', 'serviceaccount'] as const).map((k) => [k, new Map()]),
  );
  private readonly pvs = new Map<string, PvRefs>();
  /** namespace/name of a secret → persistent volumes that reference it. */
  private readonly pvsBySecret = new Map<string, Set<string>>();

  /** Adds or replaces a pod; unbound pods (no spec.nodeName) give no edges. */
  setPod(pod: KObject): void {
    const key = `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
    this.deletePodKey(key);
    const spec = pod['spec'] as { nodeName?: unknown } | undefined;
    const node = typeof spec?.nodeName === 'string' ? spec.nodeName : '';
    if (node === '') return;
    const ns = pod.metadata.namespace ?? '';
    const r = podRefs(pod);
    const edges: Array<readonly [RefKind, string]> = [
      ...r.secrets.map((n) => ['secret', `${ns}/${n}`] as const),
      ...r.configmaps.map((n) => ['configmap', `${ns}/${n}`] as const),
      ...r.pvcs.map((n) => ['pvc', `${ns}/${n}`] as const),
      ['serviceaccount', `${ns}/${r.serviceAccount}`] as const,
    ];
    for (const [kind, ref] of edges) this.count(kind, ref, node, +1);
    this.pods.set(key, { node, edges });
  }

  deletePod(namespace: string, name: string): void {
    this.deletePodKey(`${namespace}/${name}`);
  }

  setPv(pv: KObject): void {
    const name = pv.metadata.name ?? '';
    this.deletePv(name);
    const r = pvRefs(pv);
    if (r.claim === '') return;
    this.pvs.set(name, r);
    for (const s of r.secrets) {
      let set = this.pvsBySecret.get(s);
      if (!set) this.pvsBySecret.set(s, (set = new Set()));
      set.add(name);
    }
  }

  deletePv(name: string): void {
    const old = this.pvs.get(name);
    if (!old) return;
    this.pvs.delete(name);
    for (const s of old.secrets) {
      const set = this.pvsBySecret.get(s);
      set?.delete(name);
      if (set?.size === 0) this.pvsBySecret.delete(s);
    }
  }

  /** Replaces every pod (after a re-list). */
  resetPods(pods: readonly KObject[]): void {
    for (const key of [...this.pods.keys()]) this.deletePodKey(key);
    for (const p of pods) this.setPod(p);
  }

  resetPvs(pvs: readonly KObject[]): void {
    for (const name of [...this.pvs.keys()]) this.deletePv(name);
    for (const p of pvs) this.setPv(p);
  }

  /** Whether the object is related to the node: node ← pod ← {secret, configmap, pvc, sa}, node ← pod ← pvc ← pv ← secret. */
  hasPath(node: string, kind: VertexKind, namespace: string, name: string): boolean {
    return this.pathOf(node, kind, namespace, name) !== undefined;
  }

  /**
   * The path from an object to the node, as `kind namespace/name` steps (the
   * pods are counted, not named: the indexes keep counts); undefined = none.
   */
  pathOf(node: string, kind: VertexKind, namespace: string, name: string): string[] | undefined {
    const key = `${namespace}/${name}`;
    switch (kind) {
      case 'pod':
        return this.pods.get(key)?.node === node ? [`pod ${key}`, `node ${node}`] : undefined;
      case 'pv':
        return this.pvPath(node, name);
      case 'secret': {
        const direct = this.refPath(node, 'secret', key);
        if (direct) return direct;
        for (const pv of this.pvsBySecret.get(key) ?? []) {
          const via = this.pvPath(node, pv);
          if (via) return [`secret ${key}`, ...via];
        }
        return undefined;
      }
      default:
        return this.refPath(node, kind, key);
    }
  }

  /** The nodes an object has a path to (who-can candidates; each is then asked as a decision would be). */
  nodesReaching(kind: VertexKind, namespace: string, name: string): string[] {
    const key = `${namespace}/${name}`;
    const viaRef = (k: RefKind, ref: string) => [...(this.refs.get(k)!.get(ref)?.keys() ?? [])];
    const viaPv = (pv: string) => {
      const claim = this.pvs.get(pv)?.claim;
      return claim !== undefined ? viaRef('pvc', claim) : [];
    };
    switch (kind) {
      case 'pod': {
        const n = this.pods.get(key)?.node;
        return n !== undefined ? [n] : [];
      }
      case 'pv':
        return viaPv(name);
      case 'secret':
        return [...new Set([...viaRef('secret', key), ...[...(this.pvsBySecret.get(key) ?? [])].flatMap(viaPv)])];
      default:
        return viaRef(kind, key);
    }
  }

  private refPath(node: string, kind: RefKind, key: string): string[] | undefined {
    const pods = this.refs.get(kind)!.get(key)?.get(node);
    return pods ? [`${kind} ${key}`, `${pods} pod${pods === 1 ? '' : 's'}`, `node ${node}`] : undefined;
  }

  private pvPath(node: string, pv: string): string[] | undefined {
    const claim = this.pvs.get(pv)?.claim;
    const rest = claim !== undefined ? this.refPath(node, 'pvc', claim) : undefined;
    return rest && [`pv ${pv}`, ...rest];
  }

  /** Node of a bound pod, if the graph knows the pod. */
  podNode(namespace: string, name: string): string | undefined {
    return this.pods.get(`${namespace}/${name}`)?.node;
  }

  private deletePodKey(key: string): void {
    const old = this.pods.get(key);
    if (!old) return;
    this.pods.delete(key);
    for (const [kind, ref] of old.edges) this.count(kind, ref, old.node, -1);
  }

  private count(kind: RefKind, ref: string, node: string, delta: number): void {
    const byRef = this.refs.get(kind)!;
    let byNode = byRef.get(ref);
    if (!byNode) byRef.set(ref, (byNode = new Map()));
    const n = (byNode.get(node) ?? 0) + delta;
    if (n > 0) byNode.set(node, n);
    else byNode.delete(node);
    if (byNode.size === 0) byRef.delete(ref);
  }
}
